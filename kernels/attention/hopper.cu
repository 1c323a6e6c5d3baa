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
#include <type_traits>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FUSEBENCH_HOPPER_DEVICE_CODE 1
#include "kernels/attention/hopper_device.cuh"
#include "kernels/attention/hopper_wgmma.cuh"
#endif

namespace fusebench::kernels {
namespace hopper {
namespace {

// The kernel takes flash::params (flash_mma.cuh), the wmma design's: pointers, heads, group,
// lengths, causal (with causal_rows, the query rows per head once GQA heads are packed), scale,
// q_blocks, and for split-KV splits, bh, part_o and part_lse (the layout flash::combine_splits
// merges). tiles_per_split and head_group are the wmma launch's and stay at their defaults here.
using fa_params = flash::params;

// Tiles: Q [128 rows][D] and K/V [BN keys][D] as D / 64 column blocks of 128-byte rows with the
// 128-byte swizzle: what one TMA box (64 x rows, SWIZZLE_128B) writes and what a wgmma descriptor
// names directly, K-major for Q and K (SBO 1024 = 8 rows), MN-major for V in P V (LBO = one column
// block, SBO = 8 keys). Rows past seq_q / seq_kv arrive as zeros (3-D tensor maps) and are masked,
// so ragged tails need no separate path.
template <int D, int BN, int STAGES>
struct tma_config {
    static constexpr int bm = 128, bn = BN;
    static constexpr int threads = 384;  // warpgroups 0, 1: consumers; warpgroup 2: producer (one thread issues)
    static constexpr int q_bytes = bm * D * 2;
    static constexpr int kv_bytes = bn * D * 2;
    static constexpr int bar_offset = q_bytes + 2 * STAGES * kv_bytes;
    // barriers: full_q, full_k[S], full_v[S], empty_k[S], empty_v[S]
    static constexpr int smem_bytes = bar_offset + 8 * (1 + 4 * STAGES) + 1024;
    static_assert(smem_bytes <= 232448, "more than the 227 KB of shared memory a block may have");
    static_assert(kv_bytes % 1024 == 0 && (BN * 128) % 1024 == 0, "stages and column blocks 1024-byte aligned (swizzle atoms)");
};

template <typename T, int D, int BN, int STAGES>
__global__ void __launch_bounds__(384, 1)
    attention_wgmma_tma_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                               const __grid_constant__ CUtensorMap tm_v, const fa_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using cfg = tma_config<D, BN, STAGES>;
    constexpr int BM = cfg::bm;
    constexpr bool F16 = std::is_same_v<T, __half>;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const std::uint32_t sq_addr = base;
    const std::uint32_t sk_addr = base + cfg::q_bytes;
    const std::uint32_t sv_addr = base + cfg::q_bytes + STAGES * cfg::kv_bytes;
    const std::uint32_t bar = base + cfg::bar_offset;
    const std::uint32_t full_q = bar;
    auto full_k = [&](int s) { return bar + 8 * (1 + s); };
    auto full_v = [&](int s) { return bar + 8 * (1 + STAGES + s); };
    auto empty_k = [&](int s) { return bar + 8 * (1 + 2 * STAGES + s); };
    auto empty_v = [&](int s) { return bar + 8 * (1 + 3 * STAGES + s); };

    const int tid = threadIdx.x;
    // blockIdx.x = (query blocks from the last, the longest under a causal mask) x splits + split.
    const int split = static_cast<int>(blockIdx.x) % p.splits;
    const int m_blk = p.q_blocks - 1 - static_cast<int>(blockIdx.x) / p.splits;
    const int head = blockIdx.y, b = blockIdx.z;
    const int kv_head = head / p.group;
    const int heads_kv = p.heads_q / p.group;
    const int q0 = m_blk * BM;
    const bool packed = p.causal_rows < p.seq_q;  // GQA packing: launch row r is query row r % causal_rows
    const int off = p.seq_kv - p.causal_rows;     // bottom-right causal alignment
    const int q_rows_valid = min(BM, p.seq_q - q0);
    int kv_end = p.seq_kv;
    if (p.causal) kv_end = min(p.seq_kv, min(q0 + q_rows_valid - 1, p.causal_rows - 1) + off + 1);
    // This CTA's tiles: the block's tiles cut into p.splits runs of equal length (fixed
    // boundaries); a run past the block's last tile is empty and writes a neutral partial.
    const int n_all = (kv_end + BN - 1) / BN;
    const int per_split = (n_all + p.splits - 1) / p.splits;
    const int t_begin = min(n_all, split * per_split);
    const int n_tiles = min(n_all, t_begin + per_split) - t_begin;
    // Consumer warpgroups with a row to compute (decode: only the first); the others leave at once
    // and the empty barriers count only the ones that stay.
    const int consumers = q_rows_valid > 64 ? 2 : 1;

