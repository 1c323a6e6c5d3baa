// Diagnostic (not part of the build; measured and not adopted: kernels/softmax_topk/NOTES.md, "v8
// fused_resident"). Included by probes/resident_check.cu. The form of commit e4ac3d2 (call 3), the
// fastest measured; 0debac3 has call 4's changes (slower).
//
// Fused softmax + top-k, v8 `fused_resident`: a 16-bit row resident in one block's shared memory,
// selected with a bound that holds in any order of the row, while the copy engine streams the next
// row. fused_smem (v7) put the row in shared memory too, but split it over a cluster and ran each
// row's phases under cluster barriers in 8 warps: 11-24 us a row against ~2-3 us of streaming
// (NOTES.md, v7). Here one block of 16 warps owns a whole row (no cluster), and the per-row work is
// two passes over shared memory plus selects over a few thousand keys.
//
// A persistent grid, one block an SM; block b takes rows b, b + G, b + 2G, ... Two row buffers: when
// a row is done, thread 0 issues the row two ahead into its buffer (16 KB bulk copies on an
// mbarrier; the 16-byte segments that hold the row, the neighbours' bytes in them ignored), so DRAM
// streams rows r + 1 and r + 2 while the block selects row r. Per row:
// 1. pass 1: each thread's 16-byte vectors (vector v = j * 512 + thread), the maximum of each vector
//    (packed 16-bit max, NaN ignored) kept in registers as an order-preserving 16-bit key;
// 2. the row max, and t = the K-th largest vector maximum (two 8-bit digit histograms over the
//    vector maxima). At least K elements are >= t (one in each of the K top vectors), and every
//    element > t lies in one of the fewer than K vectors whose maximum is > t: at most 8 (K - 1) of
//    them, in any order of the row;
// 3. pass 2: the sum of exp(x - max) over the row, and in the vectors whose maximum reaches t the
//    elements > t appended as (key, ~index) composites and those == t counted;
// 4. fewer than K above t: t is the K-th key; the ties of lowest index join (an in-order scan of the
//    vectors that reach t). More than the 4096 candidates stored (only K > 512, rows with the large
//    values packed into few vectors): the exact K-th key from digit histograms of the elements >= t,
//    and step 3's appends again against it;
// 5. the output order: candidates binned by their key's distance to the max (1024 bins), a prefix
//    sum gives each bin's first output position, a candidate's place in its bin is its rank among
//    the bin's few others; the top K are written, probabilities exp(x - max) / sum.
// bf16 / fp16 logits, V <= softmax_topk_resident_max_v, K <= softmax_topk_max_k. Needs sm_90.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/globaltimer.cuh"
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

