// Diagnostic (not part of the build). Included by probes/bound_check.cu.
//
// Fused softmax + top-k, v9 `fused_bound`: fused_stream's one warp a row (no block barriers), with
// v8's order-free bound (the K-th largest vector maximum) instead of a running threshold and its
// candidate bookkeeping. v8 (fused_resident) had the bound but paid ~14 block barriers a row over a
// row held in shared memory (NOTES.md, "v8"); fused_stream has no barriers but spends half its
// instructions at K = 256 on inserts, compactions, samples and its row end (NOTES.md, "big16").
//
// A persistent grid, one block of NW warps an SM; warp w of the grid takes rows w, w + NW G, ...
// Per row (16-byte vectors: the aligned 16-byte segments that hold the row; the first and the last
// read element by element, the neighbours' elements -inf):
// 1. the stream: for every vector its maximum (packed 16-bit max, NaN ignored), one rescale of the
//    lane's sum when it rises, the eight terms exp2(x log2e - c) into the lane's sum, and the
//    maximum's order-preserving 16-bit key into the warp's key array in shared memory (2 bytes a
//    vector: 12.6 KB for V = 50257). Nothing else: no threshold, no vote, no candidates;
// 2. the row's max M and sum S (lanes merged; rows with NaN or +inf, or all -inf, have no finite
//    softmax and get NaN and indices 0..K-1);
// 3. t: a histogram of the keys' distances below M's key (d = key(M) - key, 256 bins of 2^sh keys;
//    wider bins, then a refinement, where the first window holds fewer than K) gives a key t with at
//    least K vectors at or above it. Every element of the top K lies in a vector whose key is >= the
//    K-th largest key, in any order of the row;
// 4. the list: the vectors whose key is >= t, in index order (in place over the keys); where a bin of
//    ties holds too many (all-equal rows), t is exact and the ties of lowest index fill the list to K;
// 5. the gather: those vectors read again (L2 or DRAM: ~K x 32 bytes a row), their elements >= t
//    are the candidates; the exact K-th by (distance, index) from one or two histograms; exactly K
//    candidates kept in index order, then a stable counting sort by distance (one or two 8-bit
//    digits) writes them in output order with exp2((x - M) log2e) / S.
// Per row ~14k warp instructions at bf16 V = 50257 (fused_stream: 20-30k), in any order of the row.
// bf16 / fp16 logits, V <= 65536 (16-bit indices in the sort), K <= 1024. Needs sm_90 (one block of
// NW warps with NW x ~13.6 KB of shared memory).
#include "kernels/softmax_topk/fused_bound.cu"  // v9e, and the helpers v9a / v9b share with it
#include "kernels/common/launch_check.hpp"
#include "kernels/common/mbarrier.cuh"
#include "kernels/softmax_topk/select.cuh"
#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#ifndef FUSEBENCH_BOUND_NW
#define FUSEBENCH_BOUND_NW 16
#endif
#ifndef FUSEBENCH_BOUND_U
#define FUSEBENCH_BOUND_U 4
#endif
#ifndef FUSEBENCH_BOUND_PF
#define FUSEBENCH_BOUND_PF 8
#endif
// Diagnostic: STREAM_ONLY = 1 ends a row after its max and sum (the output then wrong: the stream's own time).
// (Call 2's AHEAD, an L2 prefetch ahead of each batch, was slower and is at 81b3c14.)
#ifndef FUSEBENCH_BOUND_STREAM_ONLY
#define FUSEBENCH_BOUND_STREAM_ONLY 0
#endif

