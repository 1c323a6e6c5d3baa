#pragma once
// What the softmax + top-k timeline probes share (diagnostics, not part of the build): the error
// check, the N(0, sd^2) logits generator (a counter-based hash, so every probe fills the same
// inputs for a seed) and a percentile of a sample.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                           \
        }                                                                                           \
    } while (0)

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

// The q-quantile (0..1) of v by the nearest rank; 0 for an empty sample.
inline double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}
