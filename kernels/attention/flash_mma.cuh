// The fused attention kernel (variant `wmma`, the seed's first design) as a template, shared by
// kernels/attention/wmma.cu and the verifier's mutants (kernels/mutants/attention_mutants.cu,
// which instantiate it with one deliberate bug each).
//
// One block computes BM = WARPS * MT * 16 query rows of one (batch, q head) against all visible
// keys, BN keys per step:
//  - Q, K, V tiles reach shared memory with cp.async (16-byte chunks, rows past the end zero-filled
//    so a masked column never multiplies garbage), K/V double-buffered: tile j + 1 is in flight
//    while tile j is computed.
//  - Shared rows are D * 2 bytes; the 16-byte chunk c of row r is stored at chunk c ^ (r % 8), so
//    the eight row addresses of an ldmatrix hit eight different bank groups.
//  - Each warp owns MT * 16 rows: S = Q K^T with mma.sync m16n8k16 (fp32 accumulators), the online
//    softmax in registers (each row's max and sum reduced over the four lanes that hold it), then
//    the accumulators are rounded to the input type and reused in place as the A operand of P V
//    (the m16n8k16 accumulator layout is the A layout of the next MMA), V read with ldmatrix.trans.
//  - Causal: a block stops at the last tile its last row sees; a warp skips a tile no row of it
//    sees; masks are evaluated only on tiles that cross the diagonal or the end of the keys, and
//    there (eight warps) a warp multiplies only the 16-key groups its rows see; the two warps of
//    an SM sub-partition hold complementary row groups, so the diagonal tile's work is shared
//    evenly between the sub-partitions.
//  - Rows are reduced in the exp2 domain: p = 2^(s * scale * log2 e - m * scale * log2 e), one FFMA
//    per score; lse = m * scale + ln(l).
#pragma once

#include "kernels/attention/attention.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusebench::kernels::flash {

// Deliberate bugs for the verifier's mutants; none in the real kernel.
enum mutation : int {
    mut_none = 0,
    mut_mask_off_by_one = 1,    // row i also sees key i + offset + 1
    mut_no_scale = 2,           // logits not multiplied by 1/sqrt(d)
    mut_no_rescale = 3,         // running max updated, accumulator and sum never rescaled
    mut_p_fp8 = 4,              // P rounded to fp8 e4m3 before P V
    mut_skip_partial_tile = 5,  // the last partial KV tile never visited
};

struct params {
    const void* q;
    const void* k;
    const void* v;
    void* o;
    float* lse;
    int heads_q, group, seq_q, seq_kv;  // group = heads_q / heads_kv
    int causal_rows;  // query rows per head for the causal mask: seq_q, or the original seq_q once packed
    int causal;
    float scale;
    int q_blocks;
    int bh;          // batch * heads_q
    int head_group;  // heads whose blocks are interleaved in the launch order
    // Split-KV (blockIdx.y = split): split s visits KV tiles [s * tiles_per_split, (s + 1) *
    // tiles_per_split) and, when splits > 1, writes its normalized partial O (fp32) and partial lse
    // to part_o [splits][bh][seq_q][D] and part_lse [splits][bh][seq_q] for combine_splits.
    int splits = 1;
    int tiles_per_split = 0x7fffffff;
    float* part_o = nullptr;
    float* part_lse = nullptr;
};

inline params make_params(const attention_shape& s, const void* q, const void* k, const void* v, void* o, float* lse) {
    params p{};
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.lse = lse;
    p.heads_q = s.heads_q;
    p.group = s.heads_q / s.heads_kv;
    p.seq_q = s.seq_q;
    p.seq_kv = s.seq_kv;
    p.causal_rows = s.seq_q;
    p.causal = s.causal ? 1 : 0;
    p.scale = s.scale;
    return p;
}

