// Broken copies of kernels/rmsnorm: the v1 block-per-row kernel with one bug at a time (selected
// by a template parameter, so each bug is visible as the one line where it differs), and a
// warp-per-row kernel launched with a truncated grid. See mutants.hpp.
#include "kernels/common/launch_check.hpp"
#include "kernels/common/elem_io.cuh"
#include "kernels/mutants/mutants.hpp"

#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fusebench::kernels::mutants {
using fusebench::kernels::check_launch;
namespace {

// The accumulator is float in the real kernels; mutant 9 makes it the storage type.
__device__ __forceinline__ float acc_zero(float) { return 0.0f; }
__device__ __forceinline__ __half acc_zero(__half) { return __float2half_rn(0.0f); }
__device__ __forceinline__ float add_square(float ss, float f) { return fmaf(f, f, ss); }
__device__ __forceinline__ __half add_square(__half ss, float f) {
    const __half h = __float2half_rn(f);
    return __hfma(h, h, ss);
}
__device__ __forceinline__ float acc_add(float a, float b) { return a + b; }
__device__ __forceinline__ __half acc_add(__half a, __half b) { return __hadd(a, b); }
__device__ __forceinline__ float acc_to_float(float a) { return a; }
__device__ __forceinline__ float acc_to_float(__half a) { return __half2float(a); }

template <class A> __device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = acc_add(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// The real block_sum; Sync = false is mutant 11 (the barrier between the partials' writes and
// reads is missing).
template <bool Sync, class A> __device__ __forceinline__ float block_sum(A v, A* warp_partials) {
    v = warp_sum(v);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) warp_partials[warp] = v;
    if constexpr (Sync) __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    A total = acc_zero(A{});
    for (int w = 0; w < warps; ++w) total = acc_add(total, warp_partials[w]);
    return acc_to_float(total);
}

enum class block_bug { wrong_stride, no_gamma, half_accumulator, missing_sync };

// v1 (fused_block) with bug B. `in_pitch` is the row pitch of x and residual [elements]: the
// real launcher passes hidden.
template <class T, block_bug B>
__global__ void rmsnorm_block_kernel(const T* x, const T* residual, const T* __restrict__ gamma, T* y,
                                     T* residual_out, int hidden, std::size_t in_pitch, float eps) {
    using acc_t = std::conditional_t<B == block_bug::half_accumulator, T, float>;
    __shared__ acc_t partials[32];
    const std::size_t off = std::size_t(blockIdx.x) * hidden;
    const std::size_t in_off = std::size_t(blockIdx.x) * in_pitch;
    acc_t ss = acc_zero(acc_t{});
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
        const T r = from_f32<T>(to_f32(x[in_off + j]) + to_f32(residual[in_off + j]));
        residual_out[off + j] = r;
        ss = add_square(ss, to_f32(r));
    }
    const float total = block_sum<B != block_bug::missing_sync>(ss, partials);
    const float scale = rsqrtf(total / static_cast<float>(hidden) + eps);
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
        if constexpr (B == block_bug::no_gamma) {
            y[off + j] = from_f32<T>(to_f32(residual_out[off + j]) * scale);
        } else {
            y[off + j] = from_f32<T>(to_f32(residual_out[off + j]) * scale * to_f32(gamma[j]));
        }
    }
}

// One row per warp, element accesses, no grid-stride loop.
template <class T>
__global__ void rmsnorm_warp_row_kernel(const T* x, const T* residual, const T* __restrict__ gamma, T* y,
                                        T* residual_out, std::size_t tokens, int hidden, float eps) {
    const std::size_t row = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) >> 5;
    if (row >= tokens) return;  // warp-uniform
    const int lane = threadIdx.x & 31;
    const std::size_t off = row * hidden;
    float ss = 0;
    for (int j = lane; j < hidden; j += 32) {
        const T r = from_f32<T>(to_f32(x[off + j]) + to_f32(residual[off + j]));
        residual_out[off + j] = r;
        const float f = to_f32(r);
        ss = fmaf(f, f, ss);
    }
    const float scale = rsqrtf(warp_sum(ss) / static_cast<float>(hidden) + eps);
    for (int j = lane; j < hidden; j += 32) {
        y[off + j] = from_f32<T>(to_f32(residual_out[off + j]) * scale * to_f32(gamma[j]));
    }
}