namespace fusebench::kernels {

// Largest V: two rows and the candidates in one SM's shared memory (232,448 bytes opt-in on sm_90).
constexpr std::int64_t softmax_topk_resident_max_v = 52224;

// Diagnostic phase timeline (probes/resident_check.cu with -DFUSEBENCH_RES_TIMELINE=1; compiled out of
// the library): thread 0 of each block sums %globaltimer deltas per phase over its rows.
#if FUSEBENCH_RES_TIMELINE
__device__ unsigned long long res_phase_ns[8];
#define RES_STAMP(ph)                                                 \
    do {                                                              \
        if (threadIdx.x == 0) {                                       \
            const unsigned long long now_ = globaltimer_ns();         \
            atomicAdd(&res_phase_ns[ph], now_ - res_t_);              \
            res_t_ = now_;                                            \
        }                                                             \
    } while (0)
#else
#define RES_STAMP(ph) \
    do {              \
    } while (0)
#endif

namespace {

using namespace topk_detail;

constexpr int res_threads = 1024;
constexpr int res_warps = res_threads / 32;
constexpr int res_cap = 4096;                 // candidates above t a row stores [32-bit composites]
constexpr int res_items = res_cap / res_threads;  // candidates a thread bins
constexpr int res_bins = 1024;                // output-order bins
constexpr unsigned res_piece = 16u << 10;     // one bulk copy [bytes]
// Step 5's bins, their starts and the scattered candidates live in the row's own buffer once the row
// has been read: a buffer holds at least that much.
constexpr unsigned res_order_bytes = (2 * res_bins + 2 + res_cap) * 4;
static_assert(res_cap % res_threads == 0 && res_bins == res_threads, "bin and item layouts");
static_assert(softmax_topk_max_k <= res_cap, "the ties of the K-th key join the stored candidates");

// Bits of 16-bit logits. Keys: a > b as numbers iff key(a) > key(b); -0 folded onto +0.
__device__ __forceinline__ unsigned key16(unsigned u) {
    u = u == 0x8000u ? 0u : u;
    return (u & 0x8000u) ? (~u & 0xFFFFu) : (u | 0x8000u);
}
__device__ __forceinline__ unsigned unkey16(unsigned k) { return (k & 0x8000u) ? (k & 0x7FFFu) : (~k & 0xFFFFu); }

template <class T> struct h16;
template <> struct h16<__nv_bfloat16> {
    static constexpr unsigned neg_inf = 0xFF80u;
    __device__ static float lo(unsigned w) { return __uint_as_float(w << 16); }
    __device__ static float hi(unsigned w) { return __uint_as_float(w & 0xFFFF0000u); }
    __device__ static unsigned max2(unsigned a, unsigned b) {
        const __nv_bfloat162 r = __hmax2(*reinterpret_cast<const __nv_bfloat162*>(&a), *reinterpret_cast<const __nv_bfloat162*>(&b));
        return *reinterpret_cast<const unsigned*>(&r);
    }
};
template <> struct h16<__half> {
    static constexpr unsigned neg_inf = 0xFC00u;
    __device__ static float lo(unsigned w) { return __half2float(__ushort_as_half(static_cast<unsigned short>(w & 0xFFFFu))); }
    __device__ static float hi(unsigned w) { return __half2float(__ushort_as_half(static_cast<unsigned short>(w >> 16))); }
    __device__ static unsigned max2(unsigned a, unsigned b) {
        const __half2 r = __hmax2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
        return *reinterpret_cast<const unsigned*>(&r);
    }
};
template <class T> __device__ __forceinline__ float elem_float(unsigned bits) { return h16<T>::lo(bits); }

// Element i (0..7) of a vector, as 16 bits (i a compile-time constant after unrolling).
__device__ __forceinline__ unsigned elem_bits(const uint4& w, int i) {
    const unsigned word = i < 4 ? (i < 2 ? w.x : w.y) : (i < 6 ? w.z : w.w);
    return (word >> ((i & 1) * 16)) & 0xFFFFu;
}

// The largest element of a vector (packed max; a NaN lane loses to any number).
template <class T> __device__ __forceinline__ unsigned vec_max_bits(const uint4& w) {
    unsigned m = h16<T>::max2(h16<T>::max2(w.x, w.y), h16<T>::max2(w.z, w.w));
    m = h16<T>::max2(m, __byte_perm(m, 0, 0x1032));
    return m & 0xFFFFu;
}

// Where row r lies: the 16-byte segments [a, a + 16 nv) hold it, its element 0 at lane h.
struct row_geom {
    std::uintptr_t a;
    int h, nv;
};
template <class T> __device__ __forceinline__ row_geom geom_of(const T* x, long long r, int V) {
    const auto g0 = reinterpret_cast<std::uintptr_t>(x + r * V);
    const std::uintptr_t a = g0 & ~static_cast<std::uintptr_t>(15);
    const std::uintptr_t b = (g0 + static_cast<std::uintptr_t>(V) * 2 + 15) & ~static_cast<std::uintptr_t>(15);
    return {a, static_cast<int>((g0 - a) / 2), static_cast<int>((b - a) / 16)};
}

// The shared state besides the dynamic buffers.
struct res_smem {
    unsigned long long bar[2];
    unsigned hist[256];
    unsigned wred[res_warps];
    float fred[res_warps];
    unsigned bins16[res_warps][16];
    unsigned n_cand;
    unsigned digit, above, in_bin;
};

// One 8-bit digit select: among the items (for_each(f): f(key16, active) the same number of times in
// every lane of a warp) the digit of the `need`-th largest key at bit `shift` among those whose bits
// above it equal `prefix`; returns the digit, sets `above` to the count in the bins above it.
template <class ForEach>
__device__ __forceinline__ unsigned digit_select(ForEach for_each, unsigned need, int shift, unsigned prefix,
                                                 unsigned& above, res_smem& sm) {
    for_each([&](unsigned k, bool act) {
        hist_add(sm.hist, (k >> shift) & 255u, act && (shift == 8 || (k >> 8) == prefix));
    });
    __syncthreads();
    if (threadIdx.x < 32) {
        unsigned d = 0, ab = 0, in = 0;
        if (scan_bins_desc(sm.hist, need, static_cast<int>(threadIdx.x), d, ab, in)) {
            sm.digit = d;
            sm.above = ab;
        }
    }
    __syncthreads();
    above = sm.above;
    return sm.digit;
}

// The need-th largest 16-bit key among the items (need >= 1, at most their count).
template <class ForEach>
__device__ __forceinline__ unsigned key_select(ForEach for_each, unsigned need, res_smem& sm) {
    unsigned above = 0;
    const unsigned d1 = digit_select(for_each, need, 8, 0, above, sm);
    const unsigned d0 = digit_select(for_each, need - above, 0, d1, above, sm);
    return (d1 << 8) | d0;
}

// Exclusive prefix of v over the block in thread order; `total` gets the sum. Two barriers.
__device__ __forceinline__ unsigned block_excl_scan(unsigned v, unsigned& total, res_smem& sm) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned incl = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned n = __shfl_up_sync(full_mask, incl, d);
        if (lane >= d) incl += n;
    }
    if (lane == 31) sm.wred[warp] = incl;
    __syncthreads();
    unsigned off = 0;
    total = 0;
#pragma unroll
    for (int w = 0; w < res_warps; ++w) {
        const unsigned t = sm.wred[w];
        off += w < warp ? t : 0u;
        total += t;
    }
    __syncthreads();
    return off + incl - v;
}

