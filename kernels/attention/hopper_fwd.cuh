// The Hopper attention forward kernel body, shared by wgmma_tma (kernels/attention/hopper.cu: bf16
// or fp16 Q, K, V) and wgmma_fp8qk (kernels/attention/hopper_fp8.cu: E4M3 Q and K with one fp32
// scale per (batch, head), bf16 V). A producer warpgroup loads Q and a STAGES-deep K/V ring with
// TMA on mbarriers and gives its registers to two consumer warpgroups (setmaxnreg) that run Q K^T
// and P V with wgmma, the softmax of one KV tile overlapping P V of the previous; split-KV writes
// fp32 partials that flash::combine_splits merges. Every difference between the two variants is an
// `if constexpr (FP8QK)`: the E4M3 Q K^T (k = 32 per wgmma, one 128-byte swizzle atom per row),
// the scales folded into the softmax scale, no GQA packing (a block's rows would need different Q
// scales). Force-inlined into each file's __global__ wrapper: each compiles to what it did when
// the body was written out in both files. The tile configuration is visible to every pass; the
// body only where FUSEBENCH_HOPPER_DEVICE_CODE is defined (the host and sm_90a passes, see hopper.cu).
#pragma once

#include "kernels/attention/flash_mma.cuh"
#include "kernels/common/workspace.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusebench::kernels::hopper {

// Tiles: Q [128 rows][D] and K/V [BN keys][D] as column blocks of 128-byte rows with the 128-byte
// swizzle: what one TMA box (128 bytes x rows, SWIZZLE_128B) writes and what a wgmma descriptor
// names directly, K-major for Q and K (SBO 1024 = 8 rows), MN-major for V in P V (LBO = one column
// block, SBO = 8 keys). 16-bit Q and K: D / 64 column blocks; E4M3: one (D = 128 codes). Rows past
// seq_q / seq_kv arrive as zeros (3-D tensor maps) and are masked, so ragged tails need no
// separate path.
template <int D, int BN, int STAGES, bool FP8QK>
struct fwd_config {
    static constexpr int bm = 128, bn = BN;
    static constexpr int threads = 384;  // warpgroups 0, 1: consumers; warpgroup 2: producer (one thread issues)
    static constexpr int qk_elem_bytes = FP8QK ? 1 : 2;
    static constexpr int qk_blocks = D * qk_elem_bytes / 128;  // 128-byte column blocks of a Q or K row
    static constexpr int q_bytes = bm * D * qk_elem_bytes;
    static constexpr int k_bytes = bn * D * qk_elem_bytes;
    static constexpr int v_bytes = bn * D * 2;
    static constexpr int bar_offset = q_bytes + STAGES * (k_bytes + v_bytes);
    // barriers: full_q, full_k[S], full_v[S], empty_k[S], empty_v[S]
    static constexpr int smem_bytes = bar_offset + 8 * (1 + 4 * STAGES) + 1024;
    static_assert(!FP8QK || D == 128, "E4M3 Q and K: one 128-byte swizzle atom per row");
    static_assert(smem_bytes <= 232448, "more than the 227 KB of shared memory a block may have");
    static_assert(k_bytes % 1024 == 0 && v_bytes % 1024 == 0 && (BN * 128) % 1024 == 0,
                  "stages and column blocks 1024-byte aligned (swizzle atoms)");
};

// Split-KV partials in the workspace, the layout flash::combine_splits reads: part_o
// [splits][rows][D] fp32, then part_lse [splits][rows] fp32 at the next 256-byte boundary;
// rows = batch * heads_q * seq_q of the launch.
inline std::size_t split_workspace_bytes(int splits, std::size_t rows, int d) {
    return align256(splits * rows * d * sizeof(float)) + align256(splits * rows * sizeof(float));
}
inline void attach_split_partials(flash::params& p, int splits, void* workspace, int d) {
    const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
    p.splits = splits;
    p.part_o = static_cast<float*>(workspace);
    p.part_lse = reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + align256(splits * rows * d * sizeof(float)));
}

}  // namespace fusebench::kernels::hopper

#if defined(FUSEBENCH_HOPPER_DEVICE_CODE)
#include "kernels/attention/hopper_device.cuh"
#include "kernels/common/sm90_wgmma.cuh"