    if (tid == 0) {
        mbar_init(full_q, 1);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_k(s), 1);
            mbar_init(full_v(s), 1);
            mbar_init(empty_k(s), 128 * consumers);
            mbar_init(empty_v(s), 128 * consumers);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        fence_proxy_async();
    }
    __syncthreads();

    // The warpgroup's role from a shuffled index: the compiler then knows the branches below are
    // warp-uniform and keeps the consumer loop's counters and barrier addresses in uniform
    // registers. Branching on threadIdx directly (with the early exit of idle consumers) made them
    // per-thread and sank the release of the V stage into the softmax: 4-7% slower on the causal
    // squares (H100, scratch/hopper/ab A/B bench: 1k / 4k / 16k 40.6 / 270.9 / 3568 us against
    // 38.9 / 261.5 / 3462 with the shuffle, and 37.9 / 257.8 / 3432 before split-KV).
    const int role = __shfl_sync(0xffffffffu, tid / 128, 0);  // 0, 1: consumers; 2: producer
    if (role == 2) {
        // Producer: one thread issues every load; rows past the tensor's end arrive as zeros.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 256 && n_tiles > 0) {
            const int bh_q = b * p.heads_q + head, bh_kv = b * heads_kv + kv_head;
            mbar_expect_tx(full_q, cfg::q_bytes);
#pragma unroll
            for (int c = 0; c < D / 64; ++c) tma_load_3d(sq_addr + c * (BM * 128), &tm_q, c * 64, q0, bh_q, full_q);
            for (int t = 0; t < n_tiles; ++t) {
                const int s = t % STAGES;
                const int key0 = (t_begin + t) * BN;
                const std::uint32_t use_parity = ((t / STAGES) & 1) ^ 1;  // the fill t - STAGES was released
                if (t >= STAGES) mbar_wait(empty_k(s), use_parity);
                mbar_expect_tx(full_k(s), cfg::kv_bytes);
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    tma_load_3d(sk_addr + s * cfg::kv_bytes + c * (BN * 128), &tm_k, c * 64, key0, bh_kv, full_k(s));
                if (t >= STAGES) mbar_wait(empty_v(s), use_parity);
                mbar_expect_tx(full_v(s), cfg::kv_bytes);
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    tma_load_3d(sv_addr + s * cfg::kv_bytes + c * (BN * 128), &tm_v, c * 64, key0, bh_kv, full_v(s));
            }
        }
    } else if (role < consumers) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = role;
    const int lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
    const int r_a = wg * 64 + warp_in_wg * 16 + (lane >> 2);
    const int col_q = (lane & 3) * 2;
    const float sl2 = p.scale * 1.4426950408889634f;
    const int first_q = packed ? 0 : q0;  // the block's first query row (packed: any row may be 0)