// Counts of the block's vector maxima in 16 bins (bin_of(key) < 16; other values count nowhere),
// summed over the block; returns in every thread the first bin b at which above + the counts of bins
// 0..b reach `need` (16 when none does), and adds the counts of the bins before it to `above`.
template <int VPT, class BinOf>
__device__ __forceinline__ unsigned bin16_round(const unsigned (&vm)[VPT], int nv, BinOf bin_of, unsigned need,
                                                unsigned& above, res_smem& sm) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned long long c = 0;  // 16 counts of 4 bits (at most VPT <= 15 items a thread)
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const unsigned b = bin_of(vm[j]);
        if (j * res_threads + static_cast<int>(threadIdx.x) < nv && b < 16u) c += 1ull << (4 * b);
    }
    unsigned mine = 0;
#pragma unroll
    for (int b = 0; b < 16; ++b) {
        const unsigned n = __reduce_add_sync(full_mask, static_cast<unsigned>(c >> (4 * b)) & 15u);
        mine = lane == b ? n : mine;
    }
    if (lane < 16) sm.bins16[warp][lane] = mine;
    __syncthreads();
    if (warp == 0) {
        unsigned tot = 0;
        if (lane < 16) {
#pragma unroll 8
            for (int w = 0; w < res_warps; ++w) tot += sm.bins16[w][lane];
        }
        unsigned incl = tot;
#pragma unroll
        for (int d = 1; d < 16; d <<= 1) {
            const unsigned n = __shfl_up_sync(full_mask, incl, d);
            if (lane >= d) incl += n;
        }
        const unsigned ok = __ballot_sync(full_mask, lane < 16 && above + incl >= need);
        const unsigned b = ok ? static_cast<unsigned>(__ffs(ok) - 1) : 16u;
        if (lane == 0) sm.digit = b;
        if ((b < 16u && lane == static_cast<int>(b)) || (b == 16u && lane == 15)) sm.above = above + incl - (b < 16u ? tot : 0u);
    }
    __syncthreads();
    above = sm.above;
    return sm.digit;
}

