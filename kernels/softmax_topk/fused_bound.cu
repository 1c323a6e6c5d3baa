// Fused softmax + top-k, v9e `fused_bound` (16-bit logits, K <= 256, V <= 65536): one warp a row, as
// fused_stream, with the bound of v8 instead of fused_stream's threshold bookkeeping: every element of the
// top K lies in a 16-byte vector whose maximum is at least the K-th largest vector maximum, in any order of
// the row. The probe it comes from, its four other forms and their measurements:
// kernels/softmax_topk/probes/bound_kernel.cu and kernels/softmax_topk/NOTES.md, "v9 fused_bound".
//
// A persistent grid of one block of 32 warps an SM; warp w of the grid takes rows w, w + 32 G, ... (one row
// a warp at 4096 rows on 132 SMs). Per row, 16-byte vectors (the aligned segments that hold the row; the
// first and the last read element by element, the neighbours' elements -inf):
// 1. the stream (U steps a batch, two batches in flight): each vector's maximum (packed 16-bit max, NaN
//    ignored), one rescale of the lane's sum when it rises, its eight terms exp2((x - m) log2e) for the lane's
//    running max m (exact at any magnitude: x - m of two 16-bit values is exact in fp32, or the term is 0), summed on their own and added to
//    the lane's sum with compensation (select.cuh, kahan_add), and a vote: a vector whose key beats the K-th held key joins the K best vectors held as 32-bit
//    composites (key << 16 | 0xFFFF - vector) in lanes 0..K-1, in order (one or a few a step: placed one by one
//    by a ballot and a shuffle; more: the step's 32 sorted and merged with the held K by bitonic networks);
//    at K <= 16 the vote has a floor from a sample of the rest of the row, taken once, at the first
//    network-merged step from step 16 on (rows rising along the index; sample_floor, below);
// 2. the row's max M and sum S (rows with NaN or +inf, or all -inf, have no finite softmax: NaN and indices
//    0..K-1);
// 3. the K held vectors read again; their in-row elements at or above the K-th held key are the candidates
//    (about K; at most 8 K), as (key << 16 | 0xFFFF - index) composites; at most 64 are ordered by one
//    bitonic sort and K lanes write at once, more by K rounds of a warp maximum.
// Keys are order-preserving 16-bit keys with -0 and +0 one key (the reference compares values).
// That is the kernel for K <= 32; K in (32, 256] takes the list kernel (below, "K in (32, 256]"): the same stream
// and vote, the joining vectors in a per-warp list in shared memory, compacted exactly to the top K when full.
#include "kernels/common/globaltimer.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/softmax_topk/select.cuh"
#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fusebench::kernels {

