// Diagnostic (not part of the build): where fused_stream's K > 32 kernel spends a launch. Includes a
// copy of fused_stream.cu with stamps written by probes/big_timeline_patch.py (points and counters
// listed there), launches the library launcher on N(0, sd^2) logits (cold L2), prints the launch
// time (events, median of 5 without stamps), the distribution of each point over the rows (us from
// the earliest row start), each phase per row, the counters per row, and the row starts / ends by
// the order in which blocks ran (waves). Build on a GPU machine from the root:
//   python3 kernels/softmax_topk/probes/big_timeline_patch.py kernels/softmax_topk/fused_stream.cu /tmp/tl/fs_tl.cu
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I. -I/tmp/tl \
//        kernels/softmax_topk/probes/stream_big_timeline.cu -o stream_big_timeline
//   ./stream_big_timeline f32|bf16|f16 rows V K std
// With K > 256 parameters (probes/big_params_patch.py run on fs_tl.cu, built with -DBIG_PARAMS):
//   ./stream_big_timeline f32 4096 50257 1024 10 P:r:maxima:cap
#include "fs_tl.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace fk = fusebench::kernels;

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: stream_big_timeline f32|bf16|f16 rows V K std\n");
        return 2;
    }
    const std::string ty = argv[1];
    const std::int64_t rows = std::atoll(argv[2]), V = std::atoll(argv[3]), K = std::atoll(argv[4]);
    const float sd = static_cast<float>(std::atof(argv[5]));
    const probe_problem pr = make_problem(ty, rows, V, K, sd);
    const fk::softmax_topk_args a = pr.args;
#ifdef BIG_PARAMS  // a copy also patched by big_params_patch.py: argv[6] = P:r:maxima:cap
    if (argc > 6 && std::sscanf(argv[6], "%d:%d:%d:%d", &fk::big_params.P, &fk::big_params.r, &fk::big_params.maxima,
                                &fk::big_params.cap) != 4)
        return 2;
#endif
    const std::size_t tl_words = static_cast<std::size_t>(rows) * 16;
    unsigned long long* d_tl = nullptr;
    CK(cudaMalloc(&d_tl, tl_words * 8));
    const double med = time_launches(
        pr, [&] { fk::launch_softmax_topk_fused_stream(a, nullptr); },
        [&](bool stamps) {
            unsigned long long* ptr = stamps ? d_tl : nullptr;
            CK(cudaMemset(d_tl, 0, tl_words * 8));
            CK(cudaMemcpyToSymbol(fk::big_tl, &ptr, sizeof(ptr)));
        });
    std::printf("%s rows %lld V %lld K %lld std %.1f: median %.1f us (events)\n", ty.c_str(), (long long)rows,
                (long long)V, (long long)K, sd, med);
    std::vector<unsigned long long> tl(tl_words);
    CK(cudaMemcpy(tl.data(), d_tl, tl.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long t0 = ~0ull;
    for (std::int64_t r = 0; r < rows; ++r)
        if (tl[r * 16]) t0 = std::min(t0, tl[r * 16]);
    constexpr int np = 6;
    const char* names[np] = {"start", "sample", "stream", "select", "sort", "end"};
    std::vector<std::vector<double>> at(np);
    std::vector<double> cnt[10];
    for (std::int64_t r = 0; r < rows; ++r) {
        const unsigned long long* x = &tl[r * 16];
        for (int q = 0; q < np; ++q) at[q].push_back(x[q] ? (x[q] - t0) * 1e-3 : -1.0);
        for (int c = 0; c < 10; ++c) cnt[c].push_back(static_cast<double>(x[6 + c]));
    }
    std::printf("us from the earliest row start: point p0 p10 p50 p90 p100\n");
    for (int q = 0; q < np; ++q) {
        std::vector<double> v;
        for (double d : at[q])
            if (d >= 0) v.push_back(d);
        std::printf("  %-6s %7.1f %7.1f %7.1f %7.1f %7.1f  (%zu rows)\n", names[q], pct(v, 0), pct(v, 0.1), pct(v, 0.5),
                    pct(v, 0.9), pct(v, 1.0), v.size());
    }
    std::printf("phase per row (us) p10 p50 p90 mean:\n");
    const int from[] = {0, 1, 2, 3, 4, 0};
    const int to[] = {1, 2, 3, 4, 5, 5};
    for (int k = 0; k < 6; ++k) {
        std::vector<double> d;
        double s = 0;
        for (std::size_t i = 0; i < at[0].size(); ++i)
            if (at[to[k]][i] >= 0 && at[from[k]][i] >= 0) {
                d.push_back(at[to[k]][i] - at[from[k]][i]);
                s += d.back();
            }
        std::printf("  %-6s -> %-6s %8.2f %8.2f %8.2f %8.2f\n", names[from[k]], names[to[k]], pct(d, 0.1), pct(d, 0.5),
                    pct(d, 0.9), d.empty() ? 0.0 : s / d.size());
    }
    const char* cn[10] = {"sm", "compactions", "inserted", "drained vectors", "in-order passes", "keys at end",
                          "radix passes", "insert rounds", "bins gave up", "inserted by sample end"};
    for (int c = 1; c < 10; ++c) {
        double s = 0;
        for (double v : cnt[c]) s += v;
        std::printf("per row %-16s mean %8.2f p50 %8.1f p90 %8.1f max %8.1f\n", cn[c], s / rows, pct(cnt[c], 0.5),
                    pct(cnt[c], 0.9), pct(cnt[c], 1.0));
    }
    // Waves: rows by start time (a row starting after the p10 of ends belongs to a later wave).
    std::vector<double> ends;
    for (double d : at[5])
        if (d >= 0) ends.push_back(d);
    const double cut = pct(ends, 0.01) * 0.9;
    std::vector<double> s1, e1, s2, e2;
    for (std::size_t i = 0; i < at[0].size(); ++i) {
        if (at[0][i] < 0) continue;
        if (at[0][i] < cut) { s1.push_back(at[0][i]); e1.push_back(at[5][i]); }
        else { s2.push_back(at[0][i]); e2.push_back(at[5][i]); }
    }
    std::printf("wave 1: %zu rows, start p50 %.1f, end p0 %.1f p50 %.1f p100 %.1f\n", s1.size(), pct(s1, 0.5), pct(e1, 0),
                pct(e1, 0.5), pct(e1, 1));
    std::printf("wave 2: %zu rows, start p0 %.1f p50 %.1f, end p50 %.1f p100 %.1f\n", s2.size(), pct(s2, 0), pct(s2, 0.5),
                pct(e2, 0.5), pct(e2, 1));
    std::map<unsigned long long, int> sm_rows;
    for (double v : cnt[0]) ++sm_rows[static_cast<unsigned long long>(v)];
    std::map<int, int> load;
    for (auto& [sm, n] : sm_rows) ++load[n];
    std::printf("rows per SM: ");
    for (auto& [n, k] : load) std::printf("%d rows x %d SMs; ", n, k);
    std::printf("\n");
    return 0;
}
