// The naive FP8 GEMM: dequantize to bf16, then cuBLAS (see gemm.hpp and naive.cuh).
#include "kernels/fp8/naive.cuh"

namespace fusebench::kernels {

std::size_t fp8_gemm_naive_workspace_bytes(const fp8_gemm_shape& s) { return fp8_naive::workspace_bytes(s); }

void launch_fp8_gemm_naive(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale, const std::uint8_t* b,
                           const float* b_scale, void* d, void* workspace, std::size_t workspace_bytes,
                           cudaStream_t stream) {
    fp8_naive::launch<fp8_naive::mut_none>(s, a, a_scale, b, b_scale, d, workspace, workspace_bytes, stream);
}

}  // namespace fusebench::kernels
