// Fused softmax + top-k, v6 `fused_radix`: a selection whose work barely depends on the order or
// the distribution of the logits (the threshold designs v1-v5 let more candidates through when the
// row rises along its index, and their compactions multiply with ties).
//
// One thread-block cluster of C blocks per row (C = row bytes / 96 KB and C >= 4 K / 1024, 1 to
// 8); block r of the cluster owns a contiguous chunk of the row. Each thread takes strided 16-byte
// vectors of the chunk in batches of U (4 for fp32, 2 for 16-bit logits); the vectors a thread
// loads at batch position u form its slot u, so the 256 U C slots of a cluster partition the row.
// Per row:
// 1. one read of the chunk from DRAM: online max / sum of exp per thread, and each slot's maximum
//    (one fmax per vector: no per-element selection work in the stream);
// 2. a lower bound L of the row's K-th largest key from one cluster exchange (with the max / sum):
//    each block selects its own K-th and ceil(K / C)-th largest slot maxima b1, b2 (8-bit digits,
//    stopping once the digit's bin is taken whole), and L = max(max_b b1, min_b b2) (K distinct
//    elements are at or above it, in any order of the row; K <= the 1024 slots of a block). Until
//    v6 step 3 L was the cluster's K-th largest slot maximum from histograms summed through
//    distributed shared memory: two cluster barriers per digit;
// 3. a second read of the chunk (from L2: at most ~25 MB of rows are in flight) by the slots whose
//    maximum reaches L only (the others hold nothing >= L), appending the elements above L and,
//    apart, those equal to L (composites of key and ~index, warp-aggregated appends). With A above
//    and T equal over the cluster: A + T <= 2048 takes them all; A >= K takes the A above; A < K
//    makes L the exact K-th key, and the K - A ties at L with the lowest indices are taken (lower
//    chunks first, from each block's stored ties or an in-order scan with an early exit);
// 4. only when more than 2048 lie above L the digit path runs: an 11-bit histogram
//    of every key (one L2 read), then the next 11 and 10 bits among the K-th's bin until the
//    elements at or above the bin fit, or the K-th key is exact and its ties are taken in index
//    order;
// 5. block 0 gathers the cluster's candidates (at most 2048) through distributed shared memory
//    (right after the count exchange's barrier when step 3 took them all or those above L),
//    selects the exact top K of (value, ~index) composites and sorts them.
// Random logits: one DRAM read, a few KB from L2. All-equal or few-distinct rows: the same plus one
// L2 read of the chunk. Step 4 is for rows with more than 2048 elements above the bound (sorted rows
// at K = 1024, say). The first version histogrammed every element in step 1: its shared atomics made
// it 7x slower than fused_stream on random logits (NOTES.md, v6).
#include "kernels/common/elem_io.cuh"
#include "kernels/common/globaltimer.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/softmax_topk/select.cuh"
#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