namespace {

using topk_detail::fast_exp2;
using topk_detail::full_mask;
using topk_detail::kahan_add;
using topk_detail::warp_inclusive_sum;
constexpr float bnd_l2e = 1.4426950408889634f;
constexpr int bnd_warps = 32;

__device__ __forceinline__ unsigned key16(unsigned b) {
    const unsigned neg = static_cast<unsigned>(static_cast<int>(b << 16) >> 31);
    return (0x8000u + (((b & 0x7FFFu) ^ neg) - neg)) & 0xFFFFu;
}
__device__ __forceinline__ unsigned bits_of_key(unsigned k) { return k >= 0x8000u ? k - 0x8000u : 0x8000u | (0x8000u - k); }

template <class T> struct bnd_type;
template <> struct bnd_type<__nv_bfloat16> {
    static constexpr unsigned neg_inf = 0xFF80u;
    __device__ static float to_float(unsigned b) { return __uint_as_float(b << 16); }
    __device__ static unsigned vmax2(const uint4& v) {  // both halves hold the vector's max
        const auto h = [](unsigned u) { return *reinterpret_cast<const __nv_bfloat162*>(&u); };
        const __nv_bfloat162 m = __hmax2(__hmax2(h(v.x), h(v.y)), __hmax2(h(v.z), h(v.w)));
        const unsigned mw = *reinterpret_cast<const unsigned*>(&m);
        const __nv_bfloat162 mm = __hmax2(m, h(__byte_perm(mw, 0, 0x1032)));
        return *reinterpret_cast<const unsigned*>(&mm);
    }
    __device__ static float vmax_float(unsigned mm) { return __uint_as_float(mm & 0xFFFF0000u); }
    __device__ static unsigned vmax_bits(unsigned mm) { return mm >> 16; }
};
template <> struct bnd_type<__half> {
    static constexpr unsigned neg_inf = 0xFC00u;
    __device__ static float to_float(unsigned b) { return __half2float(__ushort_as_half(static_cast<unsigned short>(b))); }
    __device__ static unsigned vmax2(const uint4& v) {
        const auto h = [](unsigned u) { return *reinterpret_cast<const __half2*>(&u); };
        const __half2 m = __hmax2(__hmax2(h(v.x), h(v.y)), __hmax2(h(v.z), h(v.w)));
        const unsigned mw = *reinterpret_cast<const unsigned*>(&m);
        const __half2 mm = __hmax2(m, h(__byte_perm(mw, 0, 0x1032)));
        return *reinterpret_cast<const unsigned*>(&mm);
    }
    __device__ static float vmax_float(unsigned mm) { return to_float(mm & 0xFFFFu); }
    __device__ static unsigned vmax_bits(unsigned mm) { return mm; }
};
// The 16 bits of element e (0..7) of a vector of 16-bit values (or of a vector of packed 16-bit keys).
__device__ __forceinline__ unsigned half_at(const uint4& v, int e) {
    const unsigned w = (e >> 1) == 0 ? v.x : (e >> 1) == 1 ? v.y : (e >> 1) == 2 ? v.z : v.w;
    return (e & 1) ? w >> 16 : w & 0xFFFFu;
}
template <class T> __device__ __forceinline__ float elem_of(const uint4& v, int e) {
    return bnd_type<T>::to_float(half_at(v, e));
}

// A lane's statistics: running max m, base c (m, or 0 while m = -inf: every term so far was 0), the sum s of the
// terms exp2((x - c) log2e). (One FFMA a term against c = fl(m log2e), with rows of |M| >= 2^20 summed again by a
// second read, was 0-1.6% faster on random logits but ran the `huge` kind at 2.1x: session l, NOTES; source at
// c3b36fb, FUSEBENCH_BOUND_TWO_OP=0.)
struct bnd_stats {
    float m = -INFINITY, c = 0.0f, s = 0.0f;
    float k = 0.0f;  // the compensation of s (select.cuh, kahan_add): the lane's sum is s - k
    __device__ float sum() const { return s - k; }
};

// Vector j covers elements 8 j - h .. 8 j - h + 7 of the row.
struct bnd_row {
    const uint4* v;
    const unsigned short* x;
    int h, nvec, V;
    __device__ bnd_row(const void* row, int V_) : V(V_) {
        const auto a = reinterpret_cast<std::uintptr_t>(row);
        v = reinterpret_cast<const uint4*>(a & ~std::uintptr_t{15});
        x = static_cast<const unsigned short*>(row);
        h = static_cast<int>((a & 15u) >> 1);
        nvec = (h + V + 7) >> 3;
    }
    __device__ unsigned valid(int j) const {  // the in-row elements of vector j, as bits
        unsigned m = 0xFFu;
        if (j == 0) m &= 0xFFu << h;
        const int last = V + h - 8 * j;
        if (last < 8) m &= (1u << last) - 1u;
        return m;
    }
};

template <class T> __device__ __forceinline__ uint4 load_edge(const bnd_row& g, int j) {
    unsigned w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        unsigned lo = bnd_type<T>::neg_inf, hi = bnd_type<T>::neg_inf;
        const int i0 = 8 * j + 2 * q - g.h;
        if (i0 >= 0 && i0 < g.V) lo = g.x[i0];
        if (i0 + 1 >= 0 && i0 + 1 < g.V) hi = g.x[i0 + 1];
        w[q] = lo | (hi << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// A vector's max key (returned) and its eight terms into the lane's statistics.
template <class T> __device__ __forceinline__ unsigned consume(const uint4& v, bnd_stats& st) {
    const unsigned mm = bnd_type<T>::vmax2(v);
    const float vm = bnd_type<T>::vmax_float(mm);
    if (vm > st.m) {
        const float f = st.s == 0.0f ? 1.0f : fast_exp2((st.c - vm) * bnd_l2e);
        st.s *= f;
        st.k *= f;
        st.c = vm;
        st.m = vm;
    }
    float s = 0.0f;  // the vector's terms on their own, then one compensated add
#pragma unroll
    for (int e = 0; e < 8; ++e) {
        const float x = elem_of<T>(v, e);
        s += fast_exp2((x - st.c) * bnd_l2e);
    }
    kahan_add(st.s, st.k, s);
    return key16(bnd_type<T>::vmax_bits(mm));
}

// A row's vectors in index order, each handed to step(v, j, ok) (ok: j in the row; past it a -inf vector): vector
// 0 and the last read element by element, the middle by 16-byte loads in batches of U steps, two batches in
// flight; before_batch() (warp-uniform) before each middle batch's steps.
template <class T, int U, class Step, class Before>
__device__ __forceinline__ void stream_row(const bnd_row& g, const uint4& ninf, int lane, Step step, Before before_batch) {
    const int nmid = g.nvec > 2 ? g.nvec - 2 : 0;
    step(lane == 0 ? load_edge<T>(g, 0) : ninf, 0, lane == 0);
    {
        uint4 A[U], B[U];
        const auto load = [&](uint4* buf, int qb) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int q = qb + u * 32 + lane;
                buf[u] = q < nmid ? __ldg(g.v + 1 + q) : ninf;
            }
        };
        const auto eat = [&](const uint4* buf, int qb) {
            before_batch();
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int q = qb + u * 32 + lane;
                step(buf[u], 1 + q, q < nmid);
            }
        };
        load(A, 0);
        for (int qb = 0; qb < nmid; qb += 2 * U * 32) {
            load(B, qb + U * 32);
            eat(A, qb);
            load(A, qb + 2 * U * 32);
            if (qb + U * 32 < nmid) eat(B, qb + U * 32);
        }
    }
    if (g.nvec > 1) {
        before_batch();
        step(lane == 0 ? load_edge<T>(g, g.nvec - 1) : ninf, g.nvec - 1, lane == 0);
    }
}

// The row's max M and sum S = sum exp(x - M) from the lanes' statistics; false (and NaN probabilities with
// indices 0..K-1 written) where the row has no finite softmax (a NaN, a +inf, or every element -inf).
__device__ __forceinline__ bool row_total(const bnd_stats& st, float& M, float& S, float* op, std::int32_t* oi, int K,
                                          int lane) {
    M = st.m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(full_mask, M, o));
    S = st.s == 0.0f ? st.s : st.sum() * fast_exp2((st.c - M) * bnd_l2e);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) S += __shfl_xor_sync(full_mask, S, o);
    if (M > -INFINITY && M < INFINITY && S > 0.0f && S < INFINITY) return true;
    for (int k = lane; k < K; k += 32) {
        oi[k] = k;
        op[k] = __int_as_float(0x7FC00000);
    }
    return false;
}

// One bitonic compare-exchange of the held composite across lanes `o` apart; descending where `desc`.
__device__ __forceinline__ void cx(unsigned& c, int o, bool desc, int lane) {
    const unsigned pc = __shfl_xor_sync(full_mask, c, o);
    const bool lower = (lane & o) == 0;
    if (desc == lower ? pc > c : pc < c) c = pc;
}

