// Hopper attention forward with FP8 Q K^T (variant `wgmma_fp8qk`, issue 19 item 4). Versus
// wgmma_tma (hopper.cu), the kernel it is derived from:
// - Q and K tiles are E4M3 codes (1 byte per element): Q K^T runs as wgmma m64n128k32 e4m3 x e4m3
//   -> f32, 4 instructions per 128-key tile at head_dim 128 instead of 8 bf16 m64n128k16 ones, on
//   tensor cores with twice the bf16 rate; the K tile is half the bytes (16 KB), so the TMA ring
//   moves 48 KB per tile instead of 64 KB. Should buy: Q K^T at up to twice the rate; P V, the
//   softmax and the epilogue are unchanged, so at most ~1.3x over wgmma_tma end to end.
// - q_scale[b, h] * k_scale[b, h_kv] multiplies the softmax scale (one fp32 multiply per CTA): the
//   scores stay in code units, m and l are tracked there, lse = m * scale_eff + ln(l).
// - No GQA packing (rows of one block would need different Q scales).
// The smem tiles: Q [128 rows][128 bytes] and K [128 keys][128 bytes], one 128-byte swizzle atom
// per row (TMA box 128 x rows of uint8, SWIZZLE_128B), K-major as FP8 wgmma requires; V as in
// wgmma_tma (two 64-column bf16 blocks, MN-major for P V). The kernel body is wgmma_tma's
// (hopper_fwd.cuh, FP8QK = true); the sm_90a gencode for this file: CMakeLists.txt.
#include "kernels/attention/hopper_fp8.hpp"
#include "kernels/attention/flash_mma.cuh"
#include "kernels/attention/hopper.hpp"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/sm90_host.hpp"
#include "kernels/common/workspace.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FUSEBENCH_HOPPER_DEVICE_CODE 1  // hopper_fwd.cuh's kernel body, for the host and sm_90a passes
#endif
#include "kernels/attention/hopper_fwd.cuh"

namespace fusebench::kernels {
namespace hopper_fp8 {
namespace {

using fa_params = flash::params;
using T = __nv_bfloat16;

template <int D, int BN, int STAGES>
using fp8_config = hopper::fwd_config<D, BN, STAGES, true>;

// The body (hopper_fwd.cuh) is wgmma_tma's with FP8QK set.
template <int D, int BN, int STAGES>
__global__ void __launch_bounds__(384, 1)
    attention_wgmma_fp8qk_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                                 const __grid_constant__ CUtensorMap tm_v, const fa_params p, const float* __restrict__ q_scale,
                                 const float* __restrict__ k_scale) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    hopper::attention_fwd<T, D, BN, STAGES, true>(tm_q, tm_k, tm_v, p, q_scale, k_scale);
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// 3-D tensor map over [bh][seq][d] elements of `bytes` each, box box_inner x rows x 1, 128-byte
// swizzle (box_inner * bytes = 128: one swizzle atom per row); rows past seq are zero-filled.
cudaError_t make_map(CUtensorMap* map, const void* ptr, CUtensorMapDataType type, int bytes, int bh, int seq, int d,
                     int box_inner, int rows) {
    if (sm90::tensor_map_encoder() == nullptr) return cudaErrorNotSupported;
    const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq), static_cast<cuuint64_t>(bh)};
    const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * bytes, static_cast<cuuint64_t>(seq) * d * bytes};  // [bytes]
    const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(rows), 1};
    const CUresult r = sm90::encode_tiled_swizzle128(map, type, 3, ptr, dims, strides, box);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

constexpr int block_rows = 128;

struct plan {
    int splits = 1;
    std::size_t workspace_bytes = 0;
};

plan make_plan(const attention_shape& s, const wgmma_fp8qk_options& opt) {
    int dev = 0, sms = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
    plan pl;
    const long long blocks = static_cast<long long>((s.seq_q + block_rows - 1) / block_rows) * s.heads_q * s.batch;
    const int tiles = (s.seq_kv + opt.bn - 1) / opt.bn;
    pl.splits = opt.split_kv ? wgmma_tma_choose_splits(blocks, tiles, sms) : 1;
    if (pl.splits > 1) {
        pl.workspace_bytes = hopper::split_workspace_bytes(pl.splits, static_cast<std::size_t>(s.batch) * s.heads_q * s.seq_q, s.head_dim);
    }
    return pl;
}

