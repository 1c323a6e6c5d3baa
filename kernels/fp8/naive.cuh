// The naive FP8 GEMM's body, templated on a mutation so that the verifier's self-test
// (kernels/mutants/fp8_gemm_mutants.cu) breaks exactly one thing of the real design. The real
// variant (gemm_naive.cu) instantiates mut_none. Included by those two files only.
#pragma once

#include "kernels/common/cublas_handle.hpp"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/workspace.hpp"
#include "kernels/fp8/gemm.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace fusebench::kernels::fp8_naive {

enum mutation : int {
    mut_none = 0,
    mut_per_tensor_scale = 1,  // every block scaled by the first block's scale (per tensor, where per block is declared)
    mut_transposed_b_scale = 2,  // b_scale [n / 128, k / 128] read as if stored [k / 128, n / 128]
    mut_e5m2_decode = 3,        // the E4M3 bytes decoded as E5M2
};

inline std::size_t blocks_of(std::size_t x) { return (x + fp8_gemm_block - 1) / fp8_gemm_block; }

inline std::size_t workspace_bytes(const fp8_gemm_shape& s) {
    return align256(s.m * s.k * 2) + align256(s.n * s.k * 2);
}

template <int Mut>
__device__ __forceinline__ float decode(std::uint8_t code) {
    const __half_raw h = __nv_cvt_fp8_to_halfraw(code, Mut == mut_e5m2_decode ? __NV_E5M2 : __NV_E4M3);
    return __half2float(__half(h));
}

// out[r, c] = bf16(decode(code[r, c]) * scale[(r / row_block) * kb + c / 128]): row_block 1 for
// the activations' 1 x 128 runs, 128 for the weights' tiles. One thread per element, a grid-stride
// loop; the scale index is the only thing the two operands differ in.
template <int Mut>
__global__ void dequantize_bf16(const std::uint8_t* __restrict__ code, const float* __restrict__ scale, std::size_t rows,
                                std::size_t cols, std::size_t row_block, bool transposable,
                                __nv_bfloat16* __restrict__ out) {
    const std::size_t kb = (cols + fp8_gemm_block - 1) / fp8_gemm_block;
    const std::size_t total = rows * cols;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t r = i / cols, c = i % cols;
        std::size_t si = (r / row_block) * kb + c / fp8_gemm_block;
        if constexpr (Mut == mut_per_tensor_scale) si = 0;
        if constexpr (Mut == mut_transposed_b_scale) {
            if (transposable) si = (c / fp8_gemm_block) * ((rows + row_block - 1) / row_block) + r / row_block;
        }
        out[i] = __float2bfloat16_rn(decode<Mut>(code[i]) * scale[si]);
    }
}

template <int Mut>
void launch(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale, const std::uint8_t* b,
            const float* b_scale, void* d, void* workspace, std::size_t ws_bytes, cudaStream_t stream) {
    if (s.m == 0 || s.n == 0 || s.k == 0) throw std::invalid_argument("fp8 gemm naive: empty shape");
    if (s.m > 2147483647u || s.n > 2147483647u || s.k > 2147483647u) {
        throw std::invalid_argument("fp8 gemm naive: a dimension over 2^31 - 1 (cuBLAS takes int)");
    }
    if (ws_bytes < workspace_bytes(s)) throw std::invalid_argument("fp8 gemm naive: workspace too small");
    auto* a16 = static_cast<__nv_bfloat16*>(workspace);
    auto* b16 = reinterpret_cast<__nv_bfloat16*>(static_cast<char*>(workspace) + align256(s.m * s.k * 2));
    auto grid_for = [](std::size_t n) {
        const std::size_t g = (n + 255) / 256;
        return static_cast<unsigned>(g < 65536 * 4 ? g : 65536 * 4);
    };
    dequantize_bf16<Mut><<<grid_for(s.m * s.k), 256, 0, stream>>>(a, a_scale, s.m, s.k, 1, false, a16);
    check_launch("fp8 gemm naive: dequantize A");
    dequantize_bf16<Mut><<<grid_for(s.n * s.k), 256, 0, stream>>>(b, b_scale, s.n, s.k, fp8_gemm_block, true, b16);
    check_launch("fp8 gemm naive: dequantize B");

    // Row-major D (m x n) is column-major D^T (n x m) = B A^T: B and A read as column-major
    // k x n and k x m matrices, B transposed.
    cublasHandle_t h = cublas_handle_for_current_device();
    check_cublas(cublasSetStream(h, stream), "cublasSetStream");
    const float one = 1.0f, zero = 0.0f;
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    check_cublas(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b16, CUDA_R_16BF, k, a16, CUDA_R_16BF, k, &zero, d,
                              CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "fp8 gemm naive: cublasGemmEx (bf16, fp32 accumulation)");
}

}  // namespace fusebench::kernels::fp8_naive