template <class T, int VPT>
__global__ void __launch_bounds__(res_threads, 1)
    softmax_topk_resident_kernel(const T* __restrict__ x, float* __restrict__ probs, std::int32_t* __restrict__ out_idx,
                                 int rows, int V, int K, unsigned buf_bytes) {
    extern __shared__ __align__(128) unsigned char dyn[];
    __shared__ res_smem sm;
    unsigned* cand = reinterpret_cast<unsigned*>(dyn + 2 * buf_bytes);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int G = gridDim.x;
    // The tensor's 16-byte segments that lie inside it: the bulk copies read only those.
    const auto xa = reinterpret_cast<std::uintptr_t>(x);
    const std::uintptr_t A0 = (xa + 15) & ~static_cast<std::uintptr_t>(15);
    const std::uintptr_t B0 = (xa + static_cast<std::uintptr_t>(rows) * static_cast<std::uintptr_t>(V) * 2) &
                              ~static_cast<std::uintptr_t>(15);

    const auto issue = [&](int r, int s) {  // thread 0: row r into buffer s
        const row_geom g = geom_of(x, r, V);
        const std::uintptr_t lo = max(g.a, A0);
        const std::uintptr_t hi = max(min(g.a + static_cast<std::uintptr_t>(g.nv) * 16, B0), lo);
        const unsigned bytes = static_cast<unsigned>(hi - lo);
        const std::uint32_t bar = sm90::smem_u32(&sm.bar[s]);
        const std::uint32_t dst = sm90::smem_u32(dyn + s * buf_bytes + (lo - g.a));
        sm90::mbar_expect_tx(bar, bytes);
        for (unsigned off = 0; off < bytes; off += res_piece)
            sm90::bulk_copy(dst + off, reinterpret_cast<const void*>(lo + off), min(res_piece, bytes - off), bar);
    };

    for (int b = tid; b < 256; b += res_threads) sm.hist[b] = 0;
    if (tid == 0) {
        sm.n_cand = 0;
        sm90::mbar_init(sm90::smem_u32(&sm.bar[0]), 1);
        sm90::mbar_init(sm90::smem_u32(&sm.bar[1]), 1);
        sm90::fence_proxy_async();
        if (blockIdx.x < rows) issue(blockIdx.x, 0);
        if (blockIdx.x + G < rows) issue(blockIdx.x + G, 1);
    }
    __syncthreads();
#if FUSEBENCH_RES_TIMELINE
    unsigned long long res_t_ = globaltimer_ns();
#endif

    int it = 0;
    for (int r = blockIdx.x; r < rows; r += G, ++it) {
        const int s = it & 1;
        const row_geom g = geom_of(x, r, V);
        const int h = g.h, nv = g.nv;
        unsigned char* buf = dyn + s * buf_bytes;
        const uint4* bv = reinterpret_cast<const uint4*>(buf);
        sm90::mbar_wait(sm90::smem_u32(&sm.bar[s]), static_cast<std::uint32_t>((it >> 1) & 1));
        RES_STAMP(0);
        if (tid < 48) {
            auto* lanes = reinterpret_cast<unsigned short*>(buf);
            if (tid < 16) {
                // Elements in a 16-byte segment the tensor only partly covers (row 0's head when x is not
                // 16-byte aligned, the last rows' tail): plain loads.
                const std::uintptr_t g0 = reinterpret_cast<std::uintptr_t>(x + static_cast<long long>(r) * V);
                const std::uintptr_t ge = g0 + static_cast<std::uintptr_t>(V) * 2;
                const std::uintptr_t p = tid < 8 ? g0 + static_cast<std::uintptr_t>(tid) * 2
                                                 : max(g0, B0) + static_cast<std::uintptr_t>(tid - 8) * 2;
                if (tid < 8 ? p < min(A0, ge) : p < ge) lanes[(p - g.a) / 2] = *reinterpret_cast<const unsigned short*>(p);
            } else {
                // The lanes of the first and last segment outside the row: -inf, so that no pass masks them
                // (they never exceed a threshold; the == t tests check the index).
                const int q = tid < 32 ? tid - 16 : h + V + (tid - 32);
                if (tid < 32 ? q < h : q < nv * 8) lanes[q] = static_cast<unsigned short>(h16<T>::neg_inf);
            }
        }
        __syncthreads();

        // 1. Vector maxima (keys) and the row max.
        unsigned vm[VPT];
        unsigned tmax = 0;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int v = j * res_threads + tid;
            vm[j] = 0;
            if (v < nv) {
                vm[j] = key16(vec_max_bits<T>(bv[v]));
                tmax = max(tmax, vm[j]);
            }
        }
        tmax = __reduce_max_sync(full_mask, tmax);
        if (lane == 0) sm.wred[warp] = tmax;
        __syncthreads();
        unsigned mk = 0;
#pragma unroll
        for (int w = 0; w < res_warps; ++w) mk = max(mk, sm.wred[w]);
        // (sm.wred is next written after bin16_round's barriers.)
        RES_STAMP(1);

        // 2. t: a key that at least J = K + K / 4 + 8 vector maxima reach (at most nv), the largest on a grid
        // of 16 keys: the binade of the J-th largest among the 16 below the max's, then 16 steps in it.
        // Every key when K > nv (each element is a candidate).
        unsigned tkey = 0;
        if (K <= nv) {
            const unsigned J = min(static_cast<unsigned>(nv), static_cast<unsigned>(K + K / 4 + 8));
            const unsigned mhi = mk >> 8;
            unsigned above = 0;
            const unsigned q = bin16_round(vm, nv, [&](unsigned k) { return mhi - (k >> 8); }, J, above, sm);
            if (q < 16u) {
                const unsigned d1 = mhi - q;
                const unsigned b2 = bin16_round(
                    vm, nv, [&](unsigned k) { return (k >> 8) == d1 ? 15u - ((k >> 4) & 15u) : 16u; }, J, above, sm);
                tkey = (d1 << 8) | ((15u - b2) << 4);
            } else {
                // The J-th largest spans more than 16 binades below the max: the exact J-th largest.
                tkey = key_select(
                    [&](auto f) {
#pragma unroll
                        for (int j = 0; j < VPT; ++j) f(vm[j], j * res_threads + tid < nv);
                    },
                    J, sm);
            }
        }
        RES_STAMP(2);

        // 3. The sum of exp(x - m); the elements > t appended, those == t counted.
        const float m = elem_float<T>(unkey16(mk));
        float sum0 = 0.0f, sum1 = 0.0f;
        const auto append_vec = [&](const uint4& w, int v, unsigned t) {
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const unsigned k = key16(elem_bits(w, i));
                if (k > t) {
                    const unsigned slot = atomicAdd(&sm.n_cand, 1u);
                    const int e = v * 8 + i - h;
                    if (slot < res_cap) cand[slot] = (k << 16) | (0xFFFFu - static_cast<unsigned>(e));
                }
            }
        };
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int v = j * res_threads + tid;
            if (v < nv) {
                const uint4 w = bv[v];
                const unsigned ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    sum0 += fast_exp2((h16<T>::lo(ws[q]) - m) * log2e);
                    sum1 += fast_exp2((h16<T>::hi(ws[q]) - m) * log2e);
                }
                if (vm[j] > tkey) append_vec(w, v, tkey);
            }
        }
        float wsum = sum0 + sum1;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) wsum += __shfl_xor_sync(full_mask, wsum, d);
        if (lane == 0) sm.fred[warp] = wsum;
        __syncthreads();
        float S = 0.0f;