// Bitonic sort, descending, of 64 values held two a lane (a: element lane, b: element lane + 32).
__device__ __forceinline__ void sort64_desc(unsigned& a, unsigned& b, int lane) {
#pragma unroll
    for (int size = 2; size <= 64; size <<= 1) {
#pragma unroll
        for (int o = size >> 1; o > 0; o >>= 1) {
            if (o == 32) {
                const unsigned hi = max(a, b), lo = min(a, b);
                a = hi;
                b = lo;
            } else {
                const unsigned pa = __shfl_xor_sync(full_mask, a, o), pb = __shfl_xor_sync(full_mask, b, o);
                const bool lower = (lane & o) == 0;
                const bool da = (lane & size) == 0, db = ((lane + 32) & size) == 0;
                a = (da == lower) ? max(a, pa) : min(a, pa);
                b = (db == lower) ? max(b, pb) : min(b, pb);
            }
        }
    }
}

constexpr int bnd_one_by_one = 4;  // a step with more candidates merges them by networks

// The vote's floor from a sample of the row (NS vectors a lane: 4 at K <= 16, none above): the K-th largest
// of 32 NS vector maxima sampled evenly from the vectors not yet streamed is a lower bound of the row's K-th largest
// vector maximum in any order (they are K of the row's vectors), so the vote starts there and a row that rises
// along the index no longer merges a record on every step. Taken once, at the first step from step
// bnd_sample_after on whose records were merged by networks: a random row's such steps come in its first few (it
// never samples at K <= 16), a rising row has one every step. Measured (H200 GPU-84b8f516, session m call 1,
// against the form without it; probe A/B, events, two rounds): bf16 4096 x 50257 K = 10 ascending 356.8 -> 159.1
// us (1.37x the random time), random +0.3-1.7% on every other kind and V; K = 32 ascending 0.58x but random
// +2.2-5.3% (a random row at K = 32 still merges by networks after step 16), so not above K = 16. Sampled at the
// row's start (session l call 8) random rows paid +9.5-15%. Inline: as a call (session m call 2, H100) the kernel
// had a 32-byte stack frame and 63 registers against 56, and random rows at V = 32000 ran 2.6% slower.
constexpr int bnd_sample_after = 16;
// The vote's floor from the sample of middle vectors q0.. (0-based among the middle ones): the K-th largest sampled
// key minus 1 (keys at the K-th pass the vote); 0 where fewer than 32 S vectors are left (no floor).
template <class T, int S> __device__ __forceinline__ unsigned sample_floor(const bnd_row& g, int q0, int K, int lane) {
    const int nmid = g.nvec > 2 ? g.nvec - 2 : 0;
    const int left = nmid - q0;
    if (left < 32 * S) return 0u;
    unsigned key[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
        const int q = q0 + static_cast<int>((static_cast<long long>(s * 32 + lane) * left) / (32 * S));
        key[s] = key16(bnd_type<T>::vmax_bits(bnd_type<T>::vmax2(__ldg(g.v + 1 + q))));
    }
    unsigned t = 0;  // the largest t with at least K sampled keys >= t: the K-th largest, bit by bit
#pragma unroll 1
    for (int bit = 15; bit >= 0; --bit) {
        const unsigned trial = t | (1u << bit);
        int n = 0;
#pragma unroll
        for (int s = 0; s < S; ++s) n += __popc(__ballot_sync(full_mask, key[s] >= trial));
        if (n >= K) t = trial;
    }
    return t > 0u ? t - 1u : 0u;
}

