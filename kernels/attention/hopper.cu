// Hopper attention forward (variant `wgmma_tma`, issue 18's first kernel). Versus `wmma` (mma.sync
// 16 x 8 x 16 per warp, cp.async loads by the computing warps, a block-wide barrier per KV tile):
// - wgmma: one instruction covers 64 x N x 16 for a warpgroup and reads its operands straight from
//   128-byte-swizzled shared memory (Q K^T), or P from registers and V through a transposing
//   descriptor (P V): no ldmatrix, far fewer issued instructions per FLOP;
// - TMA: one producer thread loads Q once and K/V tiles into a ring of 2 or 3 stages (full/empty
//   mbarriers per stage, separate for K and V), so the two consumer warpgroups never wait on each other;
// - setmaxnreg: the producer warpgroup gives its registers to the consumers (40 / 232 per thread);
// - the softmax of KV tile j is written to run while P V of tile j - 1 occupies the tensor cores
//   (but the SASS waits for that P V before the softmax: NOTES.md, "not done yet").
// H100, causal bf16 B=1 H=32 D=128, scratch bench (warm L2, CUDA events, medians): 220 / 368 / 526 /
// 625 / 652 TFLOP/s at S = 1k / 2k / 4k / 8k / 16k, against wmma's 194 / 258 / 305 / 280 / 287 in
// the same run.
// - split-KV (flash-decoding) where the grid leaves SMs idle: each query block's KV tiles cut into
//   equal runs, one CTA each, fp32 partials merged in split order by flash::combine_splits; and
//   decode's idle second consumer warpgroup leaves at once. Decode (B=1 H=32, one row against
//   32768 keys, H100 suite): 365.7 us before, 187.3 after (2.87 TB/s; cuDNN 186.7 in the same run).
// - GQA: the query heads of one KV head packed into one block where they fit (decode).
// - tile width (64 or 128 keys) and ring depth (2 or 3 stages) are template parameters: the suite
//   declares the combinations as configurations of the variant.
// - ping-pong (PINGPONG, configurations bm128_bn128_s2_pp, bm128_bn64_s2_pp): the two consumer warpgroups take turns
//   issuing their GEMMs through named barriers, so one's softmax runs under the other's wgmma
//   (H100 default run at a24f77c: 0.4-5.3% faster on the causal squares, 14.7% at head_dim 64);
//   the suite's default since 069b94e.
// - head_dim 256 (issue 18 item 1): the same body with 64-key tiles and 2 stages (192 KB of shared
//   memory), P V on m64n256k16 (a 128-register O accumulator per consumer thread).
//
// wgmma and setmaxnreg exist only for the architecture-specific sm_90a target: CMakeLists.txt adds
// -gencode arch=compute_90a,code=sm_90a to this file, and the project's plain sm_90 pass compiles
// the kernel body away. Which of the two machine codes the loader picks is checked at run time by a
// probe kernel (attention_wgmma_tma_unsupported), never assumed.
#include "kernels/attention/hopper.hpp"
#include "kernels/attention/flash_mma.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/sm90_host.hpp"
#include "kernels/common/workspace.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FUSEBENCH_HOPPER_DEVICE_CODE 1  // hopper_fwd.cuh's kernel body, for the host and sm_90a passes
#endif
#include "kernels/attention/hopper_fwd.cuh"

