// The FP8 attention mutant: the real launcher, handed a wrong scale (see attention_fp8_mutants.hpp).
// The bug sits in what the launch computes from the shape, not in the kernel body: the kernel is
// hopper_fwd.cuh's shared template, whose PTX the bf16 variant shares and which a mutation flag
// would change for both.
#include "kernels/attention/hopper_fp8.hpp"
#include "kernels/mutants/attention_fp8_mutants.hpp"

namespace fusebench::kernels::mutants {

void launch_attention_fp8_scale_doubled(const attention_shape& s, const std::uint8_t* q, const float* q_scale,
                                          const std::uint8_t* k, const float* k_scale, const void* v, void* o, float* lse,
                                          void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
    attention_shape doubled = s;
    doubled.scale = 2.0f * s.scale;
    launch_attention_wgmma_fp8qk(doubled, q, q_scale, k, k_scale, v, o, lse, workspace, workspace_bytes, stream);
}

}  // namespace fusebench::kernels::mutants