namespace fusebench::kernels {


namespace bound_detail {

constexpr unsigned full = full_mask;  // the library's names (select.cuh, fused_bound.cu)
constexpr float l2e = bnd_l2e;
constexpr int G = 8;  // gathered vectors a lane holds at once (256 a warp)

__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}


// The element types through the library's bnd_type (fused_bound.cu), with the two more the probe uses.
template <class T> struct f16t : bnd_type<T> {
    __device__ static unsigned from_float(float f) {  // f is a value of T
        if constexpr (std::is_same_v<T, __half>) return __half_as_ushort(__float2half_rn(f));
        else return __float_as_uint(f) >> 16;
    }
    __device__ static float elem(const uint4& v, int e) { return elem_of<T>(v, e); }
};

using stats = bnd_stats;
using row_geo = bnd_row;

template <class T> __device__ __forceinline__ uint4 load_vec(const row_geo& g, int j) {
    if (j == 0 || j == g.nvec - 1) return load_edge<T>(g, j);
    return __ldg(g.v + j);
}

// Histogram windows: a key (or element) at distance d counts in bin (d - base) >> sh when that is < 256.
struct window {
    unsigned base, sh;
    __device__ int bin(unsigned d) const { return d >= base && ((d - base) >> sh) < 256u ? static_cast<int>((d - base) >> sh) : -1; }
};

// The first bin b of hist (256 words) where the running count reaches need: returns b (-1 if the
// window holds fewer), below = the count in bins < b, in_b = hist[b] (warp-uniform). Clears nothing.
__device__ __forceinline__ int find_bin(const unsigned* hist, unsigned need, int lane, unsigned& below, unsigned& in_b,
                                        unsigned& total) {
    const uint4 a = reinterpret_cast<const uint4*>(hist)[2 * lane], b = reinterpret_cast<const uint4*>(hist)[2 * lane + 1];
    const unsigned c[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    unsigned mine = 0;
#pragma unroll
    for (int q = 0; q < 8; ++q) mine += c[q];
    const unsigned incl = warp_inclusive_sum(mine, lane);
    total = __shfl_sync(full, incl, 31);
    const unsigned excl = incl - mine;
    const bool here = excl < need && incl >= need;
    const unsigned who = __ballot_sync(full, here);
    if (who == 0u) return -1;
    const int src = __ffs(who) - 1;
    int bb = 0;
    unsigned bl = 0, ib = 0;
    if (lane == src) {
        unsigned run = excl;
        int found = -1;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
            if (found < 0 && run + c[q] >= need) {
                found = q;
                bl = run;
                ib = c[q];
            }
            run += c[q];
        }
        bb = 8 * lane + found;
    }
    below = __shfl_sync(full, bl, src);
    in_b = __shfl_sync(full, ib, src);
    return __shfl_sync(full, bb, src);
}

// hist[b] := the count in bins < b (exclusive prefix), in place; the returned total.
__device__ __forceinline__ void exclusive_in_place(unsigned* hist, int lane) {
    uint4* h4 = reinterpret_cast<uint4*>(hist);
    const uint4 a = h4[2 * lane], b = h4[2 * lane + 1];
    unsigned c[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    unsigned mine = 0;
#pragma unroll
    for (int q = 0; q < 8; ++q) mine += c[q];
    const unsigned incl = warp_inclusive_sum(mine, lane);
    unsigned run = incl - mine;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
        const unsigned x = c[q];
        c[q] = run;
        run += x;
    }
    h4[2 * lane] = make_uint4(c[0], c[1], c[2], c[3]);
    h4[2 * lane + 1] = make_uint4(c[4], c[5], c[6], c[7]);
}

__device__ __forceinline__ void clear_hist(unsigned* hist, int lane) {
    reinterpret_cast<uint4*>(hist)[2 * lane] = make_uint4(0, 0, 0, 0);
    reinterpret_cast<uint4*>(hist)[2 * lane + 1] = make_uint4(0, 0, 0, 0);
    if (lane == 0) hist[256] = 0;
    __syncwarp();
}

// Stable counting scatter of n entries (d << 16 | index) by the digit (d >> dsh) & 255, in array
// order: pos = cursor[digit] + rank among the step's equal digits. dst(pos, entry).
template <class Dst>
__device__ __forceinline__ void stable_scatter(const unsigned* src, int n, unsigned dsh, unsigned* cur, int lane, Dst dst) {
    for (int b = 0; b < n; b += 32) {
        const bool ok = b + lane < n;
        const unsigned e = ok ? src[b + lane] : 0u;
        const unsigned dg = ok ? ((e >> 16) >> dsh) & 255u : 256u + static_cast<unsigned>(lane);
        const unsigned peers = __match_any_sync(full, dg);
        const int leader = __ffs(peers) - 1;
        unsigned base = 0;
        if (ok && lane == leader) base = atomicAdd(cur + dg, static_cast<unsigned>(__popc(peers)));
        base = __shfl_sync(full, base, leader);
        if (ok) dst(static_cast<int>(base) + __popc(peers & lanemask_lt()), e);
    }
    __syncwarp();
}


// Diagnostic phase timeline (-DFUSEBENCH_BOUND_TL=1): lane 0 of every warp adds its %globaltimer deltas per
// phase; slot 7 counts the in-stream compactions.
#ifndef FUSEBENCH_BOUND_TL
#define FUSEBENCH_BOUND_TL 0
#endif
__device__ unsigned long long bound_phase_ns[8];
__device__ __forceinline__ unsigned long long gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define BOUND_TL(ph)                                           \
    do {                                                       \
        if constexpr (FUSEBENCH_BOUND_TL != 0) {               \
            if (lane == 0) {                                   \
                const unsigned long long now_ = gtime();       \
                atomicAdd(&bound_phase_ns[ph], now_ - tl_t_);  \
                tl_t_ = now_;                                  \
            }                                                  \
        }                                                      \
    } while (0)

// The exact distance d* among n items (item i's distance get(i) in [0, dmax], i strided over the lanes)
// where count(d < d*) = below < need <= below + at. Histograms of 256 bins of 2^sh distances, refined.
template <class Get>
__device__ __forceinline__ unsigned kth_distance(Get get, int n, unsigned dmax, unsigned need, unsigned* hist, int lane,
                                                 unsigned& below, unsigned& at) {
    unsigned sh = 0;
    while ((dmax >> sh) >= 256u) ++sh;
    window win{0u, sh};
    below = 0;
    for (;;) {
        clear_hist(hist, lane);
        for (int i = lane; i < n; i += 32) {
            const int b = win.bin(get(i));
            if (b >= 0) atomicAdd(hist + b, 1u);
        }
        __syncwarp();
        unsigned bl = 0, tot = 0;
        const int b = find_bin(hist, need - below, lane, bl, at, tot);
        if (b < 0) __trap();  // fewer than need items: a bug
        below += bl;
        if (win.sh == 0) return win.base + static_cast<unsigned>(b);
        win = window{win.base + (static_cast<unsigned>(b) << win.sh), win.sh > 8 ? win.sh - 8 : 0u};
    }
}

// The list's exact top K vectors in place (entries key << 16 | vector, in index order): every key above
// the K-th largest t, and of those equal to t the first K - above; returns t.
__device__ __forceinline__ unsigned compact_list(unsigned* lst, int& n, int K, unsigned* hist, int lane) {
    unsigned kmax = 0;
    for (int i = lane; i < n; i += 32) kmax = max(kmax, lst[i] >> 16);
    kmax = __reduce_max_sync(full, kmax);
    unsigned kmin = 0xFFFFu;
    for (int i = lane; i < n; i += 32) kmin = min(kmin, lst[i] >> 16);
    kmin = __reduce_min_sync(full, kmin);
    unsigned above = 0, at = 0;
    const unsigned d = kth_distance([&](int i) { return kmax - (lst[i] >> 16); }, n, kmax - kmin, static_cast<unsigned>(K),
                                    hist, lane, above, at);
    const unsigned t = kmax - d;
    n = bnd_keep_top(lst, n, t, static_cast<unsigned>(K) - above, lane);  // fused_bound.cu (the library's list kernel)
    return t;
}

// Step 5 of a row whose list (vector(i) for i < nl, in index order) holds every vector with key > t_key and
// enough of those equal to it: the gather, the exact K-th candidate, K candidates in index order, the
// stable sort by distance into the output.
template <class T, class Vec>
__device__ __forceinline__ void emit_topk(const row_geo& g, Vec vector_of, int nl, unsigned t_key, unsigned Mkey, float M,
                                          float invS, int K, unsigned* cand, unsigned* tmp, unsigned* hist, int lane,
                                          float* op, std::int32_t* oi, unsigned long long& tl_t_) {
    // (key 0 and the keys below -inf's are NaNs, never in a finite row: everything is >= t there)
    const float t_f = t_key <= key16(f16t<T>::neg_inf) ? -INFINITY : f16t<T>::to_float(bits_of_key(t_key));
    const unsigned d_t = Mkey - t_key;
    uint4 vv[G];
    unsigned cm[G];  // candidate elements of each held vector (bits e)
    int jv[G];
    int loaded = -1;
    const auto hold = [&](int c0) {  // vectors c0 .. c0 + 32 G - 1 of the list into registers
        if (loaded == c0) return;
        loaded = c0;
#pragma unroll
        for (int q = 0; q < G; ++q) {
            const int li = c0 + q * 32 + lane;
            jv[q] = li < nl ? vector_of(li) : -1;
            vv[q] = jv[q] >= 0 ? load_vec<T>(g, jv[q]) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int q = 0; q < G; ++q) {
            unsigned m = 0;
            if (jv[q] >= 0) {
                m = g.valid(jv[q]);
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    if (!(f16t<T>::elem(vv[q], e) >= t_f)) m &= ~(1u << e);
            }
            cm[q] = m;
        }
    };
    const auto elem_d = [&](int q, int e) {
        const unsigned w32 = (e >> 1) == 0 ? vv[q].x : (e >> 1) == 1 ? vv[q].y : (e >> 1) == 2 ? vv[q].z : vv[q].w;
        return Mkey - key16((e & 1) ? (w32 >> 16) : (w32 & 0xFFFFu));
    };
    hold(0);
    BOUND_TL(3);
    // the K-th candidate's distance dK (exact), L = candidates nearer than dK
    unsigned she = 0;
    while ((d_t >> she) >= 256u) ++she;
    window cw{0u, she};
    unsigned L = 0;
    int cb = -1;
    for (;;) {
        clear_hist(hist, lane);
        for (int c0 = 0; c0 < nl; c0 += 32 * G) {
            hold(c0);
#pragma unroll
            for (int q = 0; q < G; ++q) {
                unsigned m = cm[q];
                while (m != 0u) {
                    const int e = __ffs(m) - 1;
                    m &= m - 1u;
                    const int bb = cw.bin(elem_d(q, e));
                    if (bb >= 0) atomicAdd(hist + bb, 1u);
                }
            }
        }
        __syncwarp();
        unsigned bl = 0, nb = 0, tot = 0;
        cb = find_bin(hist, static_cast<unsigned>(K) - L, lane, bl, nb, tot);
        if (cb < 0) __trap();  // fewer than K candidates: a bug
        L += bl;
        if (cw.sh == 0) break;
        cw = window{cw.base + (static_cast<unsigned>(cb) << cw.sh), cw.sh > 8 ? cw.sh - 8 : 0u};
    }
    const unsigned dK = cw.base + static_cast<unsigned>(cb);
    const unsigned need = static_cast<unsigned>(K) - L;
    BOUND_TL(4);
    // exactly K candidates, in index order: d < dK, and the first `need` of d == dK
    {
        int n = 0;
        unsigned eqn = 0;
        for (int c0 = 0; c0 < nl; c0 += 32 * G) {
            hold(c0);
#pragma unroll
            for (int q = 0; q < G; ++q) {
                if (c0 + q * 32 >= nl) break;  // warp-uniform
                unsigned m = cm[q], sel = 0, eq = 0;
                while (m != 0u) {
                    const int e = __ffs(m) - 1;
                    m &= m - 1u;
                    const unsigned d = elem_d(q, e);
                    sel |= (d < dK ? 1u : 0u) << e;
                    eq |= (d == dK ? 1u : 0u) << e;
                }
                // one scan: the kept-for-sure count (low half) and the ties (high half) of the lanes before
                const unsigned mine = static_cast<unsigned>(__popc(sel)) | (static_cast<unsigned>(__popc(eq)) << 16);
                const unsigned incl = warp_inclusive_sum(mine, lane);
                const unsigned tot2 = __shfl_sync(full, incl, 31);
                const unsigned ex = incl - mine;
                // the ties kept: ranks eqn + (ties before) .. below need; kept before this lane
                const unsigned eq_before = eqn + (ex >> 16);
                const unsigned eq_keep_before = eq_before < need ? min(ex >> 16, need - eqn) : (eqn < need ? need - eqn : 0u);
                unsigned keep = sel, er = eq_before;
                for (unsigned mm = eq; mm != 0u; mm &= mm - 1u) {
                    if (er < need) keep |= mm & (0u - mm);
                    ++er;
                }
                int pos = n + static_cast<int>((ex & 0xFFFFu) + eq_keep_before);
                for (unsigned mm = keep; mm != 0u; mm &= mm - 1u) {
                    const int e = __ffs(mm) - 1;
                    cand[pos++] = (elem_d(q, e) << 16) | static_cast<unsigned>(8 * jv[q] + e - g.h);
                }
                const unsigned eq_tot = tot2 >> 16;
                n += static_cast<int>((tot2 & 0xFFFFu) + (eqn < need ? min(eq_tot, need - eqn) : 0u));
                eqn += eq_tot;
            }
        }
        __syncwarp();
    }
    BOUND_TL(5);
    // the stable sort by distance into the output: one 8-bit digit, or the low then the high
    const auto write_out = [&](int pos, unsigned e) {
        const unsigned kk = Mkey - (e >> 16);
        const float xv = f16t<T>::to_float(bits_of_key(kk));
        oi[pos] = static_cast<std::int32_t>(e & 0xFFFFu);
        op[pos] = fast_exp2((xv - M) * l2e) * invS;
    };
    const auto digit_pass = [&](const unsigned* src, unsigned dsh, auto dst) {
        clear_hist(hist, lane);
        for (int i = lane; i < K; i += 32) atomicAdd(hist + (((src[i] >> 16) >> dsh) & 255u), 1u);
        __syncwarp();
        exclusive_in_place(hist, lane);
        __syncwarp();
        stable_scatter(src, K, dsh, hist, lane, dst);
    };
    if (dK < 256u) {
        digit_pass(cand, 0u, write_out);
    } else {
        digit_pass(cand, 0u, [&](int pos, unsigned e) { tmp[pos] = e; });
        digit_pass(tmp, 8u, write_out);
    }
    __syncwarp();
    BOUND_TL(6);
}

// InStream = false (call 1's form): every vector's key into a key array, t and the list from whole passes over
// it at the row's end. InStream = true: each vector whose key reaches the running threshold goes to the list
// (key << 16 | vector) at once; when the list is full, an exact compaction keeps its top K vectors and raises
// the threshold to their K-th key; the row's end compacts once more.
template <class T, int NW, int U, int PF, bool InStream>
__global__ void __launch_bounds__(NW * 32, 1)
    bound_kernel(const T* __restrict__ x, float* __restrict__ probs, std::int32_t* __restrict__ out_idx, int rows, int V,
                 int K, int region_words, int lcap) {
    extern __shared__ __align__(16) unsigned smem[];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    unsigned* region = smem + static_cast<std::size_t>(w) * (region_words + 260);
    unsigned* hist = region + region_words;  // 257 words (+ pad)
    auto* keys = reinterpret_cast<unsigned short*>(region);
    unsigned* lst = region;  // InStream: lcap entries, then the candidates
    const int gstride = gridDim.x * NW;
    const unsigned lt = lanemask_lt();
    unsigned long long tl_t_ = FUSEBENCH_BOUND_TL ? gtime() : 0ull;
    const uint4 ninf = make_uint4(f16t<T>::neg_inf * 0x10001u, f16t<T>::neg_inf * 0x10001u, f16t<T>::neg_inf * 0x10001u,
                                  f16t<T>::neg_inf * 0x10001u);

    for (int r = blockIdx.x * NW + w; r < rows; r += gstride) {
        const row_geo g(x + static_cast<std::size_t>(r) * V, V);
        stats st;
        int n = 0;                 // InStream: the list's entries (warp-uniform)
        unsigned t_app = 0;        // InStream: vectors with a key above it join the list...
        bool strict = false;       // ... and equal to it while not strict
        // one step: lane's vector j (ok) into the statistics, its key stored or voted
        const auto step = [&](const uint4& v, int j, bool ok) {
            const unsigned k = consume<T>(v, st);
            if constexpr (!InStream) {
                if (ok) keys[j] = static_cast<unsigned short>(k);
            } else {
                const bool a = ok && (k > t_app || (k == t_app && !strict));
                const unsigned b = __ballot_sync(full, a);
                if (b != 0u) {
                    if (a) lst[n + __popc(b & lt)] = (k << 16) | static_cast<unsigned>(j);
                    n += __popc(b);
                }
            }
        };
        const auto room = [&](int more) {  // InStream: room for `more` entries
            if constexpr (InStream) {
                if (n + more > lcap) {
                    __syncwarp();
                    t_app = compact_list(lst, n, K, hist, lane);
                    strict = true;
                    if constexpr (FUSEBENCH_BOUND_TL != 0) {
                        if (lane == 0) atomicAdd(&bound_phase_ns[7], 1ull);
                    }
                }
            }
        };
        // 1. the stream (the library's stream_row: the list in index order), room for a batch before each
        stream_row<T, U>(g, ninf, lane, step, [&] { room(32 * U); });
        // the next row's first steps into L2 while this row ends
        if (PF > 0 && r + gstride < rows) {
            const row_geo gn(x + static_cast<std::size_t>(r + gstride) * V, V);
#pragma unroll
            for (int i = 0; i < PF; ++i) {
                const int j = 1 + i * 32 + lane;
                if (j < gn.nvec) asm volatile("prefetch.global.L2 [%0];" ::"l"(gn.v + j));
            }
        }
        BOUND_TL(0);
        // 2. the row's max and sum (the library's row_total)
        std::int32_t* oi = out_idx + static_cast<std::size_t>(r) * K;
        float* op = probs + static_cast<std::size_t>(r) * K;
        float M, S;
        if (!row_total(st, M, S, op, oi, K, lane)) {
            __syncwarp();
            BOUND_TL(1);
            continue;
        }
        if constexpr (FUSEBENCH_BOUND_STREAM_ONLY != 0) {
            if (lane == 0) {
                op[0] = S;
                oi[0] = __float_as_int(M) + n;
            }
            continue;
        }
        const float invS = 1.0f / S;
        const unsigned Mkey = key16(f16t<T>::from_float(M));
        __syncwarp();  // the keys' / list's stores before the passes
        BOUND_TL(1);

        if constexpr (InStream) {
            // 3-4. the list's exact top K vectors (all of them when the row has K or fewer)
            unsigned t_key = strict ? t_app : 0u;  // exactly K after the last compaction, or every vector
            if (n > K) t_key = compact_list(lst, n, K, hist, lane);
            BOUND_TL(2);
            unsigned* cand = region + ((lcap + 3) & ~3);
            emit_topk<T>(g, [&](int i) { return static_cast<int>(lst[i] & 0xFFFFu); }, n, t_key, Mkey, M, invS, K, cand,
                         cand + K, hist, lane, op, oi, tl_t_);
        } else {
            // 3. t over the vector keys
            const int nvec = g.nvec, npairs = (nvec + 1) >> 1;
            const auto* keys32 = reinterpret_cast<const unsigned*>(region);
            const auto key_hist = [&](window win) {
                clear_hist(hist, lane);
                for (int p = lane; p < npairs; p += 32) {
                    const unsigned wd = keys32[p];
                    const int b0 = win.bin(Mkey - (wd & 0xFFFFu));
                    const int b1 = 2 * p + 1 < nvec ? win.bin(Mkey - (wd >> 16)) : -1;
                    if (b0 >= 0) atomicAdd(hist + b0, 1u);
                    if (b1 >= 0) atomicAdd(hist + b1, 1u);
                }
                __syncwarp();
            };
            // the list's room: one gather chunk (32 G vectors) where K fits it, so no pass gathers twice
            const int lfit = K <= 32 * G ? min(lcap, 32 * G) : lcap;
            unsigned above = 0, in_b = 0, total = 0, below = 0;
            window win{0u, std::is_same_v<T, __half> ? 3u : 0u};
            key_hist(win);
            int b = find_bin(hist, static_cast<unsigned>(K), lane, below, in_b, total);
            if (b < 0) {  // the first window holds fewer than K: every distance, 256-key bins
                win = window{0u, 8u};
                key_hist(win);
                b = find_bin(hist, static_cast<unsigned>(K), lane, below, in_b, total);
            }
            const bool all = b < 0;  // fewer than K vectors: the whole row is the list
            above = below;
            // narrow the bin while it holds more than the list can take
            while (!all && above + in_b > static_cast<unsigned>(lfit) && win.sh > 0) {
                const window fine{win.base + (static_cast<unsigned>(b) << win.sh), win.sh > 8 ? win.sh - 8 : 0u};
                win = fine;
                key_hist(win);
                b = find_bin(hist, static_cast<unsigned>(K) - above, lane, below, in_b, total);
                if (b < 0) __trap();  // the bin's refinement lost keys: a bug
                above += below;
            }
            // t: the lowest key of bin b (all keys >= t: above + in_b vectors); ranked: too many ties at t
            const unsigned d_t = all ? Mkey : win.base + ((static_cast<unsigned>(b) + 1u) << win.sh) - 1u;
            const unsigned t_key = d_t >= Mkey ? 0u : Mkey - d_t;
            const bool ranked = !all && above + in_b > static_cast<unsigned>(lfit);  // win.sh == 0: t is exact
            const unsigned need_eq = ranked ? static_cast<unsigned>(K) - above : 0u;

            // 4. the list (vector indices, in index order, in place over the keys)
            auto* list = reinterpret_cast<unsigned short*>(region);
            int nl = 0;
            {
                unsigned eq_seen = 0;
                const int expect = all ? nvec : ranked ? K : static_cast<int>(above + in_b);
                for (int p0 = 0; p0 < npairs && nl < expect; p0 += 32) {
                    const int p = p0 + lane;
                    const unsigned wd = p < npairs ? keys32[p] : 0u;
                    const unsigned k0 = wd & 0xFFFFu, k1 = wd >> 16;
                    const bool v0 = p < npairs, v1 = 2 * p + 1 < nvec;
                    bool s0, s1;
                    if (!ranked) {
                        s0 = v0 && k0 >= t_key;
                        s1 = v1 && k1 >= t_key;
                    } else {
                        const bool e0 = v0 && k0 == t_key, e1 = v1 && k1 == t_key;
                        const unsigned be0 = __ballot_sync(full, e0), be1 = __ballot_sync(full, e1);
                        const unsigned r0 = eq_seen + __popc(be0 & lt) + __popc(be1 & lt);
                        s0 = (v0 && k0 > t_key) || (e0 && r0 < need_eq);
                        s1 = (v1 && k1 > t_key) || (e1 && r0 + (e0 ? 1u : 0u) < need_eq);
                        eq_seen += __popc(be0) + __popc(be1);
                    }
                    const unsigned b0 = __ballot_sync(full, s0), b1 = __ballot_sync(full, s1);
                    const int pos = nl + __popc(b0 & lt) + __popc(b1 & lt);
                    if (s0) list[pos] = static_cast<unsigned short>(2 * p);
                    if (s1) list[pos + (s0 ? 1 : 0)] = static_cast<unsigned short>(2 * p + 1);
                    nl += __popc(b0) + __popc(b1);
                }
                __syncwarp();
            }
            BOUND_TL(2);
            unsigned* cand = region + ((((2 * lcap + 3) / 4) + 3) & ~3);  // after the list, 16-byte aligned
            emit_topk<T>(g, [&](int i) { return static_cast<int>(list[i]); }, nl, t_key, Mkey, M, invS, K, cand, cand + K, hist,
                         lane, op, oi, tl_t_);
        }
    }
}

template <class T, bool InStream> void launch_t(const softmax_topk_args& a, cudaStream_t stream) {
    constexpr int NW = FUSEBENCH_BOUND_NW, U = FUSEBENCH_BOUND_U, PF = FUSEBENCH_BOUND_PF;
    const int V = static_cast<int>(a.V), K = static_cast<int>(a.K);
    const int nvec_max = (V + 7 + 7) / 8;
    int lcap, words;
    if (InStream) {
        // the list (a batch of appends beyond 2 K before a compaction), then K candidates and K sort temporaries
        lcap = (2 * K + 32 * U + 32 + 3) & ~3;
        words = lcap + 2 * K + 4;
    } else {
        lcap = std::max(2 * K, K + 128);
        // keys (2 bytes a vector), or the list + K candidates + K sort temporaries after it
        words = std::max((2 * nvec_max + 15) / 16 * 4, (((2 * lcap + 3) / 4 + 3) & ~3) + 2 * K + 4);
    }
    const int region_words = (words + 3) & ~3;
    const std::size_t smem = static_cast<std::size_t>(NW) * (region_words + 260) * 4;
    int dev = 0;
    check_call(cudaGetDevice(&dev), "launch_softmax_topk_fused_bound: cudaGetDevice");
    if (static_cast<int>(smem) > cached_max_smem_optin(dev)) {
        throw std::invalid_argument("launch_softmax_topk_fused_bound: V " + std::to_string(V) + ", K " + std::to_string(K) +
                                    " need " + std::to_string(smem) + " bytes of shared memory for " + std::to_string(NW) +
                                    " warps, more than the device's " + std::to_string(cached_max_smem_optin(dev)));
    }
    auto kern = bound_kernel<T, NW, U, PF, InStream>;
    check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
               "bound_kernel: cudaFuncSetAttribute(shared memory)");
    const int grid = static_cast<int>(std::min<std::int64_t>((a.rows + NW - 1) / NW, cached_sm_count(dev)));
    kern<<<grid, NW * 32, smem, stream>>>(static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices, static_cast<int>(a.rows),
                                          V, K, region_words, lcap);
    check_launch("bound_kernel");
}

