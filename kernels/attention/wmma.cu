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
// Launches of fewer query blocks than SMs (decode) split the keys (flash::plan_splits); query heads
// sharing a KV head are packed into one block where they fit (flash::packs_gqa).
constexpr int head_group = 16;

int current_sm_count() {
    int dev = 0, sms = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
    return sms;
}

// What one configuration launches for a shape: GQA packed or not, and the split plan.
struct launch_view {
    bool packed = false;
    flash::split_plan plan;
};
template <int D, int BN, int WARPS, int MT>
launch_view view_of(const attention_shape& s, int sms) {
    launch_view v;
    v.packed = flash::packs_gqa(s, flash::config<D, BN, WARPS, MT>::bm);
    v.plan = flash::plan_splits<D, BN, WARPS, MT>(v.packed ? flash::packed_shape(s) : s, sms);
    return v;
}

template <typename T, int D, int BN, int WARPS, int MT, bool QREG>
std::size_t run_config(const attention_shape& s, const flash::params* base, void* ws, std::size_t ws_bytes,
                       cudaStream_t stream) {
    const launch_view v = view_of<D, BN, WARPS, MT>(s, current_sm_count());
    if (base == nullptr) return v.plan.workspace_bytes;  // sizing only
    if (v.plan.splits > 1 && (ws == nullptr || ws_bytes < v.plan.workspace_bytes)) {
        throw std::invalid_argument("attention wmma: this shape splits the keys and needs a workspace of " +
                                    std::to_string(v.plan.workspace_bytes) +
                                    " bytes (attention_wmma_workspace_bytes), got " + std::to_string(ws == nullptr ? 0 : ws_bytes));
    }
    flash::params p = *base;
    p.head_group = head_group;
    if (v.packed) flash::pack_params(p, s);
    flash::launch<T, D, BN, WARPS, MT, QREG, flash::mut_none>(p, s.batch, stream, check_call, v.plan, ws);
    return v.plan.workspace_bytes;
}

// The configuration per head_dim; base == nullptr only sizes the workspace.
template <typename T>
std::size_t dispatch(const attention_shape& s, const flash::params* base, void* ws, std::size_t ws_bytes, cudaStream_t stream) {
    switch (s.head_dim) {
        case 64: return run_config<T, 64, 64, 4, 2, true>(s, base, ws, ws_bytes, stream);
        case 128: return run_config<T, 128, 128, 8, 1, true>(s, base, ws, ws_bytes, stream);
        case 256: return run_config<T, 256, 64, 8, 1, false>(s, base, ws, ws_bytes, stream);
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
    return dispatch<__nv_bfloat16>(s, nullptr, nullptr, 0, nullptr);
}

void launch_attention_wmma(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                           float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
    validate_attention_shape(s, type);
    if (const char* why = attention_wmma_unsupported(s, type)) throw std::invalid_argument(std::string("attention wmma: ") + why);
    const flash::params p = flash::make_params(s, q, k, v, o, lse);
    if (type == elem::bf16) {
        dispatch<__nv_bfloat16>(s, &p, workspace, workspace_bytes, stream);
    } else {
        dispatch<__half>(s, &p, workspace, workspace_bytes, stream);
    }
}

}  // namespace fusebench::kernels