namespace fusebench::kernels {
namespace {

using namespace topk_detail;
namespace cg = cooperative_groups;

constexpr int radix_bins = 2048;           // 11-bit digits (the last digit has 10 bits: 1024 bins)
constexpr int radix_cap = 2048;            // candidates the final select holds [composites]
constexpr int radix_tie_cap = 1024;        // elements equal to the bound each block stores [composites]
constexpr int radix_max_cluster = 8;       // portable cluster size
constexpr int radix_chunk_bytes = 96 << 10;  // bytes of a row per block, at most [bytes]
constexpr int radix_slots_per_block = 1024;   // 256 threads x 4 slots (fp32: 4 positions; 16-bit: 2 x 2 halves)
constexpr int radix_blocks_per_sm = 4;     // 64 registers per thread
// 16-byte loads in flight per thread (the slots per thread): 4 for fp32, 2 for 16-bit logits (4
// spilled: 8 floats a vector)
template <class T> constexpr int radix_unroll = sizeof(T) == 4 ? 4 : 2;

static_assert(radix_cap * sizeof(std::uint64_t) == 2 * radix_bins * sizeof(unsigned),
              "block 0 gathers the candidates into the two local histograms");
static_assert(radix_tie_cap * sizeof(std::uint64_t) == radix_bins * sizeof(unsigned),
              "the ties at the bound are stored in the cluster histogram's space");
static_assert(softmax_topk_max_k <= radix_slots_per_block, "every block holds at least K slot maxima (the bound)");

struct radix_smem {
    unsigned local_hist[2][radix_bins];  // this block's counts, by level parity (read by the cluster)
    unsigned global_hist[radix_bins];    // the cluster's counts (written by the cluster); then ties at L
    std::uint64_t cand[radix_cap];       // this block's candidates, then block 0's winners
    select_smem sel;                     // block 0's final select
    float red[warps_per_block];
    unsigned scan_warp[warps_per_block];
    float m, s;  // this block's max and sum of exp(x - m)
    float M, S;  // the row's (every block computes them)
    unsigned cand_count, tie_count;
    unsigned n_above, n_ties;  // this block's counts above / at the bound after step 3 (read by the cluster)
    unsigned digit, above, in_bin, total;
    std::uint32_t b1, b2;  // this block's K-th and ceil(K / C)-th largest slot maxima (read by the cluster)
    unsigned two_digit[2], two_above[2], two_in_bin[2];  // block_two_bounds' digit scans
};

// Per-phase timeline, a diagnostic build only (kernels/softmax_topk/probes/radix_timeline.cu defines
// FUSEBENCH_RADIX_TIMELINE and includes this file): thread 0 of each block writes %globaltimer at
// each phase boundary to radix_timeline[block * radix_tl_points + point] (ns), and the block's SM,
// take mode, bound digits and candidate count to the info point. Off (the library build), the
// stamps are empty statements: the kernel is the same code.
enum radix_tl_point : int {
    tl_start,        // block start
    tl_streamed,     // step 1's read and the block's max / sum reduced
    tl_row_stats,    // the cluster's max / sum merged (after a cluster barrier)
    tl_bound,        // step 2: the bound L
    tl_reread,       // step 3's L2 re-read appended
    tl_counts,       // step 3's count exchange and tie handling
    tl_digits,       // step 4 (the digit path) when taken; else = tl_counts's block
    tl_in_place,     // the cluster barrier after which every block's candidates are in place
    tl_gathered,     // block 0 gathered (and the cluster barrier that frees the others)
    tl_selected,     // block 0: exact top K of the candidates
    tl_sorted,       // block 0: bitonic sort
    tl_written,      // block 0: outputs written
    tl_info,         // smid | mode << 8 | bound digits << 12 | gathered candidates << 32
    radix_tl_points = 16
};
#ifdef FUSEBENCH_RADIX_TIMELINE
__device__ unsigned long long* radix_timeline = nullptr;
__device__ __forceinline__ void radix_stamp(int point) {
    if (threadIdx.x == 0 && radix_timeline != nullptr) {
        radix_timeline[static_cast<std::size_t>(blockIdx.x) * radix_tl_points + point] = globaltimer_ns();
    }
}
__device__ __forceinline__ void radix_note(unsigned long long v) {
    if (threadIdx.x == 0 && radix_timeline != nullptr) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        radix_timeline[static_cast<std::size_t>(blockIdx.x) * radix_tl_points + tl_info] = v | smid;
    }
}
#define RADIX_STAMP(point) radix_stamp(point)
#define RADIX_NOTE(value) radix_note(value)
#else
#define RADIX_STAMP(point) ((void)0)
#define RADIX_NOTE(value) ((void)0)
#endif

template <class T> struct alignas(16) vec16 {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

// Calls on_vec(x, j0, nvalid, u) for the chunk [lo, hi) of the row: x holds 16 bytes of elements
// (as float, j0 the index of x[0]), the first nvalid of them real, the rest -inf; u is the slot (the
// vector's position in its batch; the scalar head and tail, one element per call, are slot 0).
// Vectors of a slot whose bit in `want` is clear are not loaded (nvalid 0). Trip counts are
// uniform across each warp (on_vec may use warp votes); radix_unroll<T> loads per thread are issued
// before use. Every call with the same [lo, hi) gives each thread the same elements in the same slots.
template <class T, class F>
__device__ __forceinline__ void for_vectors(const T* row, int lo, int hi, unsigned want, F&& on_vec) {
    constexpr int W = vec16<T>::n;
    const T* p = row + lo;
    const int n = hi - lo;
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    int head = static_cast<int>(((16 - addr % 16) % 16) / sizeof(T));
    if (addr % sizeof(T) != 0) head = n;
    if (head > n) head = n;
    const int nvec = (n - head) / W;
    const int tail = head + nvec * W;
    float x[W];
    const auto scalars = [&](int b0, int b1) {
        for (int b = b0; b < b1; b += block_threads) {
            const int i = b + static_cast<int>(threadIdx.x);
            const bool ok = i < b1 && (want & 1u);
            x[0] = ok ? to_f32(p[i]) : -INFINITY;
#pragma unroll
            for (int e = 1; e < W; ++e) x[e] = -INFINITY;
            on_vec(x, lo + i, ok ? 1 : 0, 0);
        }
    };
    scalars(0, head);
    const auto* v = reinterpret_cast<const vec16<T>*>(p + head);
    for (int b = 0; b < nvec; b += radix_unroll<T> * block_threads) {
        vec16<T> r[radix_unroll<T>];
#pragma unroll
        for (int u = 0; u < radix_unroll<T>; ++u) {
            const int i = b + u * block_threads + static_cast<int>(threadIdx.x);
            if (i < nvec && ((want >> u) & 1u)) r[u] = v[i];
        }
#pragma unroll
        for (int u = 0; u < radix_unroll<T>; ++u) {
            const int i = b + u * block_threads + static_cast<int>(threadIdx.x);
            const bool ok = i < nvec && ((want >> u) & 1u);
#pragma unroll
            for (int e = 0; e < W; ++e) x[e] = ok ? to_f32(r[u].v[e]) : -INFINITY;
            on_vec(x, lo + head + i * W, ok ? W : 0, u);
        }
    }
    scalars(tail, n);
}

// Scans hist[0, nbins) from the top for the bin where the count of larger items reaches `need`:
// sm.digit, sm.above (count in higher bins), sm.in_bin, and sm.total (all bins; when it is below
// `need`, no bin is found and the other three are stale). All threads call it; the results are
// visible to all on return.
__device__ __forceinline__ void scan_digit(const unsigned* hist, int nbins, unsigned need, radix_smem& sm) {
    const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
    const int per = nbins / block_threads;  // 8 or 4
    const int top = nbins - 1 - t * per;    // this thread's bins: top, top - 1, ..., top - per + 1
    unsigned cnt[radix_bins / block_threads], tot = 0;
#pragma unroll
    for (int i = 0; i < radix_bins / block_threads; ++i) {
        cnt[i] = i < per ? hist[top - i] : 0u;
        tot += cnt[i];
    }
    unsigned incl = tot;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned o = __shfl_up_sync(full_mask, incl, d);
        if (lane >= d) incl += o;
    }
    if (lane == 31) sm.scan_warp[warp] = incl;
    __syncthreads();
    for (int w = 0; w < warp; ++w) incl += sm.scan_warp[w];
    if (t == block_threads - 1) sm.total = incl;
    unsigned above = incl - tot;
    if (above < need && incl >= need) {
#pragma unroll
        for (int i = 0; i < radix_bins / block_threads; ++i) {
            if (i < per && above < need && above + cnt[i] >= need) {
                sm.digit = static_cast<unsigned>(top - i);
                sm.above = above;
                sm.in_bin = cnt[i];
            }
            above += cnt[i];
        }
    }
    __syncthreads();
}

// The cluster's histogram: block `rank` sums bins b = rank (mod C) over the C blocks' local_hist[par]
// and writes each sum into every block's global_hist. Between two cluster barriers.
__device__ __forceinline__ void cluster_reduce_hist(cg::cluster_group& cl, radix_smem& sm, int par, int nbins, int C,
                                                    int rank) {
    for (int b = static_cast<int>(threadIdx.x) * C + rank; b < nbins; b += block_threads * C) {
        unsigned s = 0;
        for (int c = 0; c < C; ++c) s += *cl.map_shared_rank(&sm.local_hist[par][b], c);
        for (int c = 0; c < C; ++c) *cl.map_shared_rank(&sm.global_hist[b], c) = s;
    }
}

__device__ __forceinline__ void append(radix_smem& sm, std::uint32_t key, int j) {
    const unsigned pos = atomicAdd(&sm.cand_count, 1u);
    sm.cand[pos] = composite(key, static_cast<std::uint32_t>(j));
}

// Warp-aggregated append: the lanes with `pred` take consecutive places from *count (one atomic
// per warp) and store `c` there while it is below `cap`; *count keeps counting past it. All 32
// lanes call it.
__device__ __forceinline__ void warp_append(unsigned* count, std::uint64_t* buf, unsigned cap, bool pred,
                                            std::uint64_t c) {
    const unsigned b = __ballot_sync(full_mask, pred);
    if (b == 0) return;
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int leader = __ffs(b) - 1;
    unsigned base = 0;
    if (lane == leader) base = atomicAdd(count, static_cast<unsigned>(__popc(b)));
    base = __shfl_sync(full_mask, base, leader);
    if (pred) {
        const unsigned pos = base + static_cast<unsigned>(__popc(b & ((1u << lane) - 1u)));
        if (pos < cap) buf[pos] = c;
    }
}

// Appends this block's `take` elements with key `key` of lowest index in [lo, hi) to sm.cand (an
// in-order scan of the chunk that stops once they are found). All threads call it.
template <class T>
__device__ __forceinline__ void append_ties_in_order(radix_smem& sm, const T* x, int lo, int hi, std::uint32_t key,
                                                     unsigned take) {
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    unsigned taken = 0;
    for (int b = lo; b < hi && taken < take; b += block_threads) {
        const int j = b + tid;
        const bool tie = j < hi && float_key(to_f32(x[j])) == key;
        const unsigned bal = __ballot_sync(full_mask, tie);
        if (lane == 0) sm.scan_warp[warp] = static_cast<unsigned>(__popc(bal));
        __syncthreads();
        unsigned before_w = 0, tile = 0;
        for (int w = 0; w < warps_per_block; ++w) {
            const unsigned c = sm.scan_warp[w];
            before_w += w < warp ? c : 0u;
            tile += c;
        }
        const unsigned r = taken + before_w + static_cast<unsigned>(__popc(bal & ((1u << lane) - 1u)));
        if (tie && r < take) append(sm, key, j);
        taken += tile;
        __syncthreads();
    }
}

// The need_a-th and need_b-th largest of the block's NS * block_threads keys tk (1 <= need <= that
// count), each as a key floor: MSB-first 8-bit digits, both selects in the same passes (histograms
// in local_hist[0][0, 256) and [256, 512), zero on entry and on return; warps 0 and 1 scan them),
// each stopping once its digit's bin is taken whole (then exactly need keys are >= the bin's floor,
// whose lower bits are zero) or the key is exact. Every thread gets both; returns the passes made.
// All threads call it.
template <int NS>
__device__ __forceinline__ int block_two_bounds(const std::uint32_t (&tk)[NS], unsigned need_a, unsigned need_b,
                                                radix_smem& sm, std::uint32_t& out_a, std::uint32_t& out_b) {
    const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
    unsigned need[2] = {need_a, need_b};
    std::uint32_t pre[2] = {0u, 0u};
    bool done[2] = {false, false};
    int passes = 0;
    for (int shift = 24;; shift -= 8) {
        ++passes;
#pragma unroll
        for (int q = 0; q < NS; ++q) {
#pragma unroll
            for (int t = 0; t < 2; ++t) {
                const bool act = !done[t] && (shift == 24 || (tk[q] >> (shift + 8)) == (pre[t] >> (shift + 8)));
                hist_add(&sm.local_hist[0][t * 256], (tk[q] >> shift) & 255u, act);
            }
        }
        __syncthreads();
        if (warp < 2 && !(warp == 0 ? done[0] : done[1])) {
            unsigned d = 0, ab = 0, ib = 0;
            if (scan_bins_desc(&sm.local_hist[0][warp * 256], warp == 0 ? need[0] : need[1], lane, d, ab, ib)) {
                sm.two_digit[warp] = d;
                sm.two_above[warp] = ab;
                sm.two_in_bin[warp] = ib;
            }
        }
        __syncthreads();
#pragma unroll
        for (int t = 0; t < 2; ++t) {
            if (!done[t]) {
                need[t] -= sm.two_above[t];
                pre[t] |= sm.two_digit[t] << shift;
                done[t] = sm.two_in_bin[t] == need[t] || shift == 0;
            }
        }
        // sm.two_* are rewritten only after the next pass's first barrier.
        if (done[0] && done[1]) break;
    }
    out_a = pre[0];
    out_b = pre[1];
    return passes;
}

// How step 3's candidates are taken (the same in every block of a cluster).
enum class take_mode : int {
    all,          // every element >= L (above and ties) fits: gather both
    above,        // at least K above L, at most radix_cap: the ties at L do not matter
    exact_ties,   // fewer than K above L: L is the K-th key, the K - A ties of lowest index join
    digits,       // more than radix_cap above L, or no bound: the digit path
};

template <class T>
__global__ void __launch_bounds__(block_threads, radix_blocks_per_sm)
    softmax_topk_radix_kernel(const T* __restrict__ logits, float* __restrict__ probs,
                              std::int32_t* __restrict__ indices, int V, int K, int chunk, std::int64_t row0) {
    constexpr int W = vec16<T>::n;
    constexpr int U = radix_unroll<T>;
    constexpr int SH = W / 4;  // slots per batch position: a 16-bit vector's halves are two slots
    constexpr int NS = U * SH;  // slots per thread (4)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    radix_smem& sm = *reinterpret_cast<radix_smem*>(smem_raw);
    cg::cluster_group cl = cg::this_cluster();
    const int C = static_cast<int>(cl.num_blocks());
    const int rank = static_cast<int>(cl.block_rank());
    const int tid = static_cast<int>(threadIdx.x);
    const std::int64_t row = row0 + blockIdx.x / C;
    const T* x = logits + row * V;
    const int lo = min(V, rank * chunk), hi = min(V, lo + chunk);
    auto* ties = reinterpret_cast<std::uint64_t*>(&sm.global_hist[0]);
    RADIX_STAMP(tl_start);
#ifdef FUSEBENCH_RADIX_TIMELINE
    unsigned long long tl_levels = 0;
#endif
    // block_two_bounds' histograms start clear (its scans clear what they read); the block
    // reductions' barriers order this before their first use.
    for (int b = tid; b < 2 * 256; b += block_threads) sm.local_hist[0][b] = 0;

    // 1. One read (DRAM): max / sum and each slot's maximum.
    float m = -INFINITY, s = 0.0f;
    float tm[NS];
#pragma unroll
    for (int q = 0; q < NS; ++q) tm[q] = -INFINITY;
    for_vectors(x, lo, hi, ~0u, [&](const float (&v)[W], int, int, int u) {
        float h[SH];
#pragma unroll
        for (int hh = 0; hh < SH; ++hh) h[hh] = fmaxf(fmaxf(v[4 * hh], v[4 * hh + 1]), fmaxf(v[4 * hh + 2], v[4 * hh + 3]));
        float vm = h[0];
#pragma unroll
        for (int hh = 1; hh < SH; ++hh) vm = fmaxf(vm, h[hh]);
#pragma unroll
        for (int q = 0; q < U; ++q) {
            if (q == u) {
#pragma unroll
                for (int hh = 0; hh < SH; ++hh) tm[q * SH + hh] = fmaxf(tm[q * SH + hh], h[hh]);
            }
        }
        if (vm > m) {
            s = s == 0.0f ? 0.0f : s * fast_exp2((m - vm) * log2e);
            m = vm;
        }
        // -inf adds nothing (and -inf - -inf would be NaN); NaN and +inf - +inf make the sum NaN.
#pragma unroll
        for (int e = 0; e < W; ++e) s += v[e] == -INFINITY ? 0.0f : fast_exp2((v[e] - m) * log2e);
    });
    const float mb = block_reduce_max(m, sm.red);
    float sb = s == 0.0f ? 0.0f : s * fast_exp2((m - mb) * log2e);
    sb = block_reduce_sum(sb, sm.red);
    if (tid == 0) {
        sm.m = mb;
        sm.s = sb;
    }
    RADIX_STAMP(tl_streamed);
    // 2. The bound L, from one cluster exchange: each block's K-th and ceil(K / C)-th largest slot
    // maxima (block-local selects; K <= 1024 = the block's slots). K elements of block b are at or
    // above the first (b1), ceil(K / C) of every block at or above its second (b2), so
    // L = max(max_b b1, min_b b2) has K elements at or above it: a lower bound of the row's K-th
    // largest in any order. Top values in one block make b1 of that block tight, top values spread
    // over the blocks make min_b b2 tight. A slot with no element has the maximum -inf, which can
    // only lower L (and L = key(-inf) admits every element).
    std::uint32_t tk[NS];
#pragma unroll
    for (int q = 0; q < NS; ++q) tk[q] = float_key(tm[q]);
    {
        std::uint32_t b1 = 0, b2 = 0;
        const int passes =
            block_two_bounds(tk, static_cast<unsigned>(K), static_cast<unsigned>((K + C - 1) / C), sm, b1, b2);
        (void)passes;
#ifdef FUSEBENCH_RADIX_TIMELINE
        tl_levels = static_cast<unsigned long long>(passes);
#endif
        if (tid == 0) {
            sm.b1 = b1;
            sm.b2 = b2;
        }
    }
    RADIX_STAMP(tl_bound);
    cl.sync();  // the blocks' max / sum and bounds
    float M = -INFINITY, S = 0.0f;
    std::uint32_t b1_max = 0, b2_min = 0xFFFFFFFFu;
    for (int c = 0; c < C; ++c) {
        merge_max_sum(M, S, *cl.map_shared_rank(&sm.m, c), *cl.map_shared_rank(&sm.s, c));
        b1_max = max(b1_max, *cl.map_shared_rank(&sm.b1, c));
        b2_min = min(b2_min, *cl.map_shared_rank(&sm.b2, c));
    }
    const std::uint32_t bound = max(b1_max, b2_min);
    RADIX_STAMP(tl_row_stats);
    // Same inputs in the same order in every block: the branches below are uniform over the cluster.
    const bool finite = !(S != S || M == INFINITY || M == -INFINITY);
    take_mode mode = take_mode::digits;
    if (tid == 0) {
        sm.M = M;  // read back at the end: two registers fewer through steps 2-4
        sm.S = S;
    }
    if (finite) {
        {
            // 3. One read (L2) by the slots whose maximum reaches L: elements above L to sm.cand,
            // elements equal to L to `ties` (global_hist's space: no remote block writes it now).
            unsigned want = 0;
#pragma unroll
            for (int q = 0; q < NS; ++q) want |= (tk[q] >= bound ? 1u : 0u) << (q / SH);
            if (tid == 0) {
                sm.cand_count = 0;
                sm.tie_count = 0;
            }
            __syncthreads();
            for_vectors(x, lo, hi, want, [&](const float (&v)[W], int j0, int nvalid, int) {
                float vm = v[0];
#pragma unroll
                for (int e = 1; e < W; ++e) vm = fmaxf(vm, v[e]);
                if (!__any_sync(full_mask, nvalid > 0 && float_key(vm) >= bound)) return;
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const std::uint32_t k = float_key(v[e]);
                    const std::uint64_t c = composite(k, static_cast<std::uint32_t>(j0 + e));
                    warp_append(&sm.cand_count, sm.cand, radix_cap, e < nvalid && k > bound, c);
                    warp_append(&sm.tie_count, ties, radix_tie_cap, e < nvalid && k == bound, c);
                }
            });
            __syncthreads();
            RADIX_STAMP(tl_reread);
            if (tid == 0) {
                sm.n_above = sm.cand_count;
                sm.n_ties = sm.tie_count;
            }
            cl.sync();
            unsigned A = 0, Tt = 0, before = 0;
            bool ties_stored = true;
            for (int c = 0; c < C; ++c) {
                const unsigned a = *cl.map_shared_rank(&sm.n_above, c), t = *cl.map_shared_rank(&sm.n_ties, c);
                A += a;
                Tt += t;
                ties_stored = ties_stored && t <= static_cast<unsigned>(radix_tie_cap);
                if (c < rank) before += t;
            }
            const unsigned Ku = static_cast<unsigned>(K);
            if (A + Tt <= static_cast<unsigned>(radix_cap) && ties_stored) {
                mode = take_mode::all;
            } else if (A > static_cast<unsigned>(radix_cap)) {
                mode = take_mode::digits;
            } else if (A >= Ku) {
                mode = take_mode::above;
            } else {
                // Fewer than K above L and at least K at or above it: L is the K-th key. This block's
                // share of the K - A ties of lowest index: lower chunks give theirs first.
                mode = take_mode::exact_ties;
                const unsigned need_t = Ku - A, mine = sm.n_ties;
                const unsigned take = before >= need_t ? 0u : min(mine, need_t - before);
                if (take > 0 && mine <= static_cast<unsigned>(radix_tie_cap)) {
                    // All of this block's ties are stored: all of them, or the `take` largest
                    // composites among them (same key: the lowest indices), by a radix select over
                    // the index bits.
                    if (take == mine) {
                        const unsigned base = sm.n_above;
                        for (unsigned i = static_cast<unsigned>(tid); i < take; i += block_threads) sm.cand[base + i] = ties[i];
                        if (tid == 0) sm.cand_count = base + take;
                    } else {
                        clear_select_smem(sm.sel);
                        __syncthreads();
                        std::uint64_t t_prefix = static_cast<std::uint64_t>(bound) << 32, t_mask = 0xFFFFFFFF00000000ull;
                        block_radix_select(static_cast<int>(take),
                                           make_strided(static_cast<int>(mine), [ties](int i) { return ties[i]; }), sm.sel,
                                           t_prefix, t_mask, 24);
                        for (unsigned i = static_cast<unsigned>(tid); i < mine; i += block_threads) {
                            if ((ties[i] & t_mask) >= t_prefix) sm.cand[atomicAdd(&sm.cand_count, 1u)] = ties[i];
                        }
                    }
                    __syncthreads();
                } else if (take > 0) {
                    // More ties here than stored: an in-order scan of the chunk that stops once found.
                    append_ties_in_order(sm, x, lo, hi, bound, take);
                }
            }
            // Blocks that go on to the digits reset cand_count only after two more cluster
            // barriers, so every block has read the same counts.
            RADIX_STAMP(tl_counts);
        }
    }
    if (finite && mode == take_mode::digits) {
        // 4. More than radix_cap above the bound: the top-digit histogram of every
        // element (one read, L2), then digits from the top until the candidates fit or the K-th key
        // is exact.
        for (int b = tid; b < radix_bins; b += block_threads) sm.local_hist[0][b] = 0;
        __syncthreads();
        for_vectors(x, lo, hi, ~0u, [&](const float (&v)[W], int, int nvalid, int) {
#pragma unroll
            for (int e = 0; e < W; ++e) hist_add(sm.local_hist[0], float_key(v[e]) >> 21, e < nvalid);
        });
        cl.sync();
        cluster_reduce_hist(cl, sm, 0, radix_bins, C, rank);
        cl.sync();

        unsigned need = static_cast<unsigned>(K), above_all = 0;
        std::uint32_t prefix = 0;
        int shift = 21, nbins = radix_bins, par = 0;
        bool exact = false;
        unsigned d_last = 0;
        for (;;) {
            scan_digit(sm.global_hist, nbins, need, sm);
            const unsigned d = sm.digit, above = sm.above, in_bin = sm.in_bin;
            need -= above;
            above_all += above;
            prefix |= d << shift;
            if (above_all + in_bin <= static_cast<unsigned>(radix_cap)) break;
            if (shift == 0) {
                exact = true;
                d_last = d;
                break;
            }
            const int next_shift = shift == 21 ? 10 : 0;
            const int next_bins = shift == 21 ? radix_bins : radix_bins / 2;
            const std::uint32_t hi_prefix = prefix >> shift;
            const int np = par ^ 1;  // its last readers finished before the previous level's barrier
            for (int b = tid; b < next_bins; b += block_threads) sm.local_hist[np][b] = 0;
            __syncthreads();
            for_vectors(x, lo, hi, ~0u, [&](const float (&v)[W], int, int nvalid, int) {
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const std::uint32_t k = float_key(v[e]);
                    hist_add(sm.local_hist[np], (k >> next_shift) & static_cast<unsigned>(next_bins - 1),
                             e < nvalid && (k >> shift) == hi_prefix);
                }
            });
            cl.sync();
            cluster_reduce_hist(cl, sm, np, next_bins, C, rank);
            cl.sync();
            par = np;
            shift = next_shift;
            nbins = next_bins;
        }