template <class T, int U, int NS>
__global__ void __launch_bounds__(bnd_warps * 32, 1)
    softmax_topk_bound_kernel(const T* __restrict__ x, float* __restrict__ probs, std::int32_t* __restrict__ out_idx,
                              int rows, int V, int K) {
    __shared__ unsigned scratch[bnd_warps][64];  // the end's candidates
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int gstride = gridDim.x * bnd_warps;
    const uint4 ninf = make_uint4(bnd_type<T>::neg_inf * 0x10001u, bnd_type<T>::neg_inf * 0x10001u,
                                  bnd_type<T>::neg_inf * 0x10001u, bnd_type<T>::neg_inf * 0x10001u);
    for (int r = blockIdx.x * bnd_warps + w; r < rows; r += gstride) {
        const bnd_row g(x + static_cast<std::size_t>(r) * V, V);
        bnd_stats st;
        unsigned hc = 0u;    // this lane's held composite (lanes < K; 0: empty)
        // the vote's floor (the sample's; 0 before it) and the K-th held key above it (the floor while fewer than
        // K are held)
        unsigned t_floor = 0u;
        unsigned t_app = t_floor;
        int nets = 0;  // 1 once the sample was taken
        const auto step = [&](const uint4& v, int j, bool ok) {
            const unsigned k = consume<T>(v, st);
            const bool a = ok && k > t_app;
            unsigned m = __ballot_sync(full_mask, a);
            if (m == 0u) return;
            const unsigned mine = a ? (k << 16) | (0xFFFFu - static_cast<unsigned>(j)) : 0u;
            if (__popc(m) <= bnd_one_by_one) {
                do {  // warp-uniform, lane order = index order
                    const int src = __ffs(m) - 1;
                    m &= m - 1u;
                    const unsigned cn = __shfl_sync(full_mask, mine, src);
                    if ((cn >> 16) <= t_app) continue;  // t rose within this step
                    const int p = __popc(__ballot_sync(full_mask, lane < K && hc > cn));
                    const unsigned uc = __shfl_up_sync(full_mask, hc, 1);
                    if (lane > p) hc = uc;
                    if (lane == p) hc = cn;
                    if (lane >= K) hc = 0u;
                    t_app = max(t_floor, __shfl_sync(full_mask, hc, K - 1) >> 16);
                } while (m != 0u);
            } else {
                // the step's candidates sorted (descending), merged with the held K: the top 32 of both
                unsigned s = mine;
#pragma unroll
                for (int size = 2; size <= 32; size <<= 1) {
#pragma unroll
                    for (int o = size >> 1; o > 0; o >>= 1) cx(s, o, size == 32 ? true : (lane & size) == 0, lane);
                }
                const unsigned rc = __shfl_sync(full_mask, s, 31 - lane);  // held against the reversed: bitonic
                if (rc > hc) hc = rc;
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) cx(hc, o, true, lane);
                if (lane >= K) hc = 0u;
                t_app = max(t_floor, __shfl_sync(full_mask, hc, K - 1) >> 16);
                if constexpr (NS > 0) {
                    // warp-uniform: j - lane - 1 is the step's first middle vector, j - lane + 31 the next step's
                    if (nets == 0 && j - lane - 1 >= 32 * bnd_sample_after) {
                        nets = 1;
                        t_floor = sample_floor<T, NS>(g, j - lane + 31, K, lane);
                        t_app = max(t_app, t_floor);
                    }
                }
            }
        };
        // 1. the row in index order
        stream_row<T, U>(g, ninf, lane, step, [] {});
        // 2. the row's max and sum
        std::int32_t* oi = out_idx + static_cast<std::size_t>(r) * K;
        float* op = probs + static_cast<std::size_t>(r) * K;
        float M, S;
        if (!row_total(st, M, S, op, oi, K, lane)) continue;
        const float invS = 1.0f / S;
        // 3. the held vectors read again; their in-row elements >= t (the K-th held key) as composites
        // (key 0 and the keys below -inf's are NaNs, never in a finite row: everything is >= t there)
        const float t_f = t_app <= key16(bnd_type<T>::neg_inf) ? -INFINITY : bnd_type<T>::to_float(bits_of_key(t_app));
        const int j = hc != 0u ? static_cast<int>(0xFFFFu - (hc & 0xFFFFu)) : -1;
        const unsigned valid = j >= 0 ? g.valid(j) : 0u;
        const uint4 hv = j < 0 ? make_uint4(0, 0, 0, 0) : (j == 0 || j == g.nvec - 1) ? load_edge<T>(g, j) : __ldg(g.v + j);
        unsigned cc[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            const unsigned b = half_at(hv, e);
            const bool c = ((valid >> e) & 1u) && bnd_type<T>::to_float(b) >= t_f;
            cc[e] = c ? (key16(b) << 16) | (0xFFFFu - static_cast<unsigned>(8 * j + e - g.h)) : 0u;
        }
        const auto write = [&](int pos, unsigned comp) {
            const float xv = bnd_type<T>::to_float(bits_of_key(comp >> 16));
            oi[pos] = static_cast<std::int32_t>(0xFFFFu - (comp & 0xFFFFu));
            op[pos] = fast_exp2((xv - M) * bnd_l2e) * invS;
        };
        unsigned cnt = 0;
#pragma unroll
        for (int e = 0; e < 8; ++e) cnt += cc[e] != 0u ? 1u : 0u;
        const unsigned incl = warp_inclusive_sum(cnt, lane);
        const unsigned total = __shfl_sync(full_mask, incl, 31);
        if (total <= 64u) {  // the usual case (about K): one sort, K lanes write
            unsigned* sc = scratch[w];
            unsigned pos = incl - cnt;
#pragma unroll
            for (int e = 0; e < 8; ++e)
                if (cc[e] != 0u) sc[pos++] = cc[e];
            __syncwarp();
            unsigned a = static_cast<unsigned>(lane) < total ? sc[lane] : 0u;
            unsigned b = static_cast<unsigned>(lane) + 32u < total ? sc[lane + 32] : 0u;
            __syncwarp();
            sort64_desc(a, b, lane);
            if (lane < K) write(lane, a);
            continue;
        }
        for (int k = 0; k < K; ++k) {  // more: K rounds of the warp's largest composite
            unsigned best = cc[0];
#pragma unroll
            for (int e = 1; e < 8; ++e) best = max(best, cc[e]);
            const unsigned top = __reduce_max_sync(full_mask, best);
            if (best == top) {
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    if (cc[e] == top) cc[e] = 0u;
                write(k, top);
            }
        }
    }
}

// ---- K in (32, 256]: the K best vectors as a list in shared memory (session q) ----
// The stream's vote is the same (a vector whose key beats the threshold t joins), but a joining vector is appended
// to the warp's list in shared memory (key << 16 | vector, in index order: one ballot and one store a step); when
// the list cannot take another batch, an exact compaction keeps its top K vectors (ties at the K-th key by lower
// index, i.e. list order) and raises t to their K-th key. With room for bnd_list_cap entries a random row compacts
// about once (t then at the K-th of ~900 vectors, and ~K ln(nvec / 900) more join); a row rising along the index
// every (bnd_list_cap - K) / 32 steps. At the row's end: the list compacted to exactly K, the K vectors read again
// into shared memory as 16-bit keys, the exact K-th largest element key t2 among their elements at or above t (two
// 8-bit histogram passes), exactly K elements emitted (those above t2, and those at t2 in index order), one bitonic
// sort of K composites (key << 16 | 0xFFFF - index) and K lanes write.
// Steps a batch in the list kernel: 4 spilled (104 bytes at the 64-register cap of 32 warps an SM), 3 spills 8.
#ifndef FUSEBENCH_BOUND_LIST_U
#define FUSEBENCH_BOUND_LIST_U 3
#endif
constexpr int bnd_list_u = FUSEBENCH_BOUND_LIST_U;
// Entries a warp. At 1024 the end keeps its 256 vectors' keys over the list (16 bytes each); below, it reads them
// again from global memory in each of its three passes.
#ifndef FUSEBENCH_BOUND_LIST_CAP
#define FUSEBENCH_BOUND_LIST_CAP 1024
#endif
constexpr int bnd_list_cap = FUSEBENCH_BOUND_LIST_CAP;
// Diagnostic: FUSEBENCH_BOUND_LIST_TL = 1 stamps each row's phases (lane 0 of each warp, %globaltimer, summed over
// rows into bound_list_phase_ns: 0 the stream with its compactions, 1 those compactions, 2 max / sum and the end's
// compaction, 3 the K vectors read, 4 the K-th and the K emitted, 5 the sort and the writes; 7 counts compactions).
#ifndef FUSEBENCH_BOUND_LIST_TL
#define FUSEBENCH_BOUND_LIST_TL 0
#endif
#if FUSEBENCH_BOUND_LIST_TL
__device__ unsigned long long bound_list_phase_ns[8];
#define BND_LIST_TL(ph)                                                 \
    do {                                                                \
        if (lane == 0) {                                                \
            const unsigned long long now_ = globaltimer_ns();           \
            atomicAdd(&bound_list_phase_ns[ph], now_ - tl_);            \
            tl_ = now_;                                                 \
        }                                                               \
    } while (0)
