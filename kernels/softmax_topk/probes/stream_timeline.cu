// Diagnostic: where fused_stream's K <= 32 kernel spends a launch (kernels/softmax_topk/NOTES.md,
// "topk8"). Not part of the build. Compiles fused_stream.cu with FUSEBENCH_STREAM_TIMELINE (lane 0 of
// each row's warp writes %globaltimer at the row's start, after its first batch, at an eighth and at
// half of its batches, at the end of the stream, after the row statistics and at the end, plus its
// SM and its append / compaction counts; ptxas: no spills in this build either), launches the library launcher on N(0,
// std^2) logits (cold L2: a 256 MB memset before each launch), prints the launch's time (events,
// median of 5 launches without stamps) and, for the launch with stamps, the distribution of each
// point over the rows (us from the earliest row start), the time of each phase per row, and the
// row ends grouped by how many rows their SM held, and the balance report (balance_report below: how far
// apart the rows of a block and of an SM end, and what sharing the work would bound). Build by hand on a GPU machine from the root:
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. \
//        kernels/softmax_topk/probes/stream_timeline.cu -o stream_timeline
//   ./stream_timeline f32|bf16|f16 rows V K std
#define FUSEBENCH_STREAM_TIMELINE 1
#include "kernels/softmax_topk/fused_stream.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace fk = fusebench::kernels;