void check_shape(std::size_t tokens, std::size_t hidden, const char* who) {
    if (hidden > static_cast<std::size_t>(INT_MAX) || tokens > 0x7FFFFFFFu) {
        throw std::invalid_argument(std::string(who) + ": shape outside the grid limits");
    }
}

template <block_bug B>
void launch_block(elem type, const void* d_x, const void* d_residual, const void* d_gamma, void* d_y,
                  void* d_residual_out, std::size_t tokens, std::size_t hidden, float eps, cudaStream_t stream,
                  const char* who) {
    if (tokens == 0 || hidden == 0) return;
    check_shape(tokens, hidden, who);
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        if constexpr (B == block_bug::half_accumulator && !std::is_same_v<T, __half>) {
            throw std::invalid_argument(std::string(who) + ": written for fp16 only");
        } else {
            // Mutant 3's bug: the pitch in 16-byte vectors where the kernel indexes elements.
            const std::size_t pitch = B == block_bug::wrong_stride ? hidden / (16 / sizeof(T)) : hidden;
            rmsnorm_block_kernel<T, B><<<static_cast<unsigned>(tokens), 256, 0, stream>>>(
                static_cast<const T*>(d_x), static_cast<const T*>(d_residual), static_cast<const T*>(d_gamma),
                static_cast<T*>(d_y), static_cast<T*>(d_residual_out), static_cast<int>(hidden), pitch, eps);
            check_launch(who);
        }
    });
}

}  // namespace

void launch_rmsnorm_warp_drop_last_rows(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                        void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                        float eps, cudaStream_t stream) {
    if (tokens == 0 || hidden == 0) return;
    check_shape(tokens, hidden, "rmsnorm_warp_row_kernel (mutant)");
    constexpr unsigned rows_per_block = 4;
    const unsigned grid = static_cast<unsigned>(tokens / rows_per_block);  // the bug: rounds down
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        rmsnorm_warp_row_kernel<T><<<grid, 32 * rows_per_block, 0, stream>>>(
            static_cast<const T*>(d_x), static_cast<const T*>(d_residual), static_cast<const T*>(d_gamma),
            static_cast<T*>(d_y), static_cast<T*>(d_residual_out), tokens, static_cast<int>(hidden), eps);
        check_launch("rmsnorm_warp_row_kernel (mutant)");
    });
}

void launch_rmsnorm_block_wrong_stride(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                       void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                       float eps, cudaStream_t stream) {
    launch_block<block_bug::wrong_stride>(type, d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps,
                                          stream, "rmsnorm_block_kernel (mutant: wrong stride)");
}

void launch_rmsnorm_block_no_gamma(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                   void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                   float eps, cudaStream_t stream) {
    launch_block<block_bug::no_gamma>(type, d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps,
                                      stream, "rmsnorm_block_kernel (mutant: no gamma)");
}

void launch_rmsnorm_block_half_accumulator(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                           void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                           float eps, cudaStream_t stream) {
    launch_block<block_bug::half_accumulator>(type, d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden,
                                              eps, stream, "rmsnorm_block_kernel (mutant: fp16 accumulator)");
}

void launch_rmsnorm_block_missing_sync(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                       void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                       float eps, cudaStream_t stream) {
    launch_block<block_bug::missing_sync>(type, d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps,
                                          stream, "rmsnorm_block_kernel (mutant: missing barrier)");
}

}  // namespace fusebench::kernels::mutants
