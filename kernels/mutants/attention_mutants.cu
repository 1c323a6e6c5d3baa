// The attention mutants: the real fused kernel's template with one mutation flag set each (see
// kernels/mutants/attention_mutants.hpp and flash::mutation).
#include "kernels/attention/flash_mma.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/mutants/attention_mutants.hpp"

#include <stdexcept>

namespace fusebench::kernels::mutants {

namespace {

// The real kernel's head_dim 128 configuration (kernels/attention/wmma.cu) with mutation M.
template <int M>
void launch_mutant(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                   float* lse, cudaStream_t stream) {
    validate_attention_shape(s, type);
    if (s.head_dim != 128) throw std::invalid_argument("attention mutants: head_dim 128 only");
    flash::params p = flash::make_params(s, q, k, v, o, lse);
    p.head_group = 16;
    if (type == elem::bf16) {
        flash::launch<__nv_bfloat16, 128, 128, 8, 1, true, M>(p, s.batch, stream, check_call);
    } else {
        flash::launch<__half, 128, 128, 8, 1, true, M>(p, s.batch, stream, check_call);
    }
}

}  // namespace

void launch_attention_mask_off_by_one(const attention_shape& s, elem type, const void* q, const void* k,
                                      const void* v, void* o, float* lse, cudaStream_t stream) {
    launch_mutant<flash::mut_mask_off_by_one>(s, type, q, k, v, o, lse, stream);
}
void launch_attention_no_scale(const attention_shape& s, elem type, const void* q, const void* k, const void* v,
                               void* o, float* lse, cudaStream_t stream) {
    launch_mutant<flash::mut_no_scale>(s, type, q, k, v, o, lse, stream);
}
void launch_attention_no_rescale(const attention_shape& s, elem type, const void* q, const void* k, const void* v,
                                 void* o, float* lse, cudaStream_t stream) {
    launch_mutant<flash::mut_no_rescale>(s, type, q, k, v, o, lse, stream);
}
void launch_attention_p_fp8(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                            float* lse, cudaStream_t stream) {
    launch_mutant<flash::mut_p_fp8>(s, type, q, k, v, o, lse, stream);
}
void launch_attention_skip_partial_kv_tile(const attention_shape& s, elem type, const void* q, const void* k,
                                           const void* v, void* o, float* lse, cudaStream_t stream) {
    launch_mutant<flash::mut_skip_partial_tile>(s, type, q, k, v, o, lse, stream);
}

}  // namespace fusebench::kernels::mutants
