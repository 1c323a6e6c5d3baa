#pragma once
// What the softmax + top-k timeline probes share (diagnostics, not part of the build): the error
// check, the N(0, sd^2) logits generator (a counter-based hash, so every probe fills the same
// inputs for a seed), the problem on the device, the timed launches and a percentile of a sample.

#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/common/probe_check.hpp"

__device__ __forceinline__ std::uint32_t mix32(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>(z ^ (z >> 31));
}

template <class T> __global__ void fill_normal(T* x, std::size_t n, float sd, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float u1 = (mix32(seed ^ (2 * i)) + 1.0f) * 2.3283064e-10f;
        const float u2 = mix32(seed ^ (2 * i + 1)) * 2.3283064e-10f;
        x[i] = static_cast<T>(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2) * sd);
    }
}

// Ascending rows (issue 22's adversarial order): column c of a row of V holds 20 c / V - 10.
template <class T> __global__ void fill_ascending(T* x, std::size_t n, std::size_t V) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        x[i] = static_cast<T>(20.0f * static_cast<float>(i % V) / static_cast<float>(V) - 10.0f);
}

// The q-quantile (0..1) of v by the nearest rank; 0 for an empty sample.
inline double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

// A probe's problem on the device: rows x V logits of type ty ("f32", "bf16" or "f16") from
// N(0, sd^2) (seed 7; sd < 0: ascending rows instead), room for the top K, and a 256 MB buffer whose memset before a launch leaves
// L2 cold.
struct probe_problem {
    fusebench::kernels::softmax_topk_args args{};
    std::size_t logit_bytes = 0;
    void* flush = nullptr;
    static constexpr std::size_t flush_bytes = 256u << 20;
};
inline probe_problem make_problem(const std::string& ty, std::int64_t rows, std::int64_t V, std::int64_t K, float sd) {
    namespace fk = fusebench::kernels;
    probe_problem pr;
    const fk::elem et = ty == "bf16" ? fk::elem::bf16 : ty == "f16" ? fk::elem::f16 : fk::elem::f32;
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(V);
    pr.logit_bytes = n * (et == fk::elem::f32 ? 4 : 2);
    void* x = nullptr;
    float* p = nullptr;
    std::int32_t* i = nullptr;
    CK(cudaMalloc(&x, pr.logit_bytes));
    CK(cudaMalloc(&p, static_cast<std::size_t>(rows * K) * 4));
    CK(cudaMalloc(&i, static_cast<std::size_t>(rows * K) * 4));
    CK(cudaMalloc(&pr.flush, probe_problem::flush_bytes));
    const auto Vs = static_cast<std::size_t>(V);
    if (et == fk::elem::bf16) {
        if (sd < 0) fill_ascending<<<1024, 256>>>(static_cast<__nv_bfloat16*>(x), n, Vs);
        else fill_normal<<<1024, 256>>>(static_cast<__nv_bfloat16*>(x), n, sd, 7);
    } else if (et == fk::elem::f16) {
        if (sd < 0) fill_ascending<<<1024, 256>>>(static_cast<__half*>(x), n, Vs);
        else fill_normal<<<1024, 256>>>(static_cast<__half*>(x), n, sd, 7);
    } else {
        if (sd < 0) fill_ascending<<<1024, 256>>>(static_cast<float*>(x), n, Vs);
        else fill_normal<<<1024, 256>>>(static_cast<float*>(x), n, sd, 7);
    }
    CK(cudaGetLastError());
    pr.args = fk::softmax_topk_args{et, x, p, i, rows, V, K};
    return pr;
}

// Six cold launches (the flush buffer written before each), timed by events: arm(false) before the
// first five, arm(true) before the sixth, whose time is printed as "with stamps"; returns the median
// of the five in us.
template <class Launch, class Arm> double time_launches(const probe_problem& pr, Launch launch, Arm arm) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int rep = 0; rep < 6; ++rep) {
        const bool stamps = rep == 5;
        arm(stamps);
        CK(cudaMemset(pr.flush, rep, probe_problem::flush_bytes));
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (!stamps) ms.push_back(t);
        else std::printf("with stamps: %.1f us (events)\n", t * 1e3);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e3;
}