#else
#define BND_LIST_TL(ph) \
    do {                \
    } while (0)
#endif
constexpr bool bnd_list_keys_kept = bnd_list_cap >= 1024;
// Session s, prepared, NOT measured (0, off, in the library): FUSEBENCH_BOUND_LIST_APPROX = S > 0: a compaction in the
// stream that needs a second histogram pass (keys spread over more than 256: fp16 rows, and every row's first
// compaction) skips it when the first pass's head (the bins above the K-th key's bin, and that bin) holds at most
// K + S entries: it keeps them all and the vote's t becomes one below that bin's lowest key. The end's compaction
// stays exact. probes/approx_compaction_emulation.py (the kernel's list, every row exact): at S = 256 fp16 random
// rows 4 -> 2 histogram passes a row in the same 2 compactions, ascending rows 16 -> 8 (bf16 10 -> 8), bf16 random
// rows unchanged (3).
#ifndef FUSEBENCH_BOUND_LIST_APPROX
#define FUSEBENCH_BOUND_LIST_APPROX 0
#endif
static_assert(FUSEBENCH_BOUND_LIST_APPROX >= 0 && FUSEBENCH_BOUND_LIST_APPROX + 256 + 32 * bnd_list_u <= bnd_list_cap,
              "FUSEBENCH_BOUND_LIST_APPROX: the kept head and a batch must fit the list");
constexpr int bnd_list_smem_words = bnd_list_cap + 256;  // the list, then a 256-bin histogram (the end's K composites)

__device__ __forceinline__ unsigned bnd_lanemask_lt(int lane) { return (1u << lane) - 1u; }

// One count into a 256-bin histogram for each active lane: one shared atomic a lane, no warp vote. (A vote that
// made a warp of one bin a single atomic cost a ballot, a shuffle and an all-sync a key, active or not: with it the
// list kernel took 6-14% longer on every input of the H200 A/B, ties and all-equal rows included, session s call 1
// (pr-1128s/keep-spread-plainhist-knobs.patch.gz, reversed); topk_detail::hist_add's __match_any_sync cost more still, session q call 2.)
__device__ __forceinline__ void bnd_hist_add(unsigned* hist, unsigned bin, bool act) {
    if (act) atomicAdd(hist + bin, 1u);
}

// The need-th largest 16-bit key among the lane's items (for_each(f) calls f(key, active) for each of them, the
// same number of times in every lane), every active key in [kmin, kmax]; `above` gets the count of items with a
// larger key. Histograms of the distance kmax - key (256 bins of 2^sh distances, then the chosen bin's 2^sh: at
// most two passes; bin 255 - d so that scan_bins_desc finds the largest keys first). The histogram is left clear
// (scan_bins_desc clears what it reads). Needs need <= the count of active items.
// HeadSlack > 0 (FUSEBENCH_BOUND_LIST_APPROX, the stream's compactions only): where the first pass needs bins of
// 2^sh > 1 keys and the bins above the need-th key's bin plus that bin hold at most need + HeadSlack items, no second
// pass: `above` gets that count with bnd_whole_bin set, and the return value is the bin's lowest key (every item at
// or above it is then kept: a superset of the top need, which a compaction in the stream may keep).
constexpr unsigned bnd_whole_bin = 0x80000000u;
template <int HeadSlack = 0, class ForEach>
__device__ __forceinline__ unsigned bnd_kth_key(ForEach for_each, unsigned need, unsigned kmin, unsigned kmax,
                                                unsigned* hist, int lane, unsigned& above) {
    using topk_detail::scan_bins_desc;
    [[maybe_unused]] unsigned in1 = 0;
    const auto scan = [&](unsigned nd, unsigned& digit, unsigned& ab) {
        unsigned d = 0, a = 0, in = 0;
        const bool mine = scan_bins_desc(hist, nd, lane, d, a, in);
        const int src = __ffs(__ballot_sync(full_mask, mine)) - 1;
        digit = __shfl_sync(full_mask, d, src);
        ab = __shfl_sync(full_mask, a, src);
        if constexpr (HeadSlack > 0) in1 = __shfl_sync(full_mask, in, src);
        __syncwarp();
    };
    const unsigned range = kmax - kmin;
    unsigned sh = 0;
    while ((range >> sh) >= 256u) ++sh;
    for_each([&](unsigned k, bool act) { bnd_hist_add(hist, 255u - ((kmax - k) >> sh), act); });
    __syncwarp();
    unsigned g1, a1;
    scan(need, g1, a1);
    const unsigned dhi = 255u - g1;
    if (sh == 0) {
        above = a1;
        return kmax - dhi;
    }
    const unsigned mask = (1u << sh) - 1u;
    if constexpr (HeadSlack > 0) {
        // the bin's lowest key is kmax - x; only where that is above 1 (a bin reaching below key 0 would wrap)
        const unsigned x = (dhi << sh) | mask;
        if (a1 + in1 <= need + static_cast<unsigned>(HeadSlack) && x + 1u < kmax) {
            above = (a1 + in1) | bnd_whole_bin;
            return kmax - x;
        }
    }
    for_each([&](unsigned k, bool act) {
        const unsigned d = kmax - k;
        bnd_hist_add(hist, 255u - (d & mask), act && (d >> sh) == dhi);
    });
    __syncwarp();
    unsigned g2, a2;
    scan(need - a1, g2, a2);
    above = a1 + a2;
    return kmax - ((dhi << sh) | (255u - g2));
}

