// Diagnostic (not part of the build): the DRAM rate of the K > 256 wide kernel's read order without
// its selection work. Warps take rows in a loop (16 a block, one block per SM, as
// softmax_topk_stream_wide_kernel), each row read in P phases of warp steps (512 bytes of fp32 a
// step), U steps a batch; per configuration: the steps of a batch P apart (the kernel's order) or
// consecutive (runs of U steps, the runs stratified instead), the next batch's loads issued before
// this one is consumed or not (pipe), and a busy loop of `spin` iterations a batch standing in for
// the vote and the drains. Events, cold L2 (256 MB memset before each), median of 5.
//   nvcc -O3 -std=c++20 -arch=sm_90 -I. kernels/softmax_topk/probes/stream_pattern.cu -o stream_pattern
//   ./stream_pattern rows V warps_per_block
#include "kernels/common/probe_check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>


__device__ __forceinline__ float fold4(float a, float4 v, int spin) {
    float s = a + v.x * 1.0001f + v.y - v.z * 0.5f + v.w;
    for (int k = 0; k < spin; ++k) s = s * 0.99991f + 1e-7f;
    return s;
}

template <int U, bool Consec, bool Pipe>
__global__ void __launch_bounds__(1024, 1) read_rows(const float4* __restrict__ x, long rows, int nvec, int P, int spin,
                                                     float* __restrict__ out) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    const int nfull = nvec / 32;
    float acc = 0.f;
    for (long r = static_cast<long>(blockIdx.x) * nw + warp; r < rows; r += static_cast<long>(gridDim.x) * nw) {
        const float4* vrow = x + r * nvec + lane;
        // Units: Consec: runs of U consecutive steps; otherwise single steps. A batch: U steps.
        const int nunits = Consec ? nfull / U : nfull;
        const int ustep = Consec ? U : 1;
        for (int phi = 0; phi < P; ++phi) {
            const int n = (nunits - phi + P - 1) / P;  // units in this phase
            // batches: Consec: one unit (U steps in a row); else U units P apart
            const int nb = Consec ? n : (n + U - 1) / U;
            auto addr = [&](int b, int u) -> const float4* {
                const int unit = Consec ? phi + b * P : phi + (b * U + u) * P;
                const int step = Consec ? unit * ustep + u : unit;
                return vrow + step * 32;
            };
            auto ok = [&](int b, int u) { return Consec ? b < nb : (b * U + u) < n; };
            float4 v[U];
            if (Pipe) {
#pragma unroll
                for (int u = 0; u < U; ++u) v[u] = ok(0, u) ? *addr(0, u) : make_float4(0, 0, 0, 0);
            }
            for (int b = 0; b < nb; ++b) {
                float4 nx[U];
                if (Pipe) {
#pragma unroll
                    for (int u = 0; u < U; ++u) nx[u] = ok(b + 1, u) ? *addr(b + 1, u) : make_float4(0, 0, 0, 0);
                } else {
#pragma unroll
                    for (int u = 0; u < U; ++u) v[u] = ok(b, u) ? *addr(b, u) : make_float4(0, 0, 0, 0);
                }
#pragma unroll
                for (int u = 0; u < U; ++u) acc = fold4(acc, v[u], spin);
                // a warp-wide step as the vote has
                acc += __shfl_xor_sync(0xffffffffu, acc, 1) * 1e-9f;
                if (Pipe) {
#pragma unroll
                    for (int u = 0; u < U; ++u) v[u] = nx[u];
                }
            }
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int U, bool Consec, bool Pipe>
double run(const float4* x, long rows, int nvec, int P, int spin, int nw, float* out, void* flush, int sms) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int rep = 0; rep < 6; ++rep) {
        CK(cudaMemset(flush, rep, 256u << 20));
        CK(cudaEventRecord(e0));
        read_rows<U, Consec, Pipe><<<sms, 32 * nw>>>(x, rows, nvec, P, spin, out);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (rep > 0) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e3;
}

int main(int argc, char** argv) {
    const long rows = argc > 1 ? std::atol(argv[1]) : 4096;
    const long V = argc > 2 ? std::atol(argv[2]) : 50257;
    const int nw = argc > 3 ? std::atoi(argv[3]) : 16;
    const int nvec = static_cast<int>(V / 4);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float4* x = nullptr;
    float* out = nullptr;
    void* flush = nullptr;
    const size_t bytes = static_cast<size_t>(rows) * nvec * 16;
    CK(cudaMalloc(&x, bytes));
    CK(cudaMemset(x, 0, bytes));
    CK(cudaMalloc(&out, static_cast<size_t>(sms) * 1024 * 4));
    CK(cudaMalloc(&flush, 256u << 20));
    const double floor_us = bytes / 3.01e6;
    auto pr = [&](const char* what, int P, int spin, double us) {
        std::printf("PATTERN %-22s warps %2d P %2d spin %3d: %7.1f us (%.1f%% of %.1f us at 3010 GB/s)\n", what, nw, P,
                    spin, us, 100.0 * floor_us / us, floor_us);
    };
    for (int spin : {0, 40}) {
        pr("in order U3", 1, spin, run<3, true, false>(x, rows, nvec, 1, spin, nw, out, flush, sms));
        pr("in order U3 pipe", 1, spin, run<3, true, true>(x, rows, nvec, 1, spin, nw, out, flush, sms));
        pr("strided U3 (kernel)", 10, spin, run<3, false, false>(x, rows, nvec, 10, spin, nw, out, flush, sms));
        pr("strided U3 pipe", 10, spin, run<3, false, true>(x, rows, nvec, 10, spin, nw, out, flush, sms));
        pr("strided U6", 10, spin, run<6, false, false>(x, rows, nvec, 10, spin, nw, out, flush, sms));
        pr("runs of 3", 10, spin, run<3, true, false>(x, rows, nvec, 10, spin, nw, out, flush, sms));
        pr("runs of 3 pipe", 10, spin, run<3, true, true>(x, rows, nvec, 10, spin, nw, out, flush, sms));
        pr("runs of 4", 10, spin, run<4, true, false>(x, rows, nvec, 10, spin, nw, out, flush, sms));
    }
    return 0;
}
