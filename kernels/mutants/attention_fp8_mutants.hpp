// FP8 attention mutant for the verifier's self-test (suite "mutants", family attention_fp8): the
// real wgmma_fp8qk kernel (kernels/attention/hopper_fp8.cu) launched with one deliberate bug. Same
// arguments as kernels::launch_attention_wgmma_fp8qk (default options). Never use it for anything
// else.
#pragma once

#include "kernels/attention/attention.hpp"

#include <cstddef>
#include <cstdint>

namespace fusebench::kernels::mutants {

// 25. The effective scale doubled: the kernel computes softmax(2 * scale * q_scale * k_scale *
// (q codes)(k codes)^T) V, as a launcher that folded the softmax scale in twice over would (every
// logit twice its size: a sharper softmax, lse off by O(1) on most rows).
void launch_attention_fp8_scale_doubled(const attention_shape& s, const std::uint8_t* q, const float* q_scale,
                                          const std::uint8_t* k, const float* k_scale, const void* v, void* o, float* lse,
                                          void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace fusebench::kernels::mutants