// In place, in list order, the list's entries (key << 16 | anything) whose key is above t and the first need_eq of
// those at t; returns how many are kept. (Also probes/bound_kernel.cu's v9b list.)
__device__ __forceinline__ int bnd_keep_top(unsigned* lst, int nn, unsigned t, unsigned need_eq, int lane) {
    const unsigned lt = bnd_lanemask_lt(lane);
    int m = 0;
    unsigned eq_seen = 0;
    for (int i0 = 0; i0 < nn; i0 += 32) {
        const bool ok = i0 + lane < nn;
        const unsigned e = ok ? lst[i0 + lane] : 0u;
        const unsigned k = e >> 16;
        const bool eq = ok && k == t;
        const unsigned be = __ballot_sync(full_mask, eq);
        const bool keep = (ok && k > t) || (eq && eq_seen + __popc(be & lt) < need_eq);
        const unsigned bk = __ballot_sync(full_mask, keep);
        __syncwarp();  // every lane's read before the in-place writes (racecheck: ballots order no memory)
        if (keep) lst[m + __popc(bk & lt)] = e;
        m += __popc(bk);
        eq_seen += __popc(be);
    }
    __syncwarp();
    return m;
}

// The list's top K in place (entries key << 16 | vector, in index order): every key above the K-th largest t,
// and of those equal to t the first K - above; n becomes K; returns t.
// kmin / kmax: bounds of the list's keys (the lanes' smallest and largest appended keys, merged here).
template <int HeadSlack = 0>
__device__ __forceinline__ unsigned bnd_compact(unsigned* lst, int& n, int K, unsigned* hist, int lane, unsigned kmin,
                                                unsigned kmax) {
    __syncwarp();  // every lane's appends before any lane reads them (racecheck: ballots and reductions order no memory)
    const int nn = n;
    kmin = __reduce_min_sync(full_mask, kmin);
    kmax = __reduce_max_sync(full_mask, kmax);
    unsigned above = 0;
    const unsigned t = bnd_kth_key<HeadSlack>(
        [&](auto f) {
            for (int i0 = 0; i0 < nn; i0 += 32) {
                const int i = i0 + lane;
                f(i < nn ? lst[i] >> 16 : 0u, i < nn);
            }
        },
        static_cast<unsigned>(K), kmin, kmax, hist, lane, above);
    // a whole bin (HeadSlack > 0 only): every key at or above its lowest, t; the vote's threshold one below it
    const bool wb = HeadSlack > 0 && (above & bnd_whole_bin) != 0u;
    const unsigned tk = wb ? t - 1u : t;
    n = bnd_keep_top(lst, nn, tk, wb ? 0u : static_cast<unsigned>(K) - above, lane);
    return tk;
}

// Bitonic sort, descending, of 32 R values held R a lane, element R lane + r in a[r].
template <int R> __device__ __forceinline__ void bnd_sort_blocked_desc(unsigned (&a)[R], int lane) {
#pragma unroll
    for (int size = 2; size <= 32 * R; size <<= 1) {
#pragma unroll
        for (int d = size >> 1; d > 0; d >>= 1) {
            if (d < R) {
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if ((r & d) != 0) continue;
                    const bool desc = ((R * lane + r) & size) == 0;
                    const unsigned hi = max(a[r], a[r | d]), lo = min(a[r], a[r | d]);
                    a[r] = desc ? hi : lo;
                    a[r | d] = desc ? lo : hi;
                }
            } else {
                const int ld = d / R;
                const bool lower = (lane & ld) == 0;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const unsigned p = __shfl_xor_sync(full_mask, a[r], ld);
                    const bool desc = ((R * lane + r) & size) == 0;
                    a[r] = (desc == lower) ? max(a[r], p) : min(a[r], p);
                }
            }
        }
    }
}

// The 16-bit pattern of a float that holds a value of T exactly (the row's max).
template <class T> __device__ __forceinline__ unsigned bnd_bits_of(float f) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float_as_uint(f) >> 16;
    else return static_cast<unsigned>(__half_as_ushort(__float2half_rn(f)));
}

// The order-preserving 16-bit keys of a vector's two elements in word w (0 where the element is not in the row).
template <class T> __device__ __forceinline__ unsigned bnd_key_pair(unsigned w, unsigned valid2) {
    const unsigned lo = (valid2 & 1u) ? key16(w & 0xFFFFu) : 0u;
    const unsigned hi = (valid2 & 2u) ? key16(w >> 16) : 0u;
    return lo | (hi << 16);
}

