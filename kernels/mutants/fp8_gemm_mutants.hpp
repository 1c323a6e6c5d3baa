// FP8 GEMM mutants for the verifier's self-test (suite "mutants"): the real naive FP8 GEMM
// (kernels/fp8/naive.cuh, variant `naive` of fp8_gemm) with one deliberate bug in its dequantize
// step each. Same arguments and workspace as kernels::launch_fp8_gemm_naive. Never use these for
// anything else.
#pragma once

#include "kernels/fp8/gemm.hpp"

namespace fusebench::kernels::mutants {

// 22. Scales applied per tensor where per block is declared: every element of A and B is scaled by
// the first block's scale.
void launch_fp8_gemm_per_tensor_scale(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale,
                                      const std::uint8_t* b, const float* b_scale, void* d, void* workspace,
                                      std::size_t workspace_bytes, cudaStream_t stream);
// 23. The weights' tile scales read transposed: b_scale [n / 128, k / 128] indexed as if stored
// [k / 128, n / 128] (the other major order).
void launch_fp8_gemm_transposed_b_scale(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale,
                                        const std::uint8_t* b, const float* b_scale, void* d, void* workspace,
                                        std::size_t workspace_bytes, cudaStream_t stream);
// 24. The E4M3 bytes decoded as E5M2.
void launch_fp8_gemm_e5m2_decode(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale,
                                 const std::uint8_t* b, const float* b_scale, void* d, void* workspace,
                                 std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace fusebench::kernels::mutants