// v9c (the K <= 32 vectors held in registers with their data), v9d (v9c fed by bulk copies) and v9e (only the
// composites held; now the library's kernels/softmax_topk/fused_bound.cu, variant `lib` of bound_check.cu) were
// here until 81b3c14: `git show 81b3c14:kernels/softmax_topk/probes/bound_kernel.cu` (mode 2 / 3, the macros
// FUSEBENCH_BOUND32_HOLD / _U / _NW / _S / _CH) is the source of session k's calls 4-7.

}  // namespace bound_detail

// mode 1: the list built in the stream (v9b); 0: call 1's key array and end-of-row passes (v9a).
void launch_softmax_topk_bound_probe(const softmax_topk_args& a, cudaStream_t stream, int mode = 1) {
    const bool in_stream = mode == 1;
    topk_detail::validate(a, softmax_topk_max_k, "launch_softmax_topk_bound_probe");
    if (a.type == elem::f32) throw std::invalid_argument("launch_softmax_topk_fused_bound: bf16 / fp16 logits only");
    if (a.V > softmax_topk_bound_max_v) {
        throw std::invalid_argument("launch_softmax_topk_fused_bound: V " + std::to_string(a.V) + " is more than " +
                                    std::to_string(softmax_topk_bound_max_v) + " (16-bit indices in the sort)");
    }
    if (a.rows == 0) return;
    if (mode == 2 || mode == 3) {
        throw std::invalid_argument("launch_softmax_topk_bound_probe: modes 2 / 3 (v9c / v9d) are in 81b3c14's probe; v9e is "
                                    "the library's launch_softmax_topk_fused_bound");
    }
    if (a.type == elem::bf16) {
        if (in_stream) bound_detail::launch_t<__nv_bfloat16, true>(a, stream);
        else bound_detail::launch_t<__nv_bfloat16, false>(a, stream);
    } else {
        if (in_stream) bound_detail::launch_t<__half, true>(a, stream);
        else bound_detail::launch_t<__half, false>(a, stream);
    }
}

}  // namespace fusebench::kernels