// GQA packing: where the query heads sharing one KV head hold at most one block of query rows in
// all (decode: 1 row x group heads), one block computes them together, so each K/V tile is read
// once per KV head instead of once per query head. The heads of a group are consecutive, so their
// rows of Q, O and lse are one contiguous run of group * seq_q rows: the launch sees heads_kv
// heads of group * seq_q rows, and the causal mask maps packed row r to query row r % seq_q.
inline bool packs_gqa(const attention_shape& s, int bm) {
    return s.heads_q > s.heads_kv && static_cast<long long>(s.seq_q) * (s.heads_q / s.heads_kv) <= bm;
}
inline attention_shape packed_shape(const attention_shape& s) {
    attention_shape e = s;
    e.seq_q = s.seq_q * (s.heads_q / s.heads_kv);
    e.heads_q = s.heads_kv;
    return e;
}
inline void pack_params(params& p, const attention_shape& s) {
    p.heads_q = s.heads_kv;
    p.group = 1;
    p.seq_q = s.seq_q * (s.heads_q / s.heads_kv);
    p.causal_rows = s.seq_q;
}

template <typename T>
struct mma_type;
template <>
struct mma_type<__nv_bfloat16> {
    __device__ static std::uint32_t pack(float lo, float hi) {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<std::uint32_t*>(&h);
    }
    __device__ static void store2(__nv_bfloat16* p, float lo, float hi) {
        *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(lo, hi);
    }
    __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};
template <>
struct mma_type<__half> {
    __device__ static std::uint32_t pack(float lo, float hi) {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<std::uint32_t*>(&h);
    }
    __device__ static void store2(__half* p, float lo, float hi) {
        *reinterpret_cast<__half2*>(p) = __floats2half2_rn(lo, hi);
    }
    __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

// 2^x with the SFU's approximation (relative error about 2^-22; what exp2f becomes under fast
// math); inputs here are <= 0 or -inf, and results below 2^-126 flush to 0, which a probability
// summed with at least one 1 never notices.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// 16 bytes global -> shared; src_bytes 0 zero-fills the destination without reading.
__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Element offset of 16-byte chunk `c` of row `r` in a swizzled tile with D columns.
template <int D>
__device__ __forceinline__ int swz(int r, int c) {
    return r * D + ((c ^ (r & 7)) << 3);
}

// Copies rows [0, rows) of a tile of R rows from `src` (row stride D elements); rows >= valid are
// zero-filled.
template <typename T, int R, int D, int THREADS>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int valid) {
    constexpr int chunks_per_row = D / 8;
    constexpr int total = R * chunks_per_row;
    static_assert(total % THREADS == 0, "tile chunks must divide among the threads");
#pragma unroll
    for (int i = 0; i < total / THREADS; ++i) {
        const int idx = threadIdx.x + i * THREADS;
        const int r = idx / chunks_per_row, c = idx % chunks_per_row;
        const bool ok = r < valid;
        const T* g = ok ? src + static_cast<std::size_t>(r) * D + c * 8 : src;
        cp_async16(smem_addr(dst + swz<D>(r, c)), g, ok ? 16 : 0);
    }
}

template <int D, int BN, int WARPS, int MT>
struct config {
    static constexpr int threads = WARPS * 32;
    static constexpr int bm = WARPS * MT * 16;
    static constexpr std::size_t smem_bytes = (static_cast<std::size_t>(bm) * D + 4ull * BN * D) * 2;
};

