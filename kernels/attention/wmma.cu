// Launcher of the fused attention kernel (variant `wmma`); the kernel is kernels/attention/
// flash_mma.cuh.
#include "kernels/attention/attention.hpp"
#include "kernels/attention/flash_mma.cuh"
#include "kernels/common/launch_check.hpp"

#include <stdexcept>
#include <string>

namespace fusebench::kernels {

namespace {

// Configurations measured on an H100 (causal bf16, B=1, H=32, S = 1k .. 16k; scratch sweeps of 15
// configurations, see the README): head_dim 128: 8 warps of 16 query rows, Q fragments kept in
// registers, 128 keys per step; head_dim 64: 4 warps of 32 rows (two m-tiles per warp halve the
// K/V shared-memory reads per MMA), 64 keys; head_dim 256: 8 warps of 16 rows, Q re-read from
// shared memory (its fragments would not fit in registers beside a 16 x 256 accumulator), 64 keys.
// Heads are interleaved in groups of 16 in the launch order.
// Launches of fewer query blocks than SMs (decode) split the keys (flash::plan_splits).
constexpr int head_group = 16;

int current_sm_count() {
    int dev = 0, sms = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
    return sms;
}

flash::split_plan plan_for(const attention_shape& s) {
    const int sms = current_sm_count();
    switch (s.head_dim) {
        case 64: return flash::plan_splits<64, 64, 4, 2>(s, sms);
        case 128: return flash::plan_splits<128, 128, 8, 1>(s, sms);
        case 256: return flash::plan_splits<256, 64, 8, 1>(s, sms);
        default: throw std::invalid_argument("attention wmma: head_dim must be 64, 128 or 256");
    }
}

template <typename T>
void dispatch(const attention_shape& s, flash::params p, const flash::split_plan& plan, void* ws, cudaStream_t stream) {
    p.head_group = head_group;
    switch (s.head_dim) {
        case 64: flash::launch<T, 64, 64, 4, 2, true, flash::mut_none>(p, s.batch, stream, check_call, plan, ws); break;
        case 128: flash::launch<T, 128, 128, 8, 1, true, flash::mut_none>(p, s.batch, stream, check_call, plan, ws); break;
        case 256: flash::launch<T, 256, 64, 8, 1, false, flash::mut_none>(p, s.batch, stream, check_call, plan, ws); break;
        default: throw std::invalid_argument("attention wmma: head_dim must be 64, 128 or 256");
    }
}

}  // namespace

const char* attention_wmma_unsupported(const attention_shape& s, elem type) {
    if (type != elem::bf16 && type != elem::f16) return "bf16 and fp16 only";
    if (s.head_dim != 64 && s.head_dim != 128 && s.head_dim != 256) return "head_dim 64, 128 or 256 only";
    if (static_cast<long long>(s.batch) * s.heads_q * ((s.seq_q + 63) / 64) > 2147483647) {
        return "more than 2^31 - 1 query blocks";
    }
    return nullptr;
}

std::size_t attention_wmma_workspace_bytes(const attention_shape& s, elem type) {
    validate_attention_shape(s, type);
    if (const char* why = attention_wmma_unsupported(s, type)) throw std::invalid_argument(std::string("attention wmma: ") + why);
    return plan_for(s).workspace_bytes;
}

void launch_attention_wmma(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                           float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
    validate_attention_shape(s, type);
    if (const char* why = attention_wmma_unsupported(s, type)) throw std::invalid_argument(std::string("attention wmma: ") + why);
    const flash::split_plan plan = plan_for(s);
    if (plan.splits > 1 && (workspace == nullptr || workspace_bytes < plan.workspace_bytes)) {
        throw std::invalid_argument("attention wmma: this shape splits the keys and needs a workspace of " +
                                    std::to_string(plan.workspace_bytes) + " bytes (attention_wmma_workspace_bytes), got " +
                                    std::to_string(workspace == nullptr ? 0 : workspace_bytes));
    }
    const flash::params p = flash::make_params(s, q, k, v, o, lse);
    if (type == elem::bf16) {
        dispatch<__nv_bfloat16>(s, p, plan, workspace, stream);
    } else {
        dispatch<__half>(s, p, plan, workspace, stream);
    }
}

}  // namespace fusebench::kernels