// How unevenly the rows of one block and of one SM progress, and what balancing the work among the warps
// of a block or of an SM could buy (2026-11-27): for each group, the spread of its row ends (max - min)
// and its last end against the end it would have if its warps shared the work at the rate they had
// together, n / sum(1 / T_i) after the group's first start (T_i: row i's start-to-end time; a bound that
// assumes the group's aggregate rate stays as it was while all its rows ran). The kernel ends with the
// latest group, so the last line compares the latest last end with the latest balanced end.
void balance_report(const std::vector<unsigned long long>& tl, std::int64_t rows, unsigned long long t0) {
    struct row_t {
        double start, end;
    };
    std::map<long long, std::vector<row_t>> by_block, by_sm;
    std::vector<std::vector<double>> by_warp(fk::stream_warps);
    for (std::int64_t r = 0; r < rows; ++r) {
        const unsigned long long* x = &tl[r * fk::stream_tl_points];
        if (x[fk::stl_end] == 0 || x[fk::stl_start] == 0) continue;
        const row_t t{(x[fk::stl_start] - t0) * 1e-3, (x[fk::stl_end] - t0) * 1e-3};
        by_block[r / fk::stream_warps].push_back(t);
        by_sm[static_cast<long long>(x[fk::stl_smid])].push_back(t);
        by_warp[r % fk::stream_warps].push_back(t.end);
    }
    auto report = [](const char* what, const std::map<long long, std::vector<row_t>>& groups) {
        std::vector<double> spread, last, bal;
        for (const auto& [id, g] : groups) {
            double s0 = 1e30, lo = 1e30, hi = 0, inv = 0;
            for (const row_t& t : g) {
                s0 = std::min(s0, t.start);
                lo = std::min(lo, t.end);
                hi = std::max(hi, t.end);
                inv += 1.0 / std::max(t.end - t.start, 1e-3);
            }
            spread.push_back(hi - lo);
            last.push_back(hi);
            bal.push_back(s0 + static_cast<double>(g.size()) / inv);
        }
        std::printf("  %-6s %5zu groups: end spread p50 %6.1f p90 %6.1f max %6.1f | last end p50 %6.1f max %6.1f | "
                    "balanced end p50 %6.1f max %6.1f\n",
                    what, groups.size(), pct(spread, 0.5), pct(spread, 0.9), pct(spread, 1.0), pct(last, 0.5),
                    pct(last, 1.0), pct(bal, 0.5), pct(bal, 1.0));
    };
    std::printf("balance (us from the earliest row start):\n");
    report("block", by_block);
    report("SM", by_sm);
    std::printf("  row end by warp of the block p50:");
    for (const auto& e : by_warp) std::printf(" %6.1f", pct(e, 0.5));
    std::printf("\n");
}

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: stream_timeline f32|bf16|f16 rows V K std\n");
        return 2;
    }
    const std::string ty = argv[1];
    const std::int64_t rows = std::atoll(argv[2]), V = std::atoll(argv[3]), K = std::atoll(argv[4]);
    const float sd = static_cast<float>(std::atof(argv[5]));
    if (K > 32) {
        std::fprintf(stderr, "stream_timeline: the stamps are in the K <= 32 kernel only\n");
        return 2;
    }
    const probe_problem pr = make_problem(ty, rows, V, K, sd);
    const fk::softmax_topk_args a = pr.args;
    const std::size_t tl_words = static_cast<std::size_t>(rows) * fk::stream_tl_points;
    unsigned long long* d_tl = nullptr;
    CK(cudaMalloc(&d_tl, tl_words * 8));
    const double med = time_launches(
        pr, [&] { fk::launch_softmax_topk_fused_stream(a, nullptr); },
        [&](bool stamps) {
            unsigned long long* ptr = stamps ? d_tl : nullptr;
            CK(cudaMemset(d_tl, 0, tl_words * 8));
            CK(cudaMemcpyToSymbol(fk::stream_timeline, &ptr, sizeof(ptr)));
        });
    const double bytes = static_cast<double>(pr.logit_bytes) + static_cast<double>(rows * K * 8);
    std::printf("%s rows %lld V %lld K %lld std %.1f: median %.1f us (events), %.0f GB/s\n", ty.c_str(),
                (long long)rows, (long long)V, (long long)K, sd, med, bytes / med * 1e-3);
    std::vector<unsigned long long> tl(tl_words);
    CK(cudaMemcpy(tl.data(), d_tl, tl.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long t0 = ~0ull;
    for (std::int64_t r = 0; r < rows; ++r) t0 = std::min(t0, tl[r * fk::stream_tl_points + fk::stl_start]);
    constexpr int np = 7;  // time points: stl_start .. stl_end
    const char* names[np] = {"start", "seed", "eighth", "half", "stream", "stats", "end"};
    std::vector<std::vector<double>> at(np);
    std::vector<double> appends, comps;
    std::map<unsigned, int> sm_rows;
    for (std::int64_t r = 0; r < rows; ++r) {
        const unsigned long long* x = &tl[r * fk::stream_tl_points];
        if (x[fk::stl_end] == 0) continue;  // a row without a finite softmax ends elsewhere
        for (int q = 0; q < np; ++q) at[q].push_back(x[q] ? (x[q] - t0) * 1e-3 : -1.0);
        appends.push_back(static_cast<double>(x[fk::stl_appends]));
        comps.push_back(static_cast<double>(x[fk::stl_compactions]));
        ++sm_rows[static_cast<unsigned>(x[fk::stl_smid])];
    }
    std::printf("rows stamped %zu; us from the earliest row start: point p0 p10 p50 p90 p100\n", at[0].size());
    for (int q = 0; q < np; ++q)
        std::printf("  %-6s %7.1f %7.1f %7.1f %7.1f %7.1f\n", names[q], pct(at[q], 0), pct(at[q], 0.1), pct(at[q], 0.5),
                    pct(at[q], 0.9), pct(at[q], 1.0));
    std::printf("phase per row (us) p10 p50 p90:\n");
    for (int q = 1; q < np; ++q) {
        std::vector<double> d;
        for (std::size_t i = 0; i < at[0].size(); ++i)
            if (at[q][i] >= 0 && at[q - 1][i] >= 0) d.push_back(at[q][i] - at[q - 1][i]);
        std::printf("  %-6s -> %-6s %7.2f %7.2f %7.2f\n", names[q - 1], names[q], pct(d, 0.1), pct(d, 0.5), pct(d, 0.9));
    }
    double sa = 0, sc = 0;
    for (std::size_t i = 0; i < appends.size(); ++i) {
        sa += appends[i];
        sc += comps[i];
    }
    std::printf("per row: %.1f warp steps with an append, %.2f compactions\n", sa / appends.size(), sc / comps.size());
    // Row ends by the number of rows their SM held.
    std::map<int, std::vector<double>> by_load;
    std::size_t i = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const unsigned long long* x = &tl[r * fk::stream_tl_points];
        if (x[fk::stl_end] == 0) continue;
        by_load[sm_rows[static_cast<unsigned>(x[fk::stl_smid])]].push_back(at[np - 1][i]);
        ++i;
    }
    std::printf("row end by rows on the SM: rows/SM SMs p50 p100 (us)\n");
    for (const auto& [load, ends] : by_load)
        std::printf("  %3d %4zu %7.1f %7.1f\n", load, ends.size() / static_cast<std::size_t>(load), pct(ends, 0.5),
                    pct(ends, 1.0));
    balance_report(tl, rows, t0);
    return 0;
}