        // Candidates into this block's buffer.
        if (tid == 0) sm.cand_count = 0;
        __syncthreads();
        if (!exact || above_all > 0) {
            // Keys at or above the bin (prefix's lower bits are zero), or strictly above the exact K-th.
            const std::uint32_t lowest = exact ? prefix + 1 : prefix;
            for_vectors(x, lo, hi, ~0u, [&](const float (&v)[W], int j0, int nvalid, int) {
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const std::uint32_t k = float_key(v[e]);
                    if (e < nvalid && k >= lowest) append(sm, k, j0 + e);
                }
            });
        }
        if (exact) {
            // `need` ties equal to the K-th key, lowest indices first: lower chunks give theirs first.
            unsigned before = 0;
            for (int c = 0; c < rank; ++c) before += *cl.map_shared_rank(&sm.local_hist[par][d_last], c);
            const unsigned mine = sm.local_hist[par][d_last];
            const unsigned take = before >= need ? 0u : min(mine, need - before);
            __syncthreads();
            append_ties_in_order(sm, x, lo, hi, prefix, take);
        }
        __syncthreads();
    }
    // In modes all and above every block's candidates were in place at the count exchange's barrier:
    // block 0 gathers at once. The other modes moved or added candidates since.
    const bool in_place = finite && (mode == take_mode::all || mode == take_mode::above);
    if (!in_place) {
        RADIX_STAMP(tl_digits);
        cl.sync();  // every block's candidates are in place, the tie counts read
        RADIX_STAMP(tl_in_place);
    }

    // 5. Block 0 gathers, selects and sorts.
    auto* gathered = reinterpret_cast<std::uint64_t*>(&sm.local_hist[0][0]);
    unsigned n = 0;
    if (rank == 0 && finite) {
        for (int c = 0; c < C; ++c) {
            const unsigned nc = *cl.map_shared_rank(&sm.cand_count, c);
            const std::uint64_t* src = cl.map_shared_rank(&sm.cand[0], c);
            for (unsigned i = static_cast<unsigned>(tid); i < nc; i += block_threads) gathered[n + i] = src[i];
            n += nc;
            if (mode == take_mode::all) {
                const unsigned nt = *cl.map_shared_rank(&sm.tie_count, c);
                const std::uint64_t* tsrc = reinterpret_cast<const std::uint64_t*>(cl.map_shared_rank(&sm.global_hist[0], c));
                for (unsigned i = static_cast<unsigned>(tid); i < nt; i += block_threads) gathered[n + i] = tsrc[i];
                n += nt;
            }
        }
    }
    cl.sync();  // no block leaves while block 0 reads its shared memory
    RADIX_STAMP(tl_gathered);