#pragma unroll
        for (int w = 0; w < res_warps; ++w) S += sm.fred[w];
        unsigned A = sm.n_cand;
        RES_STAMP(3);
        float* prow = probs + static_cast<long long>(r) * K;
        std::int32_t* irow = out_idx + static_cast<long long>(r) * K;
        const unsigned kK = static_cast<unsigned>(K);

        if (!(S > 0.0f) || isnan(S) || isinf(m)) {
            // No finite softmax (a NaN, +inf, or every entry -inf): NaN probabilities, indices 0..K-1.
            for (int q = tid; q < K; q += res_threads) {
                prow[q] = __int_as_float(0x7FC00000);
                irow[q] = q;
            }
        } else {
            // The vectors that can hold elements >= t, for the rare paths below (read again from the buffer).
            const auto for_vectors = [&](auto f) {
                for (int base = 0; base < nv; base += res_threads) {  // the same trip count in every thread
                    const int v = base + tid;
                    uint4 w = make_uint4(0, 0, 0, 0);
                    bool fl = false;
                    if (v < nv) {
                        w = bv[v];
                        fl = key16(vec_max_bits<T>(w)) >= tkey;
                    }
                    f(w, v, fl);
                }
            };
            if (A > res_cap) {
                // 4b. More above t than stored: the exact K-th key among the elements >= t, appends again.
                const unsigned kk = key_select(
                    [&](auto f) {
                        for_vectors([&](const uint4& w, int v, bool fl) {
#pragma unroll
                            for (int i = 0; i < 8; ++i) {
                                const int e = v * 8 + i - h;
                                const unsigned k = key16(elem_bits(w, i));
                                f(k, fl && e >= 0 && e < V && k >= tkey);
                            }
                        });
                    },
                    kK, sm);
                if (tid == 0) sm.n_cand = 0;
                __syncthreads();
                tkey = kk;
                for_vectors([&](const uint4& w, int v, bool fl) {
                    if (fl) append_vec(w, v, tkey);
                });
                __syncthreads();
                A = sm.n_cand;  // < K: the elements above the K-th key
            }
            if (A < kK) {
                // 4a. Fewer than K above t, at least K at or above it: t is the K-th key; the K - A elements
                // == t of lowest index join, in index order (rounds of the block's vectors in thread order).
                const unsigned need = kK - A;
                unsigned done = 0;
                for (int base = 0; base < nv && done < need; base += res_threads) {  // uniform: done is
                    const int v = base + tid;
                    uint4 w = make_uint4(0, 0, 0, 0);
                    unsigned c = 0;
                    if (v < nv) {
                        w = bv[v];
#pragma unroll
                        for (int i = 0; i < 8; ++i) {
                            const int e = v * 8 + i - h;
                            c += (e >= 0 && e < V && key16(elem_bits(w, i)) == tkey) ? 1u : 0u;
                        }
                    }
                    unsigned total = 0;
                    unsigned off = done + block_excl_scan(c, total, sm);
                    if (c > 0 && off < need) {
#pragma unroll
                        for (int i = 0; i < 8; ++i) {
                            const int e = v * 8 + i - h;
                            if (e >= 0 && e < V && key16(elem_bits(w, i)) == tkey) {
                                if (off < need) cand[A + off] = (tkey << 16) | (0xFFFFu - static_cast<unsigned>(e));
                                ++off;
                            }
                        }
                    }
                    done += total;
                }
            }
            __syncthreads();  // the row buffer is read for the last time above
            RES_STAMP(4);

            // 5. Output order by bins of the key's distance to the max; the row buffer holds the bins
            // (hist), their starts and the scattered candidates.
            unsigned* hist = reinterpret_cast<unsigned*>(buf);
            unsigned* start = hist + res_bins;        // res_bins + 1 entries
            unsigned* sorted = start + res_bins + 2;  // A entries
            const unsigned nA = min(A, static_cast<unsigned>(res_cap));
            const unsigned range = mk - tkey;  // candidates' keys in (tkey, mk]: distance mk - k < range
            int shift = 0;
            while (range > 0 && ((range - 1) >> shift) >= static_cast<unsigned>(res_bins)) ++shift;
            hist[tid] = 0;
            __syncthreads();
            unsigned item[res_items], bin[res_items], slot[res_items];
#pragma unroll
            for (int q = 0; q < res_items; ++q) {
                const unsigned n = tid + q * res_threads;
                bin[q] = res_bins;
                if (n < nA) {
                    item[q] = cand[n];
                    bin[q] = (mk - (item[q] >> 16)) >> shift;
                    slot[q] = atomicAdd(&hist[bin[q]], 1u);
                }
            }
            __syncthreads();
            {
                unsigned total = 0;
                start[tid] = block_excl_scan(hist[tid], total, sm);
                if (tid == 0) start[res_bins] = total;
            }
            __syncthreads();
#pragma unroll
            for (int q = 0; q < res_items; ++q) {
                if (bin[q] < res_bins) {
                    const unsigned st = start[bin[q]];
                    if (st < kK) sorted[st + slot[q]] = item[q];
                }
            }
            __syncthreads();
#pragma unroll
            for (int q = 0; q < res_items; ++q) {
                if (bin[q] < res_bins) {
                    const unsigned st = start[bin[q]];
                    if (st < kK) {
                        const unsigned cnt = start[bin[q] + 1] - st;
                        unsigned rank = 0;
                        for (unsigned u = 0; u < cnt; ++u) rank += sorted[st + u] > item[q] ? 1u : 0u;
                        const unsigned pos = st + rank;
                        if (pos < kK) {
                            const float val = elem_float<T>(unkey16(item[q] >> 16));
                            prow[pos] = fast_exp2((val - m) * log2e) / S;
                            irow[pos] = static_cast<std::int32_t>(0xFFFFu - (item[q] & 0xFFFFu));
                        }
                    }
                }
            }
            if (A < kK) {
                const float val = elem_float<T>(unkey16(tkey));
                const float p = fast_exp2((val - m) * log2e) / S;
                for (unsigned q = A + tid; q < kK; q += res_threads) {
                    prow[q] = p;
                    irow[q] = static_cast<std::int32_t>(0xFFFFu - (cand[q] & 0xFFFFu));
                }
            }
        }
        __syncthreads();  // the row's buffer and candidates are free
        RES_STAMP(5);
        if (tid == 0) {
            sm.n_cand = 0;
            if (r + 2 * G < rows) {
                sm90::fence_proxy_async();  // the generic writes into the buffer before the copy's
                issue(r + 2 * G, s);
            }
        }
    }
}