template <class T, int U, int R>
__global__ void __launch_bounds__(bnd_warps * 32, 1)
    softmax_topk_bound_list_kernel(const T* __restrict__ x, float* __restrict__ probs, std::int32_t* __restrict__ out_idx,
                                   int rows, int V, int K) {
    extern __shared__ uint4 bnd_smem4[];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    unsigned* const lst = reinterpret_cast<unsigned*>(bnd_smem4) + w * bnd_list_smem_words;
    unsigned* const hist = lst + bnd_list_cap;
    uint4* const keys4 = reinterpret_cast<uint4*>(lst);  // the end's vectors as keys (the list's space)
#pragma unroll
    for (int i = 0; i < 8; ++i) hist[8 * lane + i] = 0u;
    __syncwarp();
    const int gstride = gridDim.x * bnd_warps;
    const unsigned lt = bnd_lanemask_lt(lane);
    const uint4 ninf = make_uint4(bnd_type<T>::neg_inf * 0x10001u, bnd_type<T>::neg_inf * 0x10001u,
                                  bnd_type<T>::neg_inf * 0x10001u, bnd_type<T>::neg_inf * 0x10001u);
    for (int r0 = static_cast<int>(blockIdx.x) * bnd_warps + w; r0 < rows; r0 += gstride) {
        [[maybe_unused]] unsigned long long tl_ = FUSEBENCH_BOUND_LIST_TL ? globaltimer_ns() : 0ull;
        const bnd_row g(x + static_cast<std::size_t>(r0) * V, V);
        bnd_stats st;
        int n = 0;         // list entries
        unsigned t = 0u;   // the vote: keys above t join (0 before the first compaction: every vector)
        unsigned kmn = 0xFFFFu, kmx = 0u;  // this lane's smallest and largest appended keys
        const auto compact_list = [&] {
#if FUSEBENCH_BOUND_LIST_TL
            const unsigned long long c0 = globaltimer_ns();
#endif
            t = bnd_compact<FUSEBENCH_BOUND_LIST_APPROX>(lst, n, K, hist, lane, kmn, kmx);
            // every key left is at or above t (the K-th key's ties stay; new ones join above it). (t + 1 here put
            // a kept tie one past the histogram's window, bin -1: session q call 5, fp16 ties K = 50, H200.)
            kmn = t;
#if FUSEBENCH_BOUND_LIST_TL
            if (lane == 0) {
                atomicAdd(&bound_list_phase_ns[1], globaltimer_ns() - c0);
                atomicAdd(&bound_list_phase_ns[7], 1ull);
            }
#endif
        };
        const auto step = [&](const uint4& v, int j, bool ok) {
            const unsigned k = consume<T>(v, st);
            const bool a = ok && k > t;
            const unsigned m = __ballot_sync(full_mask, a);
            if (m == 0u) return;
            if (a) {
                lst[n + __popc(m & lt)] = (k << 16) | static_cast<unsigned>(j);
                kmn = min(kmn, k);
                kmx = max(kmx, k);
            }
            n += __popc(m);
        };
        const auto before_batch = [&] {  // warp-uniform: room for a batch, or an exact compaction
            if (n + 32 * U > bnd_list_cap) compact_list();
        };
        // 1. the row in index order
        stream_row<T, U>(g, ninf, lane, step, before_batch);
        __syncwarp();
        BND_LIST_TL(0);
        // 2. the row's max and sum
        std::int32_t* oi = out_idx + static_cast<std::size_t>(r0) * K;
        float* op = probs + static_cast<std::size_t>(r0) * K;
        float M, S;
        if (!row_total(st, M, S, op, oi, K, lane)) continue;
        const float invS = 1.0f / S;
        // the end's last step: K composites (key << 16 | 0xFFFF - index; 0 pads) sorted, K lanes write
        const auto sort_and_write = [&](unsigned (&a)[R]) {
            bnd_sort_blocked_desc<R>(a, lane);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int i = R * lane + r;
                if (i < K) {
                    const float xv = bnd_type<T>::to_float(bits_of_key(a[r] >> 16));
                    oi[i] = static_cast<std::int32_t>(0xFFFFu - (a[r] & 0xFFFFu));
                    op[i] = fast_exp2((xv - M) * bnd_l2e) * invS;
                }
            }
        };
        // 3. exactly K held vectors (or the whole row, n <= K: then t = 0 and every element is a candidate)
        if (n > K) t = bnd_compact(lst, n, K, hist, lane, kmn, kmx);
        BND_LIST_TL(2);
        int jr[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int li = 32 * r + lane;
            jr[r] = li < n ? static_cast<int>(lst[li] & 0xFFFFu) : -1;
        }
        __syncwarp();
        // 4. the vectors read again as 16-bit keys (0 outside the row), kept over the list where it has the room
        const auto read_keys = [&](int r) {
            const int j = jr[r];
            const uint4 hv = j < 0 ? make_uint4(0, 0, 0, 0) : (j == 0 || j == g.nvec - 1) ? load_edge<T>(g, j) : __ldg(g.v + j);
            const unsigned valid = j >= 0 ? g.valid(j) : 0u;
            return make_uint4(bnd_key_pair<T>(hv.x, valid), bnd_key_pair<T>(hv.y, valid >> 2),
                              bnd_key_pair<T>(hv.z, valid >> 4), bnd_key_pair<T>(hv.w, valid >> 6));
        };
        if constexpr (bnd_list_keys_kept) {
#pragma unroll
            for (int r = 0; r < R; ++r) keys4[32 * r + lane] = read_keys(r);
            __syncwarp();
        }
        const auto vec_keys = [&](int r) {
            if constexpr (bnd_list_keys_kept) return keys4[32 * r + lane];
            else return read_keys(r);
        };
        BND_LIST_TL(3);
        // 5. the exact K-th largest element key t2 among the candidates (keys >= tmin: at least K, one a vector):
        // tmin itself where fewer than K lie above it (ties at the K-th vector key, all-equal rows), else by
        // histograms of the keys above it
        const unsigned tmin = max(t, 1u);
        unsigned cnt_above = 0;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const uint4 kv = vec_keys(r);
#pragma unroll
            for (int e = 0; e < 8; ++e) cnt_above += half_at(kv, e) > tmin ? 1u : 0u;
        }
        cnt_above = __reduce_add_sync(full_mask, cnt_above);
        unsigned above = cnt_above, t2 = tmin;
        if (cnt_above >= static_cast<unsigned>(K)) {
            const unsigned Mkey = key16(bnd_bits_of<T>(M));  // the row's max: every key is at most its key
            t2 = bnd_kth_key(
                [&](auto f) {
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const uint4 kv = vec_keys(r);
#pragma unroll
                        for (int e = 0; e < 8; ++e) {
                            const unsigned k = half_at(kv, e);
                            f(k, k > tmin);
                        }
                    }
                },
                static_cast<unsigned>(K), tmin + 1u, Mkey, hist, lane, above);
        }
        // 6. exactly K composites into the histogram's space: keys above t2, and of those at t2 the first K - above
        // in index order (vector 32 r + lane's elements e: the order r, lane, e)
        const unsigned need_eq = static_cast<unsigned>(K) - above;
        unsigned eq_seen = 0, out = 0;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const uint4 kv = vec_keys(r);
            unsigned ce = 0, cg = 0;
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const unsigned k = half_at(kv, e);
                ce += k == t2 ? 1u : 0u;
                cg += k > t2 ? 1u : 0u;
            }
            const unsigned ie = warp_inclusive_sum(ce, lane);
            const unsigned eq_before = eq_seen + ie - ce;
            const unsigned take = eq_before >= need_eq ? 0u : min(ce, need_eq - eq_before);
            const unsigned wc = cg + take;
            const unsigned iw = warp_inclusive_sum(wc, lane);
            unsigned pos = out + iw - wc, taken = 0;
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const unsigned k = half_at(kv, e);
                bool emit = k > t2;
                if (k == t2 && taken < take) {
                    emit = true;
                    ++taken;
                }
                if (emit) {
                    const unsigned idx = static_cast<unsigned>(8 * jr[r] + e - g.h);
                    hist[pos++] = (k << 16) | (0xFFFFu - idx);
                }
            }
            out += __shfl_sync(full_mask, iw, 31);
            eq_seen += __shfl_sync(full_mask, ie, 31);
        }
        __syncwarp();
        BND_LIST_TL(4);
        // 7. one sort of the K (padded with 0: below every composite) and K lanes write
        unsigned a[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = R * lane + r;
            a[r] = i < K ? hist[i] : 0u;
        }
        __syncwarp();