namespace fusebench::kernels {
namespace hopper {
namespace {

using fa_params = flash::params;
template <int D, int BN, int STAGES>
using tma_config = fwd_config<D, BN, STAGES, false>;

// The body (hopper_fwd.cuh) is shared with wgmma_fp8qk.
template <typename T, int D, int BN, int STAGES, bool PINGPONG>
__global__ void __launch_bounds__(384, 1)
    attention_wgmma_tma_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                               const __grid_constant__ CUtensorMap tm_v, const fa_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    attention_fwd<T, D, BN, STAGES, false, PINGPONG>(tm_q, tm_k, tm_v, p, nullptr, nullptr);
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// 1 where the loader picked this file's sm_90a code for the current device, 0 where it picked the
// plain sm_90 code (or none ran).
__global__ void attention_wgmma_tma_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *out = 1;
#else
    *out = 0;
#endif
}

sm90::sm90a_probe sm90a_code{reinterpret_cast<const void*>(&attention_wgmma_tma_probe_kernel)};

// 3-D tensor map over [bh][seq][D] (innermost first: D, seq, bh), box 64 x rows x 1, 128-byte
// swizzle: a box is one column block of a tile of `rows` rows; rows past seq are zero-filled.

cudaError_t make_map(CUtensorMap* map, const void* ptr, int bh, int seq, int d, int rows, bool f16) {
    if (sm90::tensor_map_encoder() == nullptr) return cudaErrorNotSupported;
    const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq), static_cast<cuuint64_t>(bh)};
    const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * 2, static_cast<cuuint64_t>(seq) * d * 2};  // [bytes]
    const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(rows), 1};
    const CUresult r = sm90::encode_tiled_swizzle128(map, f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
                                                     ptr, dims, strides, box);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

constexpr int block_rows = 128;  // tma_config::bm

wgmma_tma_plan make_plan(const attention_shape& s, const wgmma_tma_options& opt, int sms) {
    wgmma_tma_plan pl;
    pl.packed = flash::packs_gqa(s, block_rows);
    const attention_shape e = pl.packed ? flash::packed_shape(s) : s;
    const long long q_blocks = (e.seq_q + block_rows - 1) / block_rows;
    pl.blocks = q_blocks * e.heads_q * e.batch;
    const int tiles = (s.seq_kv + opt.bn - 1) / opt.bn;
    pl.splits = opt.split_kv ? wgmma_tma_choose_splits(pl.blocks, tiles, sms) : 1;
    if (pl.splits > 1) {
        pl.workspace_bytes = hopper::split_workspace_bytes(pl.splits, static_cast<std::size_t>(s.batch) * s.heads_q * s.seq_q, s.head_dim);
    }
    return pl;
}

int current_sm_count() {
    int dev = 0, sms = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
    return sms;
}

template <typename T, int D, int BN, int STAGES, bool PINGPONG = false>
void launch_config(const attention_shape& s, const wgmma_tma_plan& pl, const void* q, const void* k, const void* v, void* o,
                   float* lse, void* workspace, cudaStream_t stream) {
    using cfg = tma_config<D, BN, STAGES>;
    static_assert(cfg::bm == block_rows, "the plan counts blocks of block_rows rows");
    constexpr bool f16 = std::is_same_v<T, __half>;
    fa_params p = flash::make_params(s, q, k, v, o, lse);
    if (pl.packed) flash::pack_params(p, s);  // heads_q = heads_kv, group = 1, seq_q = group x seq_q rows
    p.q_blocks = (p.seq_q + cfg::bm - 1) / cfg::bm;
    p.bh = s.batch * p.heads_q;
    if (pl.splits > 1) hopper::attach_split_partials(p, pl.splits, workspace, D);
    CUtensorMap mq, mk, mv;
    check_call(make_map(&mq, q, p.bh, p.seq_q, D, cfg::bm, f16), "cuTensorMapEncodeTiled(Q)");
    check_call(make_map(&mk, k, s.batch * s.heads_kv, s.seq_kv, D, BN, f16), "cuTensorMapEncodeTiled(K)");
    check_call(make_map(&mv, v, s.batch * s.heads_kv, s.seq_kv, D, BN, f16), "cuTensorMapEncodeTiled(V)");
    check_call(cudaFuncSetAttribute(attention_wgmma_tma_kernel<T, D, BN, STAGES, PINGPONG>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    cfg::smem_bytes),
               "cudaFuncSetAttribute(attention wgmma_tma shared memory)");
    const dim3 grid(static_cast<unsigned>(p.q_blocks * p.splits), static_cast<unsigned>(p.heads_q), static_cast<unsigned>(s.batch));
    attention_wgmma_tma_kernel<T, D, BN, STAGES, PINGPONG><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(mq, mk, mv, p);
    check_launch("attention wgmma_tma kernel");
    if (p.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        flash::combine_splits<T, D><<<static_cast<unsigned>((rows + 7) / 8), 256, 0, stream>>>(p);
        check_launch("attention wgmma_tma split merge");
    }
}