template <class T, int VPT> void launch_vpt(const softmax_topk_args& a, unsigned buf_bytes, cudaStream_t stream) {
    int dev = 0;
    check_call(cudaGetDevice(&dev), "launch_softmax_topk_fused_resident: cudaGetDevice");
    const unsigned smem = 2 * buf_bytes + res_cap * 4;
    if (static_cast<int>(smem + sizeof(res_smem)) > cached_max_smem_optin(dev)) {
        throw std::invalid_argument("launch_softmax_topk_fused_resident: a row of V " + std::to_string(a.V) + " needs " +
                                    std::to_string(smem + sizeof(res_smem)) + " bytes of shared memory, more than the device's " +
                                    std::to_string(cached_max_smem_optin(dev)));
    }
    auto kern = softmax_topk_resident_kernel<T, VPT>;
    check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
               "softmax_topk_resident_kernel: cudaFuncSetAttribute(shared memory)");
    const int grid = static_cast<int>(std::min<std::int64_t>(a.rows, cached_sm_count(dev)));
    kern<<<grid, res_threads, smem, stream>>>(static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices,
                                              static_cast<int>(a.rows), static_cast<int>(a.V), static_cast<int>(a.K),
                                              buf_bytes);
    check_launch("softmax_topk_resident_kernel");
}