#pragma unroll
        for (int r = 0; r < R; ++r) hist[R * lane + r] = 0u;
        __syncwarp();
        sort_and_write(a);
        BND_LIST_TL(5);
    }
}

template <class T, int U, int R> void launch_bound_list(const softmax_topk_args& a, cudaStream_t stream) {
    int dev = 0;
    check_call(cudaGetDevice(&dev), "launch_softmax_topk_fused_bound: cudaGetDevice");
    const int grid = static_cast<int>(std::min<std::int64_t>((a.rows + bnd_warps - 1) / bnd_warps, cached_sm_count(dev)));
    constexpr int smem = bnd_warps * bnd_list_smem_words * 4;
    auto* kern = softmax_topk_bound_list_kernel<T, U, R>;
    check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),  // per device: every launch
               "softmax_topk_bound_list_kernel: cudaFuncSetAttribute(shared memory)");
    kern<<<grid, bnd_warps * 32, smem, stream>>>(static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices,
                                                 static_cast<int>(a.rows), static_cast<int>(a.V), static_cast<int>(a.K));
    check_launch("softmax_topk_bound_list_kernel");
}

template <class T, int U, int NS> void launch_bound(const softmax_topk_args& a, cudaStream_t stream) {
    int dev = 0;
    check_call(cudaGetDevice(&dev), "launch_softmax_topk_fused_bound: cudaGetDevice");
    const int grid = static_cast<int>(std::min<std::int64_t>((a.rows + bnd_warps - 1) / bnd_warps, cached_sm_count(dev)));
    softmax_topk_bound_kernel<T, U, NS><<<grid, bnd_warps * 32, 0, stream>>>(static_cast<const T*>(a.d_logits), a.d_probs,
                                                                       a.d_indices, static_cast<int>(a.rows),
                                                                       static_cast<int>(a.V), static_cast<int>(a.K));
    check_launch("softmax_topk_bound_kernel");
}

template <class T> void launch_bound_t(const softmax_topk_args& a, cudaStream_t stream) {
    // U: 3 steps a batch at K <= 16, 4 above (session k's probe, H200 and H100: NOTES "v9 fused_bound")
    // NS: the vote floor's sample, 4 vectors a lane at K <= 16, none above (bnd_sample_after)
    // K > 32: the list kernel, its end's sort R composites a lane
    if (a.K <= 16) launch_bound<T, 3, 4>(a, stream);
    else if (a.K <= 32) launch_bound<T, 4, 0>(a, stream);
    else if (a.K <= 64) launch_bound_list<T, bnd_list_u, 2>(a, stream);
    else if (a.K <= 128) launch_bound_list<T, bnd_list_u, 4>(a, stream);
    else launch_bound_list<T, bnd_list_u, 8>(a, stream);
}

}  // namespace

void launch_softmax_topk_fused_bound(const softmax_topk_args& a, cudaStream_t stream) {
    topk_detail::validate(a, softmax_topk_bound_max_k, "launch_softmax_topk_fused_bound");
    if (a.type == elem::f32) {
        throw std::invalid_argument("launch_softmax_topk_fused_bound: bf16 / fp16 logits only (fp32 rows: fused_stream)");
    }
    if (a.V > softmax_topk_bound_max_v) {
        throw std::invalid_argument("launch_softmax_topk_fused_bound: V " + std::to_string(a.V) + " is more than " +
                                    std::to_string(softmax_topk_bound_max_v) + " (16-bit vector and element indices)");
    }
    if (a.rows == 0) return;
    if (a.type == elem::bf16) launch_bound_t<__nv_bfloat16>(a, stream);
    else launch_bound_t<__half>(a, stream);
}

}  // namespace fusebench::kernels
