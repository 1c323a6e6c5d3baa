// Diagnostic: where fused_smem's time goes (kernels/softmax_topk/NOTES.md, "v7"). Not part of the
// build. Compiles fused_smem.cu with FUSEBENCH_SMEM_TIMELINE (thread 0 of each block sums the
// %globaltimer time of each phase over its rows), launches the library launcher on N(0, std^2)
// logits (cold L2: a 256 MB memset before each launch), prints the launch's time (events, median of
// 5) and the per-row phase means over the blocks. Build by hand on a GPU machine from the root:
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. \
//        kernels/softmax_topk/probes/smem_timeline.cu -o smem_timeline
//   ./smem_timeline f32|bf16 rows V K std
#define FUSEBENCH_SMEM_TIMELINE 1
#include "kernels/softmax_topk/fused_smem.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace fk = fusebench::kernels;

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: smem_timeline f32|bf16 rows V K std\n");
        return 2;
    }
    const bool bf = std::string(argv[1]) == "bf16";
    const std::int64_t rows = std::atoll(argv[2]), V = std::atoll(argv[3]), K = std::atoll(argv[4]);
    const float sd = static_cast<float>(std::atof(argv[5]));
    const probe_problem pr = make_problem(bf ? "bf16" : "f32", rows, V, K, sd);
    const fk::softmax_topk_args a = pr.args;
    const int max_blocks = 4096;
    unsigned long long* d_tl = nullptr;
    CK(cudaMalloc(&d_tl, max_blocks * fk::smem_tl_points * 8));
    const double med = time_launches(
        pr, [&] { fk::launch_softmax_topk_fused_smem(a, nullptr); },
        [&](bool stamps) {
            unsigned long long* ptr = stamps ? d_tl : nullptr;
            CK(cudaMemset(d_tl, 0, max_blocks * fk::smem_tl_points * 8));
            CK(cudaMemcpyToSymbol(fk::smem_timeline, &ptr, sizeof(ptr)));
        });
    const double floor_us = static_cast<double>(pr.logit_bytes) / 3.0e3 / 1e3;  // at 3.0 TB/s
    std::printf("%s rows %lld V %lld K %lld std %.1f: median %.1f us (floor at 3.0 TB/s %.1f us, %.1f%%)\n", argv[1],
                (long long)rows, (long long)V, (long long)K, sd, med, floor_us, 100.0 * floor_us / med);
    std::vector<unsigned long long> tl(max_blocks * fk::smem_tl_points);
    CK(cudaMemcpy(tl.data(), d_tl, tl.size() * 8, cudaMemcpyDeviceToHost));
    const char* names[] = {"wait", "pass_a", "bar1", "pass_b", "bar2", "ties", "leader"};
    double sum[7] = {}, nrows = 0, ng = 0;
    int blocks = 0;
    for (int b = 0; b < max_blocks; ++b) {
        const unsigned long long* r = &tl[b * fk::smem_tl_points];
        if (r[fk::tl_rows] == 0) continue;
        ++blocks;
        nrows += r[fk::tl_rows];
        ng += r[fk::tl_ng];
        for (int q = 0; q < 7; ++q) sum[q] += r[q];
    }
    std::printf("blocks %d, rows a block %.1f, candidates a row %.1f\n", blocks, nrows / blocks, ng * 1.0 / rows);
    double tot = 0;
    for (int q = 0; q < 7; ++q) tot += sum[q] / nrows;
    for (int q = 0; q < 7; ++q) std::printf("  %-7s %8.3f us a row (%.1f%%)\n", names[q], sum[q] / nrows * 1e-3, 100.0 * sum[q] / nrows / tot);
    std::printf("  total   %8.3f us a row\n", tot * 1e-3);
    return 0;
}