template <typename T, int D, int BN, int WARPS, int MT, bool QREG, int MUT>
__global__ void __launch_bounds__(WARPS * 32, (WARPS == 4 && D <= 128) ? 2 : 1)
    flash_fwd(params p) {
    using cfg = config<D, BN, WARPS, MT>;
    constexpr int BM = cfg::bm;
    constexpr int THREADS = cfg::threads;
    constexpr int NT = BN / 8;  // score n-tiles per row block
    constexpr int DT = D / 8;   // output n-tiles
    constexpr int KS = D / 16;  // k-steps of Q K^T
    static_assert(D % 64 == 0 && BN % 16 == 0, "tile shape");

    extern __shared__ __align__(128) unsigned char smem_raw[];
    T* sq = reinterpret_cast<T*>(smem_raw);
    T* sk = sq + BM * D;      // two buffers of BN x D
    T* sv = sk + 2 * BN * D;  // two buffers of BN x D

    // Launch order: heads in groups of head_group; within a group the heaviest query blocks
    // (causal) of all its heads first, so long blocks do not end up in the tail of the grid,
    // while the blocks resident at once share the group's K and V in L2.
    const int per_group = p.q_blocks * p.head_group;
    const int gi = static_cast<int>(blockIdx.x) / per_group;
    const int r = static_cast<int>(blockIdx.x) % per_group;
    const int gh = min(p.head_group, p.bh - gi * p.head_group);
    const int qb = p.q_blocks - 1 - r / gh;
    const int bh = gi * p.head_group + r % gh;  // batch * heads_q + head
    const int q0 = qb * BM;
    const int head = bh % p.heads_q;
    const int batch = bh / p.heads_q;
    const int kvh = batch * (p.heads_q / p.group) + head / p.group;
    const int offset = p.seq_kv - p.causal_rows;  // bottom-right causal alignment
    const bool packed = p.causal_rows < p.seq_q;  // GQA packing: row r is query row r % causal_rows

    const T* qg = static_cast<const T*>(p.q) + (static_cast<std::size_t>(bh) * p.seq_q + q0) * D;
    const T* kg = static_cast<const T*>(p.k) + static_cast<std::size_t>(kvh) * p.seq_kv * D;
    const T* vg = static_cast<const T*>(p.v) + static_cast<std::size_t>(kvh) * p.seq_kv * D;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    // Row group of this warp: in each group of eight warps, warps 4..7 take row groups 7..4, so the
    // two warps sharing an SM sub-partition (warp w and w + 4) hold complementary shares of a
    // causal diagonal tile (row groups k and 7 - k) and the sub-partitions finish it together.
    const int rg = (WARPS % 8 == 0 && (warp & 7) >= 4) ? (warp & ~7) + 11 - (warp & 7) : warp;
    const int wrow0 = q0 + rg * MT * 16;  // first query row of this warp

    // Tiles this block visits: up to the last key its last row sees.
    int n_tiles = MUT == mut_skip_partial_tile ? p.seq_kv / BN : (p.seq_kv + BN - 1) / BN;
    if (p.causal) {
        const int last_key = min(q0 + BM - 1, p.causal_rows - 1) + offset + (MUT == mut_mask_off_by_one ? 1 : 0);
        n_tiles = min(n_tiles, last_key / BN + 1);
    }

    // This block's share of the tiles (all of them unless the launch splits the keys).
    const int split = static_cast<int>(blockIdx.y);
    const int j_begin = split * p.tiles_per_split;
    const int j_end = min(n_tiles, j_begin + p.tiles_per_split);

    const float sl2 = (MUT == mut_no_scale ? 1.0f : p.scale) * 1.4426950408889634f;

    float o[MT][DT][4];
    float m[MT][2], l[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int d = 0; d < DT; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
        m[mt][0] = m[mt][1] = -INFINITY;
        l[mt][0] = l[mt][1] = 0.f;
    }
    std::uint32_t qr[QREG ? MT : 1][QREG ? KS : 1][4];

    // ldmatrix lane roles: matrix index and row within it.
    const int lm = lane / 8, lr = lane % 8;
    const int diag_extra = MUT == mut_mask_off_by_one ? 1 : 0;

    // The steps of one KV tile (lambdas: this form measured 1.0-1.6% faster at head_dim 128 than the
    // same steps written inline in the loop, results equal; kernels/attention/NOTES.md).
    auto load_q_regs = [&]() {
        if constexpr (QREG) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int ks = 0; ks < KS; ++ks) {
                    const int rq = rg * MT * 16 + mt * 16 + lr + (lm & 1) * 8;
                    ldmatrix_x4(qr[mt][ks], smem_addr(sq + swz<D>(rq, 2 * ks + (lm >> 1))));
                }
        }
    };
    // Does any row of this warp exist and see any key of tile j? (Warps wholly past the last query
    // row, as in decode, only help load the tiles.)
    auto warp_active = [&](int j) {
        return wrow0 < p.seq_q &&
               (!p.causal || j * BN <= min(wrow0 + MT * 16 - 1, p.causal_rows - 1) + offset + diag_extra);
    };
    // S = Q K^T of the tile in kt, for the first G 16-key groups (groups: std::integral_constant
    // G; G < NT / 2 on a masked tile whose later groups no row of the warp sees).
    auto scores = [&](auto groups, float (&s)[MT][NT][4], const T* kt) {
        constexpr int G = decltype(groups)::value;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int n = 0; n < NT; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
#pragma unroll
        for (int ks = 0; ks < KS; ++ks) {
            std::uint32_t qa[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                if constexpr (QREG) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) qa[mt][i] = qr[mt][ks][i];
                } else {
                    const int rq = rg * MT * 16 + mt * 16 + lr + (lm & 1) * 8;
                    ldmatrix_x4(qa[mt], smem_addr(sq + swz<D>(rq, 2 * ks + (lm >> 1))));
                }
            }
