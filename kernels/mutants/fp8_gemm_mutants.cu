// The FP8 GEMM mutants: the real naive template with one mutation each (see fp8_gemm_mutants.hpp
// and fp8_naive::mutation).
#include "kernels/fp8/naive.cuh"
#include "kernels/mutants/fp8_gemm_mutants.hpp"

namespace fusebench::kernels::mutants {

void launch_fp8_gemm_per_tensor_scale(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale,
                                      const std::uint8_t* b, const float* b_scale, void* d, void* workspace,
                                      std::size_t workspace_bytes, cudaStream_t stream) {
    fp8_naive::launch<fp8_naive::mut_per_tensor_scale>(s, a, a_scale, b, b_scale, d, workspace, workspace_bytes, stream);
}
void launch_fp8_gemm_transposed_b_scale(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale,
                                        const std::uint8_t* b, const float* b_scale, void* d, void* workspace,
                                        std::size_t workspace_bytes, cudaStream_t stream) {
    fp8_naive::launch<fp8_naive::mut_transposed_b_scale>(s, a, a_scale, b, b_scale, d, workspace, workspace_bytes, stream);
}
void launch_fp8_gemm_e5m2_decode(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale,
                                 const std::uint8_t* b, const float* b_scale, void* d, void* workspace,
                                 std::size_t workspace_bytes, cudaStream_t stream) {
    fp8_naive::launch<fp8_naive::mut_e5m2_decode>(s, a, a_scale, b, b_scale, d, workspace, workspace_bytes, stream);
}

}  // namespace fusebench::kernels::mutants