#ifdef FUSEBENCH_RADIX_TIMELINE
    RADIX_NOTE((static_cast<unsigned long long>(n) << 32) | (tl_levels << 12) |
               (static_cast<unsigned long long>(static_cast<int>(mode)) << 8));
#endif
    if (rank != 0) return;
    float* p_out = probs + row * K;
    std::int32_t* i_out = indices + row * K;
    if (!finite) {
        // No finite softmax (PyTorch gives NaN): NaN probabilities, indices 0..K-1.
        for (int t = tid; t < K; t += block_threads) {
            p_out[t] = __int_as_float(0x7FC00000);
            i_out[t] = t;
        }
        return;
    }
    if (n <= 32u) {
        // At most 32 candidates (K <= 32 on random logits): one warp sorts them in registers, no
        // block barriers. Composite 0 (below every key) pads; n >= K.
        if (tid < 32) {
            std::uint64_t c = static_cast<unsigned>(tid) < n ? gathered[tid] : 0ull;
            c = warp_bitonic_sort_desc(c);
            RADIX_STAMP(tl_sorted);
            if (tid < K) {
                const float row_M = sm.M, inv_S = 1.0f / sm.S;
                p_out[tid] = expf(composite_value(c) - row_M) * inv_S;
                i_out[tid] = static_cast<std::int32_t>(composite_index(c));
            }
            RADIX_STAMP(tl_written);
        }
        return;
    }
    std::uint64_t* win = sm.cand;
    if (n > static_cast<unsigned>(K)) {
        clear_select_smem(sm.sel);
        __syncthreads();
        std::uint64_t sel_prefix = 0, sel_mask = 0;
        block_radix_select(K, make_strided(static_cast<int>(n), [gathered](int i) { return gathered[i]; }), sm.sel,
                           sel_prefix, sel_mask);
        if (tid == 0) sm.cand_count = 0;
        __syncthreads();
        for (unsigned i = static_cast<unsigned>(tid); i < n; i += block_threads) {
            if ((gathered[i] & sel_mask) >= sel_prefix) win[atomicAdd(&sm.cand_count, 1u)] = gathered[i];
        }
    } else {
        for (unsigned i = static_cast<unsigned>(tid); i < n; i += block_threads) win[i] = gathered[i];
    }
    RADIX_STAMP(tl_selected);
    const int P = 1 << (32 - __clz((K - 1) | 1));  // next power of two >= K (K = 1 gives 2)
    for (int i = K + tid; i < P; i += block_threads) win[i] = 0;
    __syncthreads();
    block_bitonic_sort_desc(win, P);
    RADIX_STAMP(tl_sorted);
    const float row_M = sm.M, inv_S = 1.0f / sm.S;
    for (int t = tid; t < K; t += block_threads) {
        const std::uint64_t c = win[t];
        p_out[t] = expf(composite_value(c) - row_M) * inv_S;
        i_out[t] = static_cast<std::int32_t>(composite_index(c));
    }
    RADIX_STAMP(tl_written);
}