namespace fusebench::kernels::hopper {

// The kernel takes flash::params (flash_mma.cuh), the wmma design's: pointers, heads, group,
// lengths, causal (with causal_rows, the query rows per head once GQA heads are packed), scale,
// q_blocks, and for split-KV splits, bh, part_o and part_lse (the layout flash::combine_splits
// merges). tiles_per_split and head_group are the wmma launch's and stay at their defaults here.
// q_scale, k_scale: FP8QK only (one per batch * heads_q and batch * heads_kv).
// PINGPONG: the two consumer warpgroups take turns issuing their GEMMs (named barriers 1 and 2,
// FlashAttention-3's inter-warpgroup schedule): warpgroup w issues Q K^T of tile j and P V of tile
// j - 1 only after the other one has issued its own, so one warpgroup's softmax runs while the
// other's GEMMs hold the tensor cores. Without it the warp schedulers interleave the two freely.
template <typename T, int D, int BN, int STAGES, bool FP8QK, bool PINGPONG = false>
__device__ __forceinline__ void attention_fwd(const CUtensorMap& tm_q, const CUtensorMap& tm_k, const CUtensorMap& tm_v,
                                              const flash::params& p, const float* __restrict__ q_scale,
                                              const float* __restrict__ k_scale) {
    using cfg = fwd_config<D, BN, STAGES, FP8QK>;
    constexpr int BM = cfg::bm;
    constexpr bool F16 = std::is_same_v<T, __half>;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const std::uint32_t sq_addr = base;
    const std::uint32_t sk_addr = base + cfg::q_bytes;
    const std::uint32_t sv_addr = base + cfg::q_bytes + STAGES * cfg::k_bytes;
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
    // GQA packing (launch row r is query row r % causal_rows): never with FP8 Q, whose scale is per head.
    const bool packed = FP8QK ? false : p.causal_rows < p.seq_q;
    const int causal_rows = FP8QK ? p.seq_q : p.causal_rows;
    const int off = p.seq_kv - causal_rows;  // bottom-right causal alignment
    const int q_rows_valid = min(BM, p.seq_q - q0);
    int kv_end = p.seq_kv;
    if (p.causal) {
        if constexpr (FP8QK) {
            kv_end = min(p.seq_kv, q0 + q_rows_valid - 1 + off + 1);
        } else {
            kv_end = min(p.seq_kv, min(q0 + q_rows_valid - 1, p.causal_rows - 1) + off + 1);
        }
    }
    // This CTA's tiles: the block's tiles cut into p.splits runs of equal length (fixed
    // boundaries); a run past the block's last tile is empty and writes a neutral partial.
    const int n_all = (kv_end + BN - 1) / BN;
    const int per_split = (n_all + p.splits - 1) / p.splits;
    const int t_begin = min(n_all, split * per_split);
    const int n_tiles = min(n_all, t_begin + per_split) - t_begin;
    // Consumer warpgroups with a row to compute (decode: only the first); the others leave at once
    // and the empty barriers count only the ones that stay.
    const int consumers = q_rows_valid > 64 ? 2 : 1;
    [[maybe_unused]] int bh_q = 0, bh_kv = 0;  // FP8QK: the scale indices
    if constexpr (FP8QK) bh_q = b * p.heads_q + head, bh_kv = b * heads_kv + kv_head;

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
            if constexpr (!FP8QK) bh_q = b * p.heads_q + head, bh_kv = b * heads_kv + kv_head;
            mbar_expect_tx(full_q, cfg::q_bytes);
#pragma unroll
            for (int c = 0; c < cfg::qk_blocks; ++c) tma_load_3d(sq_addr + c * (BM * 128), &tm_q, c * 64, q0, bh_q, full_q);
            for (int t = 0; t < n_tiles; ++t) {
                const int s = t % STAGES;
                const int key0 = (t_begin + t) * BN;
                const std::uint32_t use_parity = ((t / STAGES) & 1) ^ 1;  // the fill t - STAGES was released
                if (t >= STAGES) mbar_wait(empty_k(s), use_parity);
                mbar_expect_tx(full_k(s), cfg::k_bytes);
#pragma unroll
                for (int c = 0; c < cfg::qk_blocks; ++c)
                    tma_load_3d(sk_addr + s * cfg::k_bytes + c * (BN * 128), &tm_k, c * 64, key0, bh_kv, full_k(s));
                if (t >= STAGES) mbar_wait(empty_v(s), use_parity);
                mbar_expect_tx(full_v(s), cfg::v_bytes);
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    tma_load_3d(sv_addr + s * cfg::v_bytes + c * (BN * 128), &tm_v, c * 64, key0, bh_kv, full_v(s));
            }
        }
    } else if (role < consumers) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = role;
    const int lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
    const int r_a = wg * 64 + warp_in_wg * 16 + (lane >> 2);
    const int col_q = (lane & 3) * 2;
    // FP8QK: the scores are in code units, so the dequantization scales multiply the softmax scale.
    float scale_eff = p.scale;
    if constexpr (FP8QK) scale_eff = p.scale * (q_scale[bh_q] * k_scale[bh_kv]);
    const float sl2 = scale_eff * 1.4426950408889634f;
    const int first_q = packed ? 0 : q0;  // the block's first query row (packed: any row may be 0)

    auto issue_s = [&](float (&s)[BN / 2], int j) {
        const std::uint32_t k_st = sk_addr + (j % STAGES) * cfg::k_bytes;
        if constexpr (FP8QK) {
#pragma unroll
            for (int ks = 0; ks < D / 32; ++ks) {  // 32 codes = 32 bytes per k-step along the 128-byte row
                const std::uint64_t da = make_desc(sq_addr + wg * (64 * 128) + ks * 32, 16, 1024);
                const std::uint64_t db = make_desc(k_st + ks * 32, 16, 1024);
                wgmma_fp8_op<BN>::ss(s, da, db, ks > 0 ? 1 : 0);
            }
        } else {
#pragma unroll
            for (int ks = 0; ks < D / 16; ++ks) {
                const std::uint64_t da = make_desc(sq_addr + (ks >> 2) * (BM * 128) + wg * (64 * 128) + (ks & 3) * 32, 16, 1024);
                const std::uint64_t db = make_desc(k_st + (ks >> 2) * (BN * 128) + (ks & 3) * 32, 16, 1024);
                sm90::wgmma_op<BN, F16>::ss(s, da, db, ks > 0 ? 1 : 0);
            }
        }
    };
    auto issue_pv = [&](float (&o)[D / 2], const std::uint32_t (&pa)[BN / 16][4], int j) {
        const std::uint32_t v_st = sv_addr + (j % STAGES) * cfg::v_bytes;
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) sm90::wgmma_op<D, F16>::rs_tb(o, pa[kk], make_desc(v_st + kk * (16 * 128), BN * 128, 1024), 1);
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
    // Ping-pong turns (both warpgroups run the same n_tiles): warpgroup w waits on barrier 1 + w and
    // hands the turn over by arriving on the other's; warpgroup 1 opens warpgroup 0's first turn and
    // skips its last hand-over, so each barrier completes exactly n_tiles times.
    const bool pingpong = PINGPONG && consumers == 2;
    auto hand_over = [&](int j) {  // after issuing tile j's GEMMs
        if (pingpong && !(wg == 1 && j == n_tiles - 1)) sm90::named_barrier_arrive(2 - wg, 256);
    };
    if (pingpong && wg == 1) sm90::named_barrier_arrive(1, 256);
    mbar_wait(full_q, 0);
    for (int j = 0; j < n_tiles; ++j) {
        mbar_wait(full_k(j % STAGES), (j / STAGES) & 1);
        if (pingpong) sm90::named_barrier_sync(1 + wg, 256);
        float s[BN / 2];
        wgmma_fence();
        issue_s(s, j);
        wgmma_commit();
        if (j > 0) {
            mbar_wait(full_v((j - 1) % STAGES), ((j - 1) / STAGES) & 1);
            issue_pv(o_acc, pa_prev, j - 1);
            wgmma_commit();
            hand_over(j);
            wgmma_wait<1>();
        } else {
            hand_over(j);
            wgmma_wait<0>();
        }
        reg_fence(s);
        mbar_arrive(empty_k(j % STAGES));
        std::uint32_t pa[BN / 16][4];
        float alpha[2];
        const int g = t_begin + j;
        softmax_tile<T, BN>(s, pa, m_run, l_run, alpha, tile_needs_mask(g), g * BN, q0 + r_a, col_q, p.seq_kv, p.causal, off,
                            packed, causal_rows, sl2);
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

    // Epilogue: O normalized and rounded, lse = m * scale_eff + ln(l); split: this split's fp32 partial
    // O and lse at [split][batch * heads][row] (flash::combine_splits' layout), a row that saw no
    // key of the split (or an empty split) writing 0 and -inf, which the merge skips.
    const std::size_t rows_total = static_cast<std::size_t>(p.bh) * p.seq_q;
    std::size_t row0;
    if constexpr (FP8QK) {
        row0 = static_cast<std::size_t>(bh_q) * p.seq_q + q0;
    } else {
        row0 = (static_cast<std::size_t>(b) * p.heads_q + head) * p.seq_q + q0;
    }
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
            if ((lane & 3) == 0) p.part_lse[prow] = empty ? -INFINITY : m_run[h] * scale_eff + logf(l);
            continue;
        }
        const float inv = 1.f / l;
#pragma unroll
        for (int nb = 0; nb < D / 8; ++nb) {
            *reinterpret_cast<std::uint32_t*>(go + static_cast<std::size_t>(row) * D + nb * 8 + col_q) =
                pack2<T>(o_acc[nb * 4 + 2 * h] * inv, o_acc[nb * 4 + 2 * h + 1] * inv);
        }
        if ((lane & 3) == 0) p.lse[row0 + row] = m_run[h] * scale_eff + logf(l);
    }
    }  // consumers
}

}  // namespace fusebench::kernels::hopper
#endif  // FUSEBENCH_HOPPER_DEVICE_CODE