// The (bn, stages) pairs instantiated per head_dim; the configurations of the suite's variant name
// them. head_dim 256 has one: 64 keys, 2 stages. Q (128 x 256) is 64 KB and a 64-key K or V tile
// 32 KB, so 2 stages take 192 KB of the 227 KB; 128 keys (320 KB) or a third stage (256 KB) do not
// fit. Per consumer thread O is 128 fp32 registers, S 32, P and the previous tile's P 16 each.
// The ping-pong schedule is instantiated for (128, 2) at head_dim 64 and 128 and for (64, 2) at 256.
bool known_tiling(const wgmma_tma_options& opt, int head_dim) {
    if (opt.pingpong) return opt.stages == 2 && opt.bn == (head_dim == 256 ? 64 : 128);
    if (head_dim == 256) return opt.bn == 64 && opt.stages == 2;
    return (opt.bn == 128 && (opt.stages == 2 || opt.stages == 3)) || (opt.bn == 64 && opt.stages == 3);
}

template <typename T, int D>
void dispatch(const attention_shape& s, const wgmma_tma_options& opt, const wgmma_tma_plan& pl, const void* q, const void* k,
              const void* v, void* o, float* lse, void* ws, cudaStream_t stream) {
    if (opt.pingpong) launch_config<T, D, 128, 2, true>(s, pl, q, k, v, o, lse, ws, stream);
    else if (opt.bn == 128 && opt.stages == 2) launch_config<T, D, 128, 2>(s, pl, q, k, v, o, lse, ws, stream);
    else if (opt.bn == 128 && opt.stages == 3) launch_config<T, D, 128, 3>(s, pl, q, k, v, o, lse, ws, stream);
    else launch_config<T, D, 64, 3>(s, pl, q, k, v, o, lse, ws, stream);
}

// head_dim 256: the one tiling of known_tiling, with or without ping-pong (the plan has checked opt).
template <typename T>
void dispatch_d256(const attention_shape& s, const wgmma_tma_options& opt, const wgmma_tma_plan& pl, const void* q, const void* k,
                   const void* v, void* o, float* lse, void* ws, cudaStream_t stream) {
    if (opt.pingpong) launch_config<T, 256, 64, 2, true>(s, pl, q, k, v, o, lse, ws, stream);
    else launch_config<T, 256, 64, 2>(s, pl, q, k, v, o, lse, ws, stream);
}

}  // namespace
}  // namespace hopper

// Split-KV heuristic. A CTA of 384 threads at up to 168 registers each fills an SM's register file
// (launch bounds 384, 1), so `blocks` CTAs keep blocks / sms of the GPU busy in one wave. Where
// that is less than the whole GPU, cutting every block's KV tiles s ways gives blocks x s CTAs of
// 1 / s the work each. The plan takes the smallest s whose wave occupancy, blocks s / (sms
// ceil(blocks s / sms)), reaches occupancy_goal (fewer splits: less partial-O traffic, fewer CTA
// prologues, a shorter merge), else the s of the best occupancy; each split keeps at least
// min_tiles_per_split KV tiles (a short KV is not worth a second kernel) and s <= max_splits.
// Decode on an H100 (132 SMs, B=1 H=32, 32768 keys, 256 tiles of 128): 32 blocks, s = 4, 128 CTAs
// of 64 tiles; GQA decode with 8 KV heads packed: 8 blocks, s = 15.
namespace {
constexpr int min_tiles_per_split = 2;
constexpr int max_splits = 64;
constexpr double occupancy_goal = 0.85;
}  // namespace

