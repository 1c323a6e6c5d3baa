// The unfused pipelines' kernels (conv1d.cu's dense and depthwise naive baselines, and
// implicit_gemm_tf32.cu's naive_tf32, the dense naive pipeline on operands rounded to TF32):
// convolution to an fp32 workspace, the channel's bias added in place, the activation written in
// the storage type. Also the element loads / stores and activations conv1d.cu's kernels use.
// Internal linkage (an unnamed namespace): each including file compiles its own instances.
#pragma once

#include "kernels/common/elem_io.cuh"
#include "kernels/common/gelu.cuh"

#include <cstddef>
#include <cstdint>

namespace fusebench::kernels {

namespace {

template <typename T>
__device__ __forceinline__ float ld(const T* p, std::size_t i) { return to_f32(p[i]); }
template <typename T>
__device__ __forceinline__ void st(T* p, std::size_t i, float v) { p[i] = from_f32<T>(v); }

__device__ __forceinline__ float silu(float z) { return z / (1.0f + expf(-z)); }

// Blocks of `threads` covering n items (at least one block).
inline unsigned grid_for(std::size_t n, int threads) {
    const std::size_t b = (n + threads - 1) / threads;
    return static_cast<unsigned>(b == 0 ? 1 : b);
}

// The operands of dense_conv_only as loaded (the naive baseline in its storage precision).
struct operand_as_is {
    __device__ __forceinline__ float operator()(float v) const { return v; }
};
// v rounded to TF32 (cvt.rna.tf32.f32: 10 mantissa bits, nearest, ties away), what the TF32 tensor
// cores take: naive_tf32's operands, and implicit_gemm_tf32's on their way into shared memory.
__device__ __forceinline__ float tf32_rna(float v) {
    std::uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}
struct tf32_operand {
    __device__ __forceinline__ float operator()(float v) const { return tf32_rna(v); }
};

// z[b, o, t] = sum over ci, then over the 3 taps, of op(w) op(x): one fmaf per term in that order
// (the order the naive baselines' error budgets are measured in). Op: how each operand is taken
// before its product (as is, or rounded to TF32 by naive_tf32).
template <typename T, typename Op = operand_as_is>
__global__ void dense_conv_only(const T* x, const T* w, float* z, int batch, int cin, int cout, int length, int stride, int lout) {
    const Op op{};
    const std::size_t n = static_cast<std::size_t>(batch) * cout * lout;
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int t = static_cast<int>(idx % lout);
        const int o = static_cast<int>((idx / lout) % cout);
        const int b = static_cast<int>(idx / (static_cast<std::size_t>(lout) * cout));
        float acc = 0.0f;
        for (int i = 0; i < cin; ++i) {
            const T* xr = x + (static_cast<std::size_t>(b) * cin + i) * length;
            const T* wr = w + (static_cast<std::size_t>(o) * cin + i) * 3;
            for (int k = 0; k < 3; ++k) {
                const int p = t * stride + k - 1;
                if (p >= 0 && p < length) acc = fmaf(op(ld(wr, k)), op(ld(xr, p)), acc);
            }
        }
        z[idx] = acc;
    }
}

template <typename T>
__global__ void add_channel_bias(float* z, const T* bias, std::size_t n, int channels, int length) {
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        z[idx] += ld(bias, (idx / length) % channels);
    }
}

template <typename T, bool GELU>
__global__ void activate(const float* z, T* y, std::size_t n) {
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        st(y, idx, GELU ? gelu_erf_exact(z[idx]) : silu(z[idx]));
    }
}

}  // namespace

}  // namespace fusebench::kernels