#pragma unroll
            for (int np = 0; np < G; ++np) {
                std::uint32_t b[4];
                const int key = np * 16 + lr + (lm >> 1) * 8;
                ldmatrix_x4(b, smem_addr(kt + swz<D>(key, 2 * ks + (lm & 1))));
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_type<T>::mma(s[mt][2 * np], qa[mt], b[0], b[1]);
                    mma_type<T>::mma(s[mt][2 * np + 1], qa[mt], b[2], b[3]);
                }
            }
        }
    };
    // Mask and online softmax of the tile starting at key kv0: s becomes P (fp32); m, l and the
    // rescaled O follow. masked: std::true_type / std::false_type where the caller knows, a bool
    // (ignored) where the tile is checked here: a tile crossing the end of the keys or (causal)
    // some row's diagonal. The groups from G on were never multiplied: their P is 0 without an
    // exponential.
    auto softmax = [&](auto masked, auto groups, float (&s)[MT][NT][4], int kv0) {
        constexpr int G = decltype(groups)::value;
        bool mask;
        if constexpr (std::is_same_v<decltype(masked), bool>) {
            mask = kv0 + BN > p.seq_kv || (p.causal && kv0 + BN - 1 > (packed ? 0 : wrow0) + offset + diag_extra);
        } else {
            mask = decltype(masked)::value;
        }
        if (mask) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int row = wrow0 + mt * 16 + g + h * 8;
                    const int qrow = packed ? row % p.causal_rows : row;
                    const int lim = p.causal ? min(p.seq_kv - 1, qrow + offset + diag_extra) : p.seq_kv - 1;
#pragma unroll
                    for (int n = 0; n < NT; ++n)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const int col = kv0 + n * 8 + 2 * t + e;
                            if (n / 2 >= G || col > lim) s[mt][n][2 * h + e] = -INFINITY;
                        }
                }
        }

        // New running max, rescale, exponentiate, row sums.
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                float mx = m[mt][h];
#pragma unroll
                for (int n = 0; n < NT; ++n) mx = fmaxf(mx, fmaxf(s[mt][n][2 * h], s[mt][n][2 * h + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                // A row with no visible key yet keeps m = -inf; subtract 0 instead so
                // exp2(-inf - (-inf)) never makes a NaN.
                const float ms = mx == -INFINITY ? 0.f : mx * sl2;
                const float alpha = MUT == mut_no_rescale ? 1.0f : fast_exp2(m[mt][h] * sl2 - ms);
                m[mt][h] = mx;
                float sum = 0.f;
#pragma unroll
                for (int n = 0; n < NT; ++n)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        float pv = n / 2 >= G ? 0.f : fast_exp2(fmaf(s[mt][n][2 * h + e], sl2, -ms));
                        if constexpr (MUT == mut_p_fp8) pv = float(__nv_fp8_e4m3(pv));
                        s[mt][n][2 * h + e] = pv;
                        sum += pv;
                    }
                l[mt][h] = l[mt][h] * alpha + sum;
#pragma unroll
                for (int d = 0; d < DT; ++d) {
                    o[mt][d][2 * h] *= alpha;
                    o[mt][d][2 * h + 1] *= alpha;
                }
            }
    };
    // P rounded to the input type, the A operand of k-step kk of P V: the accumulators of key
    // tiles 2kk and 2kk+1 (the m16n8k16 accumulator layout is the A layout of the next MMA).
    auto pack_p = [&](const float (&s)[MT][NT][4], int mt, int kk, std::uint32_t (&a)[4]) {
        a[0] = mma_type<T>::pack(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        a[1] = mma_type<T>::pack(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        a[2] = mma_type<T>::pack(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        a[3] = mma_type<T>::pack(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    };
    // O += P V of the tile in vt over the first G k-steps (P is 0 past them); a_of(mt, kk, a)
    // gives the A operand of k-step kk.
    auto pv = [&](auto groups, auto&& a_of, const T* vt) {
#pragma unroll
        for (int kk = 0; kk < decltype(groups)::value; ++kk) {
            std::uint32_t pa[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) a_of(mt, kk, pa[mt]);
#pragma unroll
            for (int dp = 0; dp < DT / 2; ++dp) {
                std::uint32_t b[4];
                const int key = kk * 16 + lr + (lm & 1) * 8;
                ldmatrix_x4_trans(b, smem_addr(vt + swz<D>(key, 2 * dp + (lm >> 1))));
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_type<T>::mma(o[mt][2 * dp], pa[mt], b[0], b[1]);
                    mma_type<T>::mma(o[mt][2 * dp + 1], pa[mt], b[2], b[3]);
                }
            }
        }
    };

    // Lock-step schedule: one block-wide barrier per KV tile, K/V double-buffered (tile j + 1
    // in flight while tile j is computed).
    load_tile<T, BM, D, THREADS>(sq, qg, p.seq_q - q0);
    if (j_begin < j_end) {
        const int kvb = j_begin * BN;
        load_tile<T, BN, D, THREADS>(sk, kg + static_cast<std::size_t>(kvb) * D, p.seq_kv - kvb);
        load_tile<T, BN, D, THREADS>(sv, vg + static_cast<std::size_t>(kvb) * D, p.seq_kv - kvb);
    }
    cp_async_commit();

    // Eight warps: tiles before j_mask need a mask for no warp of the block (no key past the end,
    // no key past the diagonal of the block's first row): their loop carries no mask code. From
    // j_mask on, each warp masks and multiplies only the 16-key groups up to the last key it sees,
    // rounded up to 2, 4, 6 or all groups (compile-time counts: a branch between the MMAs
    // measured slower than the work it saved).
    int j_mask = j_end;
    if (p.seq_kv % BN != 0) j_mask = min(j_mask, p.seq_kv / BN);
    if (p.causal) {
        const int lo = (packed ? 0 : q0) + offset + diag_extra;  // last key the block's first row sees
        j_mask = min(j_mask, lo + 1 <= 0 ? 0 : (lo + 1) / BN);
    }
    auto iteration = [&](int j, auto masked) {
        const int buf = (j - j_begin) & 1;
        // One barrier per step: after it, tile j is visible to every warp and every warp is done
        // with tile j - 1, whose buffers the prefetch of tile j + 1 then overwrites.
        cp_async_wait<0>();
        __syncthreads();
        if (j + 1 < j_end) {
            const int nb = buf ^ 1;
            const int kv1 = (j + 1) * BN;
            load_tile<T, BN, D, THREADS>(sk + nb * BN * D, kg + static_cast<std::size_t>(kv1) * D, p.seq_kv - kv1);
            load_tile<T, BN, D, THREADS>(sv + nb * BN * D, vg + static_cast<std::size_t>(kv1) * D, p.seq_kv - kv1);
            cp_async_commit();
        }
        if (j == j_begin) load_q_regs();
        if (!warp_active(j)) return;
        const int kv0 = j * BN;
        auto step = [&](auto groups) {
            float s[MT][NT][4];
            scores(groups, s, sk + buf * BN * D);
            softmax(masked, groups, s, kv0);
            pv(groups, [&](int mt, int kk, std::uint32_t(&a)[4]) { pack_p(s, mt, kk, a); }, sv + buf * BN * D);
        };
        constexpr int NG = NT / 2;
        if constexpr (std::is_same_v<decltype(masked), std::true_type>) {
            int last = p.seq_kv - 1;
            if (p.causal && !packed) last = min(last, min(wrow0 + MT * 16 - 1, p.causal_rows - 1) + offset + diag_extra);
            const int np_end = (last - kv0) / 16 + 1;  // >= 1: warp_active
            if (np_end <= 2) return step(std::integral_constant<int, 2>{});
            if constexpr (NG >= 8) {
                if (np_end <= 4) return step(std::integral_constant<int, 4>{});
                if (np_end <= 6) return step(std::integral_constant<int, 6>{});
            }
        }
        step(std::integral_constant<int, NG>{});
    };
    if constexpr (WARPS % 8 == 0) {
        int j = j_begin;
        for (; j < min(j_mask, j_end); ++j) iteration(j, std::false_type{});
        for (; j < j_end; ++j) iteration(j, std::true_type{});
    } else {
        // Fewer groups only where the two warps of a sub-partition pair up (eight warps): with one
        // warp per sub-partition the warp that sees the whole tile sets the pace anyway, and the
        // two loops measured 1.9% slower at head_dim 64 (kernels/attention/NOTES.md): one loop,
        // each tile checked for a mask in the softmax.
        for (int j = j_begin; j < j_end; ++j) iteration(j, true);
    }

    // Epilogue: quad-reduce the row sums, normalize, write O and the lse (or, split, this split's
    // partial O in fp32 and partial lse; a row that saw no key of the split writes 0 and -inf).
    T* og = static_cast<T*>(p.o) + static_cast<std::size_t>(bh) * p.seq_q * D;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float sum = l[mt][h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const int row = wrow0 + mt * 16 + g + h * 8;
            if (row >= p.seq_q) continue;
            if (p.splits > 1) {
                const std::size_t prow = (static_cast<std::size_t>(split) * p.bh + bh) * p.seq_q + row;
                const bool empty = sum == 0.f;
                const float inv = empty ? 0.f : 1.0f / sum;
                float* orow = p.part_o + prow * D;
#pragma unroll
                for (int d = 0; d < DT; ++d)
                    *reinterpret_cast<float2*>(orow + d * 8 + 2 * t) =
                        make_float2(o[mt][d][2 * h] * inv, o[mt][d][2 * h + 1] * inv);
                if (t == 0) p.part_lse[prow] = empty ? -INFINITY : m[mt][h] * (sl2 * 0.6931471805599453f) + logf(sum);
                continue;
            }
            const float inv = 1.0f / sum;
            T* orow = og + static_cast<std::size_t>(row) * D;
#pragma unroll
            for (int d = 0; d < DT; ++d)
                mma_type<T>::store2(orow + d * 8 + 2 * t, o[mt][d][2 * h] * inv, o[mt][d][2 * h + 1] * inv);
            if (t == 0) p.lse[static_cast<std::size_t>(bh) * p.seq_q + row] = m[mt][h] * (sl2 * 0.6931471805599453f) + logf(sum);
        }
}

// Merges the splits of a split-KV launch: one warp per (batch * head, row); lse = log sum_s
// exp(lse_s), O = sum_s exp(lse_s - lse) O_s, the splits summed in order (deterministic).
template <typename T, int D>
__global__ void __launch_bounds__(256) combine_splits(params p) {
    const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
    const std::size_t r = static_cast<std::size_t>(blockIdx.x) * 8 + threadIdx.x / 32;
    if (r >= rows) return;
    const int lane = threadIdx.x % 32;
    float mx = -INFINITY;
    for (int sp = 0; sp < p.splits; ++sp) mx = fmaxf(mx, p.part_lse[sp * rows + r]);
    constexpr int PER = D / 32;  // elements per lane, contiguous
    float acc[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) acc[i] = 0.f;
    float total = 0.f;
    for (int sp = 0; sp < p.splits; ++sp) {
        const float ls = p.part_lse[sp * rows + r];
        if (ls == -INFINITY) continue;
        const float w = expf(ls - mx);
        total += w;
        const float* src = p.part_o + (sp * rows + r) * D + lane * PER;
#pragma unroll
        for (int i = 0; i < PER; i += 2) {
            const float2 v = *reinterpret_cast<const float2*>(src + i);
            acc[i] = fmaf(w, v.x, acc[i]);
            acc[i + 1] = fmaf(w, v.y, acc[i + 1]);
        }
    }
    const float inv = 1.0f / total;
    T* dst = static_cast<T*>(p.o) + r * D + lane * PER;
#pragma unroll
    for (int i = 0; i < PER; i += 2) mma_type<T>::store2(dst + i, acc[i] * inv, acc[i + 1] * inv);
    if (lane == 0) p.lse[r] = mx + logf(total);
}

// Configures shared memory and launches one instantiation. Throws through check (a function taking
// the error and the call's name) on failure.
// Split-KV plan: a launch of fewer query blocks than the GPU has SMs (decode, short batches)
// leaves most SMs idle while each block walks every key; splitting the keys over blockIdx.y gives
// about two blocks per SM, each split at least min_tiles_per_split tiles, at most 64 splits.
struct split_plan {
    int splits = 1;
    int tiles_per_split = 0x7fffffff;
    std::size_t workspace_bytes = 0;  // partial O and lse, fp32
};
template <int D, int BN, int WARPS, int MT>
split_plan plan_splits(const attention_shape& s, int sms) {
    using cfg = config<D, BN, WARPS, MT>;
    constexpr int min_tiles_per_split = 4;
    split_plan plan;
    const long long q_blocks = (s.seq_q + cfg::bm - 1) / cfg::bm;
    const long long blocks = q_blocks * s.batch * s.heads_q;
    const int tiles = (s.seq_kv + BN - 1) / BN;
    if (sms <= 0 || blocks >= sms || tiles < 2 * min_tiles_per_split) return plan;
    long long want = (2LL * sms + blocks - 1) / blocks;
    want = std::min<long long>({want, 64, tiles / min_tiles_per_split});
    if (want < 2) return plan;
    plan.tiles_per_split = static_cast<int>((tiles + want - 1) / want);
    plan.splits = (tiles + plan.tiles_per_split - 1) / plan.tiles_per_split;
    if (plan.splits < 2) return split_plan{};
    const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * s.seq_q;
    plan.workspace_bytes = static_cast<std::size_t>(plan.splits) * rows * (D + 1) * sizeof(float);
    return plan;
}

// Configures shared memory and launches one instantiation (with the split plan's splits and then
// combine_splits, when it has more than one). Throws through check (a function taking the error
// and the call's name) on failure.
template <typename T, int D, int BN, int WARPS, int MT, bool QREG, int MUT, typename Check>
void launch(const params& base, int batch, cudaStream_t stream, Check check, const split_plan& plan = split_plan{},
            void* workspace = nullptr) {
    using cfg = config<D, BN, WARPS, MT>;
    auto kernel = flash_fwd<T, D, BN, WARPS, MT, QREG, MUT>;
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(cfg::smem_bytes)),
          "cudaFuncSetAttribute(flash attention shared memory)");
    params p = base;
    p.q_blocks = (p.seq_q + cfg::bm - 1) / cfg::bm;
    p.bh = batch * p.heads_q;
    if (p.head_group <= 0 || p.head_group > p.bh) p.head_group = p.bh;
    if (plan.splits > 1) {
        if (workspace == nullptr) check(cudaErrorInvalidValue, "flash attention split-KV without its workspace");
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        p.splits = plan.splits;
        p.tiles_per_split = plan.tiles_per_split;
        p.part_o = static_cast<float*>(workspace);
        p.part_lse = p.part_o + static_cast<std::size_t>(plan.splits) * rows * D;
    }
    const dim3 grid(static_cast<unsigned>(p.q_blocks * p.bh), static_cast<unsigned>(p.splits));
    kernel<<<grid, cfg::threads, cfg::smem_bytes, stream>>>(p);
    check(cudaGetLastError(), "flash attention launch");
    if (p.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        combine_splits<T, D><<<static_cast<unsigned>((rows + 7) / 8), 256, 0, stream>>>(p);
        check(cudaGetLastError(), "flash attention split combine launch");
    }
}

}  // namespace fusebench::kernels::flash