template <int D, int BN, int STAGES>
void launch_config(const attention_shape& s, const plan& pl, const std::uint8_t* q, const float* q_scale, const std::uint8_t* k,
                   const float* k_scale, const void* v, void* o, float* lse, void* workspace, cudaStream_t stream) {
    using cfg = fp8_config<D, BN, STAGES>;
    static_assert(cfg::bm == block_rows, "the plan counts blocks of block_rows rows");
    fa_params p = flash::make_params(s, q, k, v, o, lse);
    p.q_blocks = (p.seq_q + cfg::bm - 1) / cfg::bm;
    p.bh = s.batch * p.heads_q;
    if (pl.splits > 1) hopper::attach_split_partials(p, pl.splits, workspace, D);
    const int bh_kv = s.batch * s.heads_kv;
    CUtensorMap mq, mk, mv;
    check_call(make_map(&mq, q, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.bh, p.seq_q, D, 128, cfg::bm), "cuTensorMapEncodeTiled(Q e4m3)");
    check_call(make_map(&mk, k, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, bh_kv, s.seq_kv, D, 128, BN), "cuTensorMapEncodeTiled(K e4m3)");
    check_call(make_map(&mv, v, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, bh_kv, s.seq_kv, D, 64, BN), "cuTensorMapEncodeTiled(V)");
    check_call(cudaFuncSetAttribute(attention_wgmma_fp8qk_kernel<D, BN, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    cfg::smem_bytes),
               "cudaFuncSetAttribute(attention wgmma_fp8qk shared memory)");
    const dim3 grid(static_cast<unsigned>(p.q_blocks * p.splits), static_cast<unsigned>(p.heads_q), static_cast<unsigned>(s.batch));
    attention_wgmma_fp8qk_kernel<D, BN, STAGES><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(mq, mk, mv, p, q_scale, k_scale);
    check_launch("attention wgmma_fp8qk kernel");
    if (p.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        flash::combine_splits<T, D><<<static_cast<unsigned>((rows + 7) / 8), 256, 0, stream>>>(p);
        check_launch("attention wgmma_fp8qk split merge");
    }
}

}  // namespace
}  // namespace hopper_fp8

const char* attention_wgmma_fp8qk_unsupported(const attention_shape& s, elem type, const wgmma_fp8qk_options& opt) {
    if (type != elem::bf16) return "bf16 V and O only";
    if (s.head_dim != 128) return "head_dim 128 only (an E4M3 row of 64 needs the 64-byte swizzle, not written yet)";
    if (opt.bn != 128 || (opt.stages != 2 && opt.stages != 3)) return "(bn, stages) must be (128, 2) or (128, 3)";
    // The device checks (compute capability 9.0, the loader picked the sm_90a code) are wgmma_tma's:
    // this file is built with the same gencode flags.
    return attention_wgmma_tma_unsupported(s, type);
}

std::size_t attention_wgmma_fp8qk_workspace_bytes(const attention_shape& s, elem type, const wgmma_fp8qk_options& opt) {
    validate_attention_shape(s, type);
    if (const char* why = attention_wgmma_fp8qk_unsupported(s, type, opt)) {
        throw std::invalid_argument(std::string("attention wgmma_fp8qk: ") + why);
    }
    return hopper_fp8::make_plan(s, opt).workspace_bytes;
}

void launch_attention_wgmma_fp8qk(const attention_shape& s, const std::uint8_t* q, const float* q_scale, const std::uint8_t* k,
                                  const float* k_scale, const void* v, void* o, float* lse, void* workspace,
                                  std::size_t workspace_bytes, cudaStream_t stream, const wgmma_fp8qk_options& opt) {
    validate_attention_shape(s, elem::bf16);
    if (const char* why = attention_wgmma_fp8qk_unsupported(s, elem::bf16, opt)) {
        throw std::invalid_argument(std::string("attention wgmma_fp8qk: ") + why);
    }
    const hopper_fp8::plan pl = hopper_fp8::make_plan(s, opt);
    if (pl.splits > 1 && (workspace == nullptr || workspace_bytes < pl.workspace_bytes)) {
        throw std::invalid_argument("attention wgmma_fp8qk: this shape splits the keys " + std::to_string(pl.splits) +
                                    " ways and needs a workspace of " + std::to_string(pl.workspace_bytes) + " bytes, got " +
                                    std::to_string(workspace == nullptr ? 0 : workspace_bytes));
    }
    if (opt.stages == 2) hopper_fp8::launch_config<128, 128, 2>(s, pl, q, q_scale, k, k_scale, v, o, lse, workspace, stream);
    else hopper_fp8::launch_config<128, 128, 3>(s, pl, q, q_scale, k, k_scale, v, o, lse, workspace, stream);
}

}  // namespace fusebench::kernels
