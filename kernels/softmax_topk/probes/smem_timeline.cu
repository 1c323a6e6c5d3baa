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
    const std::size_t n = static_cast<std::size_t>(rows * V), esz = bf ? 2 : 4;
    void* d_x = nullptr;
    float* d_p = nullptr;
    std::int32_t* d_i = nullptr;
    void* d_flush = nullptr;
    CK(cudaMalloc(&d_x, n * esz));
    CK(cudaMalloc(&d_p, rows * K * 4));
    CK(cudaMalloc(&d_i, rows * K * 4));
    CK(cudaMalloc(&d_flush, 256u << 20));
    if (bf) fill_normal<<<1024, 256>>>(static_cast<__nv_bfloat16*>(d_x), n, sd, 7);
    else fill_normal<<<1024, 256>>>(static_cast<float*>(d_x), n, sd, 7);
    CK(cudaGetLastError());
    fk::softmax_topk_args a{bf ? fk::elem::bf16 : fk::elem::f32, d_x, d_p, d_i, rows, V, K};
    const int max_blocks = 4096;
    unsigned long long* d_tl = nullptr;
    CK(cudaMalloc(&d_tl, max_blocks * fk::smem_tl_points * 8));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int rep = 0; rep < 6; ++rep) {
        const bool stamps = rep == 5;  // the last launch with the timeline, the others without
        unsigned long long* ptr = stamps ? d_tl : nullptr;
        CK(cudaMemset(d_tl, 0, max_blocks * fk::smem_tl_points * 8));
        CK(cudaMemcpyToSymbol(fk::smem_timeline, &ptr, sizeof(ptr)));
        CK(cudaMemset(d_flush, rep, 256u << 20));
        CK(cudaEventRecord(e0));
        fk::launch_softmax_topk_fused_smem(a, nullptr);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (!stamps) ms.push_back(t);
        else std::printf("with stamps: %.1f us\n", t * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    const double floor_us = static_cast<double>(n * esz) / 3.0e3 / 1e3;  // at 3.0 TB/s
    std::printf("%s rows %lld V %lld K %lld std %.1f: median %.1f us (floor at 3.0 TB/s %.1f us, %.1f%%)\n", argv[1],
                (long long)rows, (long long)V, (long long)K, sd, ms[ms.size() / 2] * 1e3, floor_us,
                100.0 * floor_us / (ms[ms.size() / 2] * 1e3));
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
