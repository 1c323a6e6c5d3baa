// Attention mutants for the verifier's self-test (suite "mutants"): the real fused kernel
// (kernels/attention/flash_mma.cuh, variant `wmma`) instantiated with one deliberate bug each.
// Same arguments as kernels::launch_attention_wmma; head_dim 128 only (std::invalid_argument
// otherwise). Never use these for anything else.
#pragma once

#include "kernels/attention/attention.hpp"

namespace fusebench::kernels::mutants {

// 17. The causal diagonal off by one: row i also sees key i + (seq_kv - seq_q) + 1.
void launch_attention_mask_off_by_one(const attention_shape& s, elem type, const void* q, const void* k,
                                      const void* v, void* o, float* lse, cudaStream_t stream);
// 18. The 1/sqrt(head_dim) scale never applied (logits sqrt(d) times too large).
void launch_attention_no_scale(const attention_shape& s, elem type, const void* q, const void* k, const void* v,
                               void* o, float* lse, cudaStream_t stream);
// 19. The running max updated without rescaling the accumulator and the row sum.
void launch_attention_no_rescale(const attention_shape& s, elem type, const void* q, const void* k, const void* v,
                                 void* o, float* lse, cudaStream_t stream);
// 20. P rounded to fp8 e4m3 before P V.
void launch_attention_p_fp8(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                            float* lse, cudaStream_t stream);
// 21. The last partial KV tile (seq_kv % 128 keys, the head_dim 128 step) never visited.
void launch_attention_skip_partial_kv_tile(const attention_shape& s, elem type, const void* q, const void* k,
                                           const void* v, void* o, float* lse, cudaStream_t stream);

}  // namespace fusebench::kernels::mutants