template <class T> void launch_resident(const softmax_topk_args& a, cudaStream_t stream) {
    // The vectors a row's 16-byte segments span, at most (any alignment of the row start).
    const auto nv = static_cast<unsigned>((2 * a.V + 30) / 16);
    const unsigned buf_bytes = std::max((nv * 16 + 127) / 128 * 128, (res_order_bytes + 127) / 128 * 128);
    if (nv <= 1 * res_threads) launch_vpt<T, 1>(a, buf_bytes, stream);
    else if (nv <= 2 * res_threads) launch_vpt<T, 2>(a, buf_bytes, stream);
    else if (nv <= 4 * res_threads) launch_vpt<T, 4>(a, buf_bytes, stream);
    else launch_vpt<T, 7>(a, buf_bytes, stream);
}

}  // namespace

void launch_softmax_topk_fused_resident(const softmax_topk_args& a, cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_fused_resident");
    if (a.type == elem::f32) {
        throw std::invalid_argument("launch_softmax_topk_fused_resident: fp32 logits are not supported (bf16 / fp16 rows "
                                    "only: two fp32 rows of a useful V do not fit one SM's shared memory)");
    }
    if (a.V > softmax_topk_resident_max_v) {
        throw std::invalid_argument("launch_softmax_topk_fused_resident: V " + std::to_string(a.V) + " is more than " +
                                    std::to_string(softmax_topk_resident_max_v) +
                                    " (two rows and the candidates in one SM's shared memory)");
    }
    if (a.rows == 0) return;
    if (a.type == elem::bf16) launch_resident<__nv_bfloat16>(a, stream);
    else launch_resident<__half>(a, stream);
}

}  // namespace fusebench::kernels