template <class T> void launch_radix(const softmax_topk_args& a, cudaStream_t stream) {
    const std::int64_t row_bytes = a.V * static_cast<std::int64_t>(sizeof(T));
    // Enough blocks for the row's bytes, and for K: 4 K slot maxima (radix_slots_per_block a block)
    // keep the bound near the top quarter of the maxima, so about K (1 + 1/8) elements pass it.
    const std::int64_t by_bytes = (row_bytes + radix_chunk_bytes - 1) / radix_chunk_bytes;
    const std::int64_t by_k = (4 * a.K + radix_slots_per_block - 1) / radix_slots_per_block;
    const int C = static_cast<int>(std::clamp<std::int64_t>(std::max(by_bytes, by_k), 1, radix_max_cluster));
    std::int64_t chunk = (a.V + C - 1) / C;
    chunk = (chunk + 63) / 64 * 64;
    const auto smem = static_cast<int>(sizeof(radix_smem));
    auto* kern = softmax_topk_radix_kernel<T>;
    check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "softmax_topk_radix_kernel: cudaFuncSetAttribute");
    const std::int64_t max_rows = 0x7FFFFFFF / C;  // grid.x holds rows x C blocks
    for (std::int64_t r0 = 0; r0 < a.rows; r0 += max_rows) {
        const std::int64_t nr = std::min(max_rows, a.rows - r0);
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(static_cast<unsigned>(nr * C));
        cfg.blockDim = dim3(block_threads);
        cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
        cfg.stream = stream;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = static_cast<unsigned>(C);
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        check_call(cudaLaunchKernelEx(&cfg, kern, static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices,
                                      static_cast<int>(a.V), static_cast<int>(a.K), static_cast<int>(chunk), r0),
                   "softmax_topk_radix_kernel: launch");
        check_launch("softmax_topk_radix_kernel");
    }
}

}  // namespace

void launch_softmax_topk_fused_radix(const softmax_topk_args& a, cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_fused_radix");
    if (a.rows == 0) return;
    dispatch_elem(a.type, [&](auto v) { launch_radix<decltype(v)>(a, stream); });
}

}  // namespace fusebench::kernels