int wgmma_tma_choose_splits(long long blocks, int tiles, int sms) {
    if (sms <= 0 || blocks <= 0 || blocks >= sms) return 1;
    const int most = std::min(max_splits, tiles / min_tiles_per_split);
    int best = 1;
    double best_occupancy = 0;
    for (int s = 1; s <= most; ++s) {
        const long long ctas = blocks * s;
        const long long waves = (ctas + sms - 1) / sms;
        const double occupancy = static_cast<double>(ctas) / static_cast<double>(waves * sms);
        if (occupancy >= occupancy_goal) return s;
        if (occupancy > best_occupancy) {
            best = s;
            best_occupancy = occupancy;
        }
    }
    return best;
}

const char* wgmma_tma_tiling_unsupported(int head_dim, const wgmma_tma_options& opt) {
    if (head_dim != 64 && head_dim != 128 && head_dim != 256) return "head_dim 64, 128 or 256 only";
    if (hopper::known_tiling(opt, head_dim)) return nullptr;
    if (opt.pingpong) return "the ping-pong schedule runs (bn, stages) = (128, 2) at head_dim 64 and 128, (64, 2) at 256";
    return head_dim == 256 ? "head_dim 256 runs (bn, stages) = (64, 2) only (128 keys or a third stage exceed 227 KB of shared memory)"
                           : "(bn, stages) must be (128, 2), (128, 3) or (64, 3) at head_dim 64 and 128 ((64, 2) is head_dim 256's)";
}

const char* attention_wgmma_tma_unsupported(const attention_shape& s, elem type, const wgmma_tma_options& opt) {
    if (type != elem::bf16 && type != elem::f16) return "bf16 and fp16 only";
    if (const char* why = wgmma_tma_tiling_unsupported(s.head_dim, opt)) return why;
    if (s.heads_q > 65535 || s.batch > 65535) return "more than 65535 heads or batches (grid y/z limits)";
    return hopper::sm90a_code.current_device_unsupported();
}

wgmma_tma_plan attention_wgmma_tma_plan(const attention_shape& s, elem type, const wgmma_tma_options& opt) {
    validate_attention_shape(s, type);
    if (const char* why = attention_wgmma_tma_unsupported(s, type, opt)) {
        throw std::invalid_argument(std::string("attention wgmma_tma: ") + why);
    }
    return hopper::make_plan(s, opt, hopper::current_sm_count());
}

std::size_t attention_wgmma_tma_workspace_bytes(const attention_shape& s, elem type, const wgmma_tma_options& opt) {
    return attention_wgmma_tma_plan(s, type, opt).workspace_bytes;
}

void launch_attention_wgmma_tma(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                                float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
                                const wgmma_tma_options& opt) {
    const wgmma_tma_plan pl = attention_wgmma_tma_plan(s, type, opt);
    if (pl.splits > 1 && (workspace == nullptr || workspace_bytes < pl.workspace_bytes)) {
        throw std::invalid_argument("attention wgmma_tma: this shape splits the keys " + std::to_string(pl.splits) +
                                    " ways and needs a workspace of " + std::to_string(pl.workspace_bytes) +
                                    " bytes (attention_wgmma_tma_workspace_bytes), got " +
                                    std::to_string(workspace == nullptr ? 0 : workspace_bytes));
    }
    if (type == elem::bf16) {
        if (s.head_dim == 256) hopper::dispatch_d256<__nv_bfloat16>(s, opt, pl, q, k, v, o, lse, workspace, stream);
        else if (s.head_dim == 128) hopper::dispatch<__nv_bfloat16, 128>(s, opt, pl, q, k, v, o, lse, workspace, stream);
        else hopper::dispatch<__nv_bfloat16, 64>(s, opt, pl, q, k, v, o, lse, workspace, stream);
    } else {
        if (s.head_dim == 256) hopper::dispatch_d256<__half>(s, opt, pl, q, k, v, o, lse, workspace, stream);
        else if (s.head_dim == 128) hopper::dispatch<__half, 128>(s, opt, pl, q, k, v, o, lse, workspace, stream);
        else hopper::dispatch<__half, 64>(s, opt, pl, q, k, v, o, lse, workspace, stream);
    }
}

}  // namespace fusebench::kernels