    auto issue_s = [&](float (&s)[BN / 2], int j) {
        const std::uint32_t k_st = sk_addr + (j % STAGES) * cfg::kv_bytes;
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
            const std::uint64_t da = make_desc(sq_addr + (ks >> 2) * (BM * 128) + wg * (64 * 128) + (ks & 3) * 32, 16, 1024);
            const std::uint64_t db = make_desc(k_st + (ks >> 2) * (BN * 128) + (ks & 3) * 32, 16, 1024);
            wgmma_op<BN, F16>::ss(s, da, db, ks > 0 ? 1 : 0);
        }
    };
    auto issue_pv = [&](float (&o)[D / 2], const std::uint32_t (&pa)[BN / 16][4], int j) {
        const std::uint32_t v_st = sv_addr + (j % STAGES) * cfg::kv_bytes;
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) wgmma_op<D, F16>::rs_tb(o, pa[kk], make_desc(v_st + kk * (16 * 128), BN * 128, 1024), 1);
    };
    // Global tile index g: does some key of it lie past the end or past some row's diagonal?
    auto tile_needs_mask = [&](int g) {
        const int n0 = g * BN;
        return (n0 + BN > p.seq_kv) || (p.causal && n0 + BN - 1 > first_q + off);
    };

    float o_acc[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY};
    float l_run[2] = {0.f, 0.f};

    if (n_tiles > 0) {
    std::uint32_t pa_prev[BN / 16][4];
    mbar_wait(full_q, 0);
    for (int j = 0; j < n_tiles; ++j) {
        mbar_wait(full_k(j % STAGES), (j / STAGES) & 1);
        float s[BN / 2];
        wgmma_fence();
        issue_s(s, j);
        wgmma_commit();
        if (j > 0) {
            mbar_wait(full_v((j - 1) % STAGES), ((j - 1) / STAGES) & 1);
            issue_pv(o_acc, pa_prev, j - 1);
            wgmma_commit();
            wgmma_wait<1>();
        } else {
            wgmma_wait<0>();
        }
        reg_fence(s);
        mbar_arrive(empty_k(j % STAGES));
        std::uint32_t pa[BN / 16][4];
        float alpha[2];
        const int g = t_begin + j;
        softmax_tile<T, BN>(s, pa, m_run, l_run, alpha, tile_needs_mask(g), g * BN, q0 + r_a, col_q, p.seq_kv, p.causal, off,
                            packed, p.causal_rows, sl2);
        wgmma_wait<0>();
        reg_fence(o_acc);
        reg_fence_u(pa_prev);
        if (j > 0) mbar_arrive(empty_v((j - 1) % STAGES));
        scale_rows<D, BN>(o_acc, alpha);
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
            for (int x = 0; x < 4; ++x) pa_prev[kk][x] = pa[kk][x];
    }
    mbar_wait(full_v((n_tiles - 1) % STAGES), ((n_tiles - 1) / STAGES) & 1);
    reg_fence(o_acc);
    wgmma_fence();
    issue_pv(o_acc, pa_prev, n_tiles - 1);
    wgmma_commit();
    wgmma_wait<0>();
    reg_fence(o_acc);
    }  // n_tiles > 0

    // Epilogue: O normalized and rounded, lse = m * scale + ln(l); split: this split's fp32 partial
    // O and lse at [split][batch * heads][row] (flash::combine_splits' layout), a row that saw no
    // key of the split (or an empty split) writing 0 and -inf, which the merge skips.
    const std::size_t rows_total = static_cast<std::size_t>(p.bh) * p.seq_q;
    const std::size_t row0 = (static_cast<std::size_t>(b) * p.heads_q + head) * p.seq_q + q0;
    T* go = static_cast<T*>(p.o) + row0 * D;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float l = l_run[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int row = r_a + h * 8;
        if (row >= q_rows_valid) continue;
        if (p.splits > 1) {
            const bool empty = l == 0.f;
            const float inv = empty ? 0.f : 1.f / l;
            const std::size_t prow = static_cast<std::size_t>(split) * rows_total + row0 + row;
            float* po = p.part_o + prow * D;
#pragma unroll
            for (int nb = 0; nb < D / 8; ++nb) {
                *reinterpret_cast<float2*>(po + nb * 8 + col_q) = make_float2(o_acc[nb * 4 + 2 * h] * inv, o_acc[nb * 4 + 2 * h + 1] * inv);
            }
            if ((lane & 3) == 0) p.part_lse[prow] = empty ? -INFINITY : m_run[h] * p.scale + logf(l);
            continue;
        }
        const float inv = 1.f / l;
#pragma unroll
        for (int nb = 0; nb < D / 8; ++nb) {
            *reinterpret_cast<std::uint32_t*>(go + static_cast<std::size_t>(row) * D + nb * 8 + col_q) =
                pack2<T>(o_acc[nb * 4 + 2 * h] * inv, o_acc[nb * 4 + 2 * h + 1] * inv);
        }
        if ((lane & 3) == 0) p.lse[row0 + row] = m_run[h] * p.scale + logf(l);
    }
    }  // consumers
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
        const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * s.seq_q;
        pl.workspace_bytes = align256(pl.splits * rows * s.head_dim * sizeof(float)) + align256(pl.splits * rows * sizeof(float));
    }
    return pl;
}

int current_sm_count() {
    int dev = 0, sms = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
    return sms;
}

template <typename T, int D, int BN, int STAGES>
void launch_config(const attention_shape& s, const wgmma_tma_plan& pl, const void* q, const void* k, const void* v, void* o,
                   float* lse, void* workspace, cudaStream_t stream) {
    using cfg = tma_config<D, BN, STAGES>;
    static_assert(cfg::bm == block_rows, "the plan counts blocks of block_rows rows");
    constexpr bool f16 = std::is_same_v<T, __half>;
    fa_params p = flash::make_params(s, q, k, v, o, lse);
    if (pl.packed) flash::pack_params(p, s);  // heads_q = heads_kv, group = 1, seq_q = group x seq_q rows
    p.q_blocks = (p.seq_q + cfg::bm - 1) / cfg::bm;
    p.bh = s.batch * p.heads_q;
    if (pl.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        p.splits = pl.splits;
        p.part_o = static_cast<float*>(workspace);
        p.part_lse = reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) +
                                              align256(pl.splits * rows * D * sizeof(float)));
    }
    CUtensorMap mq, mk, mv;
    check_call(make_map(&mq, q, p.bh, p.seq_q, D, cfg::bm, f16), "cuTensorMapEncodeTiled(Q)");
    check_call(make_map(&mk, k, s.batch * s.heads_kv, s.seq_kv, D, BN, f16), "cuTensorMapEncodeTiled(K)");
    check_call(make_map(&mv, v, s.batch * s.heads_kv, s.seq_kv, D, BN, f16), "cuTensorMapEncodeTiled(V)");
    check_call(cudaFuncSetAttribute(attention_wgmma_tma_kernel<T, D, BN, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    cfg::smem_bytes),
               "cudaFuncSetAttribute(attention wgmma_tma shared memory)");
    const dim3 grid(static_cast<unsigned>(p.q_blocks * p.splits), static_cast<unsigned>(p.heads_q), static_cast<unsigned>(s.batch));
    attention_wgmma_tma_kernel<T, D, BN, STAGES><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(mq, mk, mv, p);
    check_launch("attention wgmma_tma kernel");
    if (p.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        flash::combine_splits<T, D><<<static_cast<unsigned>((rows + 7) / 8), 256, 0, stream>>>(p);
        check_launch("attention wgmma_tma split merge");
    }
}

// The (bn, stages) pairs instantiated; the configurations of the suite's variant name them.
bool known_tiling(const wgmma_tma_options& opt) {
    return (opt.bn == 128 && (opt.stages == 2 || opt.stages == 3)) || (opt.bn == 64 && opt.stages == 3);
}

template <typename T, int D>
void dispatch(const attention_shape& s, const wgmma_tma_options& opt, const wgmma_tma_plan& pl, const void* q, const void* k,
              const void* v, void* o, float* lse, void* ws, cudaStream_t stream) {
    if (opt.bn == 128 && opt.stages == 2) launch_config<T, D, 128, 2>(s, pl, q, k, v, o, lse, ws, stream);
    else if (opt.bn == 128 && opt.stages == 3) launch_config<T, D, 128, 3>(s, pl, q, k, v, o, lse, ws, stream);
    else launch_config<T, D, 64, 3>(s, pl, q, k, v, o, lse, ws, stream);
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

const char* attention_wgmma_tma_unsupported(const attention_shape& s, elem type, const wgmma_tma_options& opt) {
    if (type != elem::bf16 && type != elem::f16) return "bf16 and fp16 only";
    if (s.head_dim != 64 && s.head_dim != 128) return "head_dim 64 or 128 only (256 is not written yet)";
    if (!hopper::known_tiling(opt)) return "(bn, stages) must be (128, 2), (128, 3) or (64, 3)";
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
        if (s.head_dim == 128) hopper::dispatch<__nv_bfloat16, 128>(s, opt, pl, q, k, v, o, lse, workspace, stream);
        else hopper::dispatch<__nv_bfloat16, 64>(s, opt, pl, q, k, v, o, lse, workspace, stream);
    } else {
        if (s.head_dim == 128) hopper::dispatch<__half, 128>(s, opt, pl, q, k, v, o, lse, workspace, stream);
        else hopper::dispatch<__half, 64>(s, opt, pl, q, k, v, o, lse, workspace, stream);
    }
}

}  // namespace fusebench::kernels
