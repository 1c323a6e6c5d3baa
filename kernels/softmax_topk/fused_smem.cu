// Fused softmax + top-k, v7 `fused_smem`: the row lives in shared memory, and the DRAM stream of
// the next row overlaps the selection of the current one (v6 `fused_radix` read the row twice and
// ran its per-row selection phases with no bytes in flight: NOTES.md, v6 steps 3-4b).
//
// A persistent grid of thread-block clusters, C blocks per cluster (1 block per SM), block `rank`
// owning the contiguous chunk [rank * chunk, (rank + 1) * chunk) of a row. Each block has two chunk
// buffers in shared memory; cluster q takes rows q, q + n_clusters, ... At the start of a row thread
// 0 issues the next row's chunk into the other buffer as 16 KB 1D bulk copies on an mbarrier (the
// 16-byte aligned interior; row starts are not 16-byte aligned when V is odd), and threads 0-15
// load the ragged head and tail (< 16 bytes each) with plain loads into registers, stored into the
// buffer when that row starts. So DRAM streams row r + 1 while the block
// selects row r, and the selection reads shared memory only. Per row:
// A. one pass over the chunk: the maxima of each thread's 4 slots (one fmax an element)
//    (the vectors it reads at one position of a batch; for 16-bit logits each half of a vector):
//    the slots partition the chunk. A lower bound of the chunk's K-th largest in any order: K <= 32,
//    the K-th largest of the block's 256 thread maxima (b1: each thread counts the maxima above
//    its own); K > 32, the block's K-th and ceil(K / C)-th largest slot maxima b1, b2
//    (fused_radix's block_two_bounds). One cluster barrier exchanges (max, b1, b2): the row's max
//    and L = max(max b1, min b2), a lower bound of the row's K-th largest key.
// B. a second pass over the chunk (shared memory): the sum of exp(x - max), elements above L
//    appended to the block's candidate list (warp-aggregated), elements equal to L counted. One
//    cluster barrier exchanges the sums and counts: A above and T at L over the row. A >= K and A <= 2048: the candidates are those
//    above L. A < K: L is the exact K-th key; the K - A ties of lowest index join (lower chunks
//    first, an in-order scan of the chunk that stops when found). A > 2048 (top values crowded into
//    few slots): the exact K-th key from 8-bit digit histograms of the chunks summed over the
//    cluster (4 levels), the elements above it and the ties of lowest index.
// C. the row's leader block (rank = row iteration mod C, so the select rotates over the blocks)
//    gathers the candidates through distributed shared memory and selects the exact top K of
//    (value, ~index) composites: at most 512 candidates by each one's rank among the others (the
//    ranks order them), more by a radix select and a bitonic sort.
// Any V up to 16 chunks (fp32 ~390K), fp32/bf16/fp16, K <= softmax_topk_max_k. Needs sm_90.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/globaltimer.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/mbarrier.cuh"
#include "kernels/softmax_topk/select.cuh"
#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace fusebench::kernels {
namespace {

using namespace topk_detail;
namespace cg = cooperative_groups;

constexpr int smem_stages = 2;          // chunk buffers per block (the row being selected, the next row)
constexpr int smem_cand_cap = 2048;     // candidates a block stores [composites]
constexpr int smem_gather_cap = 2048;   // candidates the leader gathers [composites]
constexpr int smem_max_cluster = 16;    // non-portable above 8
constexpr int smem_slots = 4;           // slot maxima per thread (1024 a block: K <= 1024)

static_assert(softmax_topk_max_k <= smem_slots * block_threads, "every block holds at least K slot maxima");
static_assert(softmax_topk_max_k <= smem_gather_cap, "the leader gathers at least K candidates");

struct smem_ctl {
    unsigned long long full[smem_stages];  // mbarriers: the buffer's bulk copies landed
    std::uint32_t tkey[block_threads];     // K <= 32: the threads' maximum keys (the block bound)
    std::uint64_t cand[smem_cand_cap];     // this block's candidates (read by the leader); the leader's winners
    std::uint64_t gath[smem_gather_cap];   // the leader's gathered candidates
    unsigned bound_hist[2][256];           // block_two_bounds' histograms (zero between uses)
    unsigned dig_hist[2][256];             // the digit path's local counts by level parity (read by the cluster)
    select_smem sel;                       // the leader's select; the digit path's summed counts
    float red[warps_per_block];
    unsigned scan_warp[warps_per_block];
    unsigned two_digit[2], two_above[2], two_in_bin[2];
    unsigned dig_digit, dig_above, dig_in_bin;
    // Exchanged through the cluster, by row parity: a fast block writes row r + 1's while a slow
    // one may still read row r's.
    float m[2], s[2];
    std::uint32_t b1[2], b2[2];
    unsigned a_n[2];     // candidates above L after step B (cand_n goes on counting the ties taken)
    unsigned tie_n[2];   // elements equal to L
    unsigned cand_n[2];  // this block's list length (read by the leader after the last barrier of the row)
    unsigned win_n;      // the leader's winners
};

// Per-phase time, a diagnostic build only (kernels/softmax_topk/probes/smem_timeline.cu defines
// FUSEBENCH_SMEM_TIMELINE and includes this file): thread 0 of each block adds the %globaltimer time
// of each phase to smem_timeline[block * smem_tl_points + phase] (ns, summed over its rows). Off,
// the stamps are empty statements.
enum smem_tl_point : int {
    tl_wait,     // row start -> this row's copies landed (and the barrier)
    tl_pass_a,   // pass A, block reductions and the block bound
    tl_bar1,     // cluster barrier 1 and the exchange
    tl_pass_b,   // pass B
    tl_bar2,     // cluster barrier 2 and the counts
    tl_ties,     // ties / digit path and barrier 3 (when taken)
    tl_leader,   // the leader's gather, select and writes
    tl_rows,     // rows taken (count)
    tl_ng,       // candidates gathered as leader (count)
    smem_tl_points = 10
};
#ifdef FUSEBENCH_SMEM_TIMELINE
__device__ unsigned long long* smem_timeline = nullptr;
#define SMEM_STAMP(point)                                                                                  \
    do {                                                                                                   \
        if (threadIdx.x == 0 && smem_timeline != nullptr) {                                                \
            const unsigned long long now_ = globaltimer_ns();                                                    \
            smem_timeline[static_cast<std::size_t>(blockIdx.x) * smem_tl_points + (point)] += now_ - tl_last; \
            tl_last = now_;                                                                                \
        }                                                                                                  \
    } while (0)
#else
#define SMEM_STAMP(point) ((void)0)
#endif

template <class T> struct alignas(16) vec16 {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

// Vectors per thread per batch (shared-memory loads issued together): 8 fp32, 4 16-bit. With 8
// warps a SM, latency is hidden by loads in flight per thread, not by other warps.
template <class T> constexpr int smem_unroll = sizeof(T) == 4 ? 8 : 4;

// Where a row's chunk lands in a buffer: buffer byte 0 is the 16-byte boundary at or below the
// chunk's first byte, so chunk element j is buffer element e0 + j. The bulk copy takes the aligned
// interior [a0, a1); head elements before it and tail elements after it are plain loads.
struct chunk_geom {
    const unsigned char* src;  // first bulk byte
    unsigned bulk_off;         // its buffer offset [bytes]
    unsigned bulk_bytes;       // [bytes], a multiple of 16
    int e0;                    // buffer element of chunk element 0
    int head, tail;            // plain-load elements before / after the bulk bytes
    int tail_e;                // buffer element of the first tail element
};

template <class T> __device__ __forceinline__ chunk_geom geom_of(const T* chunk_start, int n) {
    const auto g0 = reinterpret_cast<std::uintptr_t>(chunk_start);
    const std::uintptr_t ge = g0 + static_cast<std::uintptr_t>(n) * sizeof(T);
    const std::uintptr_t gd = g0 & ~static_cast<std::uintptr_t>(15);
    const std::uintptr_t a0 = min((g0 + 15) & ~static_cast<std::uintptr_t>(15), ge);
    const std::uintptr_t a1 = max(ge & ~static_cast<std::uintptr_t>(15), a0);
    chunk_geom g;
    g.src = reinterpret_cast<const unsigned char*>(a0);
    g.bulk_off = static_cast<unsigned>(a0 - gd);
    g.bulk_bytes = static_cast<unsigned>(a1 - a0);
    g.e0 = static_cast<int>((g0 - gd) / sizeof(T));
    g.head = static_cast<int>((a0 - g0) / sizeof(T));
    g.tail = static_cast<int>((ge - a1) / sizeof(T));
    g.tail_e = static_cast<int>((a1 - gd) / sizeof(T));
    return g;
}

constexpr unsigned smem_piece_bytes = 16u << 10;  // one bulk copy [bytes]: several in flight a chunk

// Calls on_vec(x, j0, u) for every 16-byte vector of the buffer holding the chunk (n elements from
// buffer element e0): x as floats, elements outside the chunk -inf, j0 the chunk index of x[0]
// (may be negative in the first vector), u the vector's position in its batch (its slot). Trip
// counts are uniform over each warp (on_vec may vote); every call gives each thread the same vectors.
template <class T, class F>
__device__ __forceinline__ void for_chunk(const T* buf, int e0, int n, F&& on_vec) {
    constexpr int W = vec16<T>::n;
    constexpr int U = smem_unroll<T>;
    const int nb = e0 + n;
    const int nvec = (nb + W - 1) / W;
    const auto* bv = reinterpret_cast<const vec16<T>*>(buf);
    for (int b = 0; b < nvec; b += U * block_threads) {
        vec16<T> r[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int i = b + u * block_threads + static_cast<int>(threadIdx.x);
            if (i < nvec) r[u] = bv[i];
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int i = b + u * block_threads + static_cast<int>(threadIdx.x);
            float x[W];
            if (i * W >= e0 && i * W + W <= nb) {  // all but the chunk's first and last vectors
#pragma unroll
                for (int e = 0; e < W; ++e) x[e] = to_f32(r[u].v[e]);
            } else {
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const int be = i * W + e;
                    x[e] = (i < nvec && be >= e0 && be < nb) ? to_f32(r[u].v[e]) : -INFINITY;
                }
            }
            on_vec(x, i * W - e0, u);
        }
    }
}

// Warp-aggregated append (as fused_radix's): the lanes with `pred` take consecutive places from
// *count and store `c` there while below `cap`; *count keeps counting past it. All 32 lanes call it.
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

// The need_a-th and need_b-th largest of the block's smem_slots * block_threads keys tk, each as a
// key floor (fused_radix's block_two_bounds on this kernel's shared memory): MSB-first 8-bit digits,
// both selects in the same passes, each stopping once its digit's bin is taken whole. sm.bound_hist
// is zero on entry and on return. All threads call it.
__device__ __forceinline__ void block_two_bounds(const std::uint32_t (&tk)[smem_slots], unsigned need_a,
                                                 unsigned need_b, smem_ctl& sm, std::uint32_t& out_a,
                                                 std::uint32_t& out_b) {
    const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
    unsigned need[2] = {need_a, need_b};
    std::uint32_t pre[2] = {0u, 0u};
    bool done[2] = {false, false};
    for (int shift = 24;; shift -= 8) {
#pragma unroll
        for (int q = 0; q < smem_slots; ++q) {
#pragma unroll
            for (int t = 0; t < 2; ++t) {
                const bool act = !done[t] && (shift == 24 || (tk[q] >> (shift + 8)) == (pre[t] >> (shift + 8)));
                hist_add(sm.bound_hist[t], (tk[q] >> shift) & 255u, act);
            }
        }
        __syncthreads();
        if (warp < 2 && !done[warp]) {
            unsigned d = 0, ab = 0, ib = 0;
            if (scan_bins_desc(sm.bound_hist[warp], need[warp], lane, d, ab, ib)) {
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
}

// Appends this block's `take` elements with key `key` of lowest index (chunk order) to sm.cand: an
// in-order scan of the buffer in tiles of block_threads that stops once they are found. All call it.
template <class T>
__device__ __forceinline__ void append_ties_in_order(smem_ctl& sm, unsigned* count, const T* buf, int e0, int n,
                                                     int lo, std::uint32_t key, unsigned take) {
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    unsigned taken = 0;
    for (int b = 0; b < n && taken < take; b += block_threads) {
        const int j = b + tid;
        const bool tie = j < n && float_key(to_f32(buf[e0 + j])) == key;
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
        if (tie && r < take) {
            const unsigned pos = atomicAdd(count, 1u);
            if (pos < static_cast<unsigned>(smem_cand_cap)) sm.cand[pos] = composite(key, static_cast<std::uint32_t>(lo + j));
        }
        taken += tile;
        __syncthreads();
    }
}

template <class T>
__global__ void __launch_bounds__(block_threads, 1)
    softmax_topk_smem_kernel(const T* __restrict__ logits, float* __restrict__ probs, std::int32_t* __restrict__ indices,
                             int V, int K, int chunk, int stage_bytes, std::int64_t rows) {
    constexpr int W = vec16<T>::n;
    constexpr int SH = W / 4;  // slots per vector: a 16-bit vector's halves are two slots
    extern __shared__ __align__(128) unsigned char smem_raw[];
    smem_ctl& sm = *reinterpret_cast<smem_ctl*>(smem_raw + smem_stages * stage_bytes);
    cg::cluster_group cl = cg::this_cluster();
    const int C = static_cast<int>(cl.num_blocks());
    const int rank = static_cast<int>(cl.block_rank());
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const std::int64_t cluster_id = blockIdx.x / C, n_clusters = gridDim.x / C;
    const int lo = min(V, rank * chunk), hi = min(V, lo + chunk), n = hi - lo;
    const unsigned Ku = static_cast<unsigned>(K);

    if (tid == 0) {
        for (int st = 0; st < smem_stages; ++st) {
            sm90::mbar_init(sm90::smem_u32(&sm.full[st]), 1);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    for (int b = tid; b < 2 * 256; b += block_threads) sm.bound_hist[0][b] = 0;
    clear_select_smem(sm.sel);
    __syncthreads();

    // Issues row `row`'s chunk into buffer `st`: thread 0 the aligned interior as 16 KB bulk copies
    // on the buffer's mbarrier (one instruction each: the issuing thread does not wait), threads
    // 0-15 the ragged head and tail into registers, stored when the row starts. (16-byte cp.async
    // pieces from every thread, the second form, timed the same within 3%: the copies are not what
    // limits this kernel; NOTES.md, v7.)
    T pend_v{};
    int pend_pos = -1;
    const auto prefetch = [&](std::int64_t it2) {
        pend_pos = -1;
        const std::int64_t row2 = cluster_id + it2 * n_clusters;
        if (row2 >= rows) return;
        const T* start = logits + row2 * V + lo;
        const chunk_geom g = geom_of(start, n);
        const int st = static_cast<int>(it2 & 1);
        if (tid == 0) {
            const auto bar = sm90::smem_u32(&sm.full[st]);
            const unsigned dst = sm90::smem_u32(smem_raw + st * stage_bytes) + g.bulk_off;
            // Generic-proxy reads of this buffer (the row before last) come before the copies' writes.
            sm90::fence_proxy_async();
            sm90::mbar_expect_tx(bar, g.bulk_bytes);
            for (unsigned o = 0; o < g.bulk_bytes; o += smem_piece_bytes)
                sm90::bulk_copy(dst + o, g.src + o, min(smem_piece_bytes, g.bulk_bytes - o), bar);
        }
        if (tid < 8 && tid < g.head) {
            pend_v = start[tid];
            pend_pos = g.e0 + tid;
        } else if (tid >= 8 && tid < 16 && tid - 8 < g.tail) {
            pend_v = start[g.tail_e - g.e0 + (tid - 8)];
            pend_pos = g.tail_e + (tid - 8);
        }
    };
    prefetch(0);

#ifdef FUSEBENCH_SMEM_TIMELINE
    unsigned long long tl_last = globaltimer_ns();
#endif
    for (std::int64_t it = 0;; ++it) {
        const std::int64_t row = cluster_id + it * n_clusters;
        if (row >= rows) break;
#ifdef FUSEBENCH_SMEM_TIMELINE
        if (threadIdx.x == 0 && smem_timeline != nullptr) smem_timeline[blockIdx.x * smem_tl_points + tl_rows] += 1;
#endif
        const int st = static_cast<int>(it & 1), p = static_cast<int>(it & 1);
        T* buf = reinterpret_cast<T*>(smem_raw + st * stage_bytes);
        SMEM_STAMP(tl_leader);  // since the previous row's last stamp: the leader's work (0 elsewhere)
        sm90::mbar_wait(sm90::smem_u32(&sm.full[st]), static_cast<unsigned>((it >> 1) & 1));
        if (pend_pos >= 0) buf[pend_pos] = pend_v;
        if (tid == 0) {
            sm.cand_n[p] = 0;  // its last remote reader (the leader two rows back) is done
            sm.tie_n[p] = 0;
            sm.b1[p] = 0;
            sm.b2[p] = 0;
        }
        __syncthreads();  // every thread's pieces and head / tail stores; every read of the other buffer is done
        SMEM_STAMP(tl_wait);
        prefetch(it + 1);
        const int e0 = geom_of(logits + row * V + lo, n).e0;

        // A. Slot maxima (one fmax an element; the sum of exp waits for the row's max, in pass B).
        float tm[smem_slots];
#pragma unroll
        for (int q = 0; q < smem_slots; ++q) tm[q] = -INFINITY;
        for_chunk(buf, e0, n, [&](const float (&v)[W], int, int u) {
#pragma unroll
            for (int hh = 0; hh < SH; ++hh) {
                const int q = (u * SH + hh) % smem_slots;
                tm[q] = fmaxf(tm[q], fmaxf(fmaxf(v[4 * hh], v[4 * hh + 1]), fmaxf(v[4 * hh + 2], v[4 * hh + 3])));
            }
        });
        float m = tm[0];
#pragma unroll
        for (int q = 1; q < smem_slots; ++q) m = fmaxf(m, tm[q]);
        const float mb = block_reduce_max(m, sm.red);
        if (tid == 0) sm.m[p] = mb;
        // The block's bounds: K distinct elements of the chunk are at or above b1, ceil(K / C) at or
        // above b2; an empty slot's maximum is -inf (it only lowers the bound).
        if (K <= 32) {
            // The K-th largest of the block's 256 thread maxima: the thread whose key v has fewer
            // than K above it and at least K at or above it (every such thread writes the same v).
            const std::uint32_t v = float_key(m);
            sm.tkey[tid] = v;
            __syncthreads();
            unsigned gt = 0, ge = 0;
            const auto* k4 = reinterpret_cast<const uint4*>(sm.tkey);
#pragma unroll 8
            for (int i = 0; i < block_threads / 4; ++i) {
                const uint4 q = k4[i];
                gt += (q.x > v) + (q.y > v) + (q.z > v) + (q.w > v);
                ge += (q.x >= v) + (q.y >= v) + (q.z >= v) + (q.w >= v);
            }
            if (gt < Ku && ge >= Ku) sm.b1[p] = v;
        } else {
            std::uint32_t tk[smem_slots];
#pragma unroll
            for (int q = 0; q < smem_slots; ++q) tk[q] = float_key(tm[q]);
            std::uint32_t b1 = 0, b2 = 0;
            block_two_bounds(tk, Ku, (Ku + C - 1) / C, sm, b1, b2);
            if (tid == 0) {
                sm.b1[p] = b1;
                sm.b2[p] = b2;
            }
        }
        SMEM_STAMP(tl_pass_a);
        cl.sync();  // 1: the blocks' max / sum and bounds (sm.tkey is rewritten only after barrier 2)
        float M = -INFINITY;
        std::uint32_t b1_max = 0, b2_min = 0xFFFFFFFFu;
        for (int c = 0; c < C; ++c) {
            M = fmaxf(M, *cl.map_shared_rank(&sm.m[p], c));
            b1_max = max(b1_max, *cl.map_shared_rank(&sm.b1[p], c));
            b2_min = min(b2_min, *cl.map_shared_rank(&sm.b2[p], c));
        }
        // K <= 32 leaves every b2 at 0: L = max b1.
        const std::uint32_t L = max(b1_max, b2_min);
        // Same inputs in the same order in every block: the branches below are uniform over the cluster.
        // +inf or all -inf: no finite softmax (NaN shows in the sum after pass B). The slot maxima
        // skip NaN (fmax), so M is never NaN.
        const bool finite_max = !(M == INFINITY || M == -INFINITY);
        SMEM_STAMP(tl_bar1);
        const int leader = static_cast<int>(it % C);
        float* p_out = probs + row * K;
        std::int32_t* i_out = indices + row * K;
        const auto write_nan_row = [&] {
            if (rank == leader) {
                for (int t = tid; t < K; t += block_threads) {
                    p_out[t] = __int_as_float(0x7FC00000);
                    i_out[t] = t;
                }
            }
        };
        if (!finite_max) {
            // No finite softmax (PyTorch gives NaN): NaN probabilities, indices 0..K-1.
            write_nan_row();
            continue;
        }

        // B. Sum of exp(x - M) (-inf adds 0, NaN makes it NaN); elements above L to sm.cand, those
        // equal to L counted.
        unsigned ties = 0;
        float s = 0.0f;
        for_chunk(buf, e0, n, [&](const float (&v)[W], int j0, int) {
#pragma unroll
            for (int e = 0; e < W; ++e) s += fast_exp2((v[e] - M) * log2e);
            float vm = v[0];
#pragma unroll
            for (int e = 1; e < W; ++e) vm = fmaxf(vm, v[e]);
            if (!__any_sync(full_mask, float_key(vm) >= L)) return;
#pragma unroll
            for (int e = 0; e < W; ++e) {
                const std::uint32_t k = float_key(v[e]);
                const bool valid = j0 + e >= 0 && j0 + e < n;
                ties += (valid && k == L) ? 1u : 0u;
                warp_append(&sm.cand_n[p], sm.cand, smem_cand_cap, valid && k > L,
                            composite(k, static_cast<std::uint32_t>(lo + j0 + e)));
            }
        });
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) ties += __shfl_xor_sync(full_mask, ties, d);
        if (lane == 0 && ties > 0) atomicAdd(&sm.tie_n[p], ties);
        const float sb = block_reduce_sum(s, sm.red);  // its barriers order the appends before the snapshot
        SMEM_STAMP(tl_pass_b);
        if (tid == 0) {
            sm.s[p] = sb;
            sm.a_n[p] = sm.cand_n[p];  // a snapshot: the list may grow after the barrier
        }
        cl.sync();  // 2: the sums and counts
        unsigned A = 0, before_t = 0;
        float S = 0.0f;
        for (int c = 0; c < C; ++c) {
            S += *cl.map_shared_rank(&sm.s[p], c);  // the same order in every block
            A += *cl.map_shared_rank(&sm.a_n[p], c);
            if (c < rank) before_t += *cl.map_shared_rank(&sm.tie_n[p], c);
        }
        SMEM_STAMP(tl_bar2);
        if (S != S) {  // a NaN in the row
            write_nan_row();
            continue;
        }
        if (A < Ku) {
            // Fewer than K above L and at least K at or above it: L is the K-th key. This block's
            // share of the K - A ties of lowest index: lower chunks give theirs first.
            const unsigned need_t = Ku - A, mine = sm.tie_n[p];
            const unsigned take = before_t >= need_t ? 0u : min(mine, need_t - before_t);
            if (take > 0) append_ties_in_order(sm, &sm.cand_n[p], buf, e0, n, lo, L, take);
            cl.sync();  // 3: every block's candidates are in place
        } else if (A > static_cast<unsigned>(smem_gather_cap)) {
            // More above L than the leader holds: the exact K-th key from 8-bit digits of every key
            // (histograms of the chunks in shared memory, summed over the cluster), then the
            // elements above it and its ties of lowest index.
            unsigned need = Ku;
            std::uint32_t prefix = 0;
            unsigned d_last = 0;
            for (int lvl = 0; lvl < 4; ++lvl) {
                const int shift = 24 - 8 * lvl;
                unsigned* h = sm.dig_hist[lvl & 1];
                h[tid] = 0;  // its readers finished before the previous level's barrier
                __syncthreads();
                for_chunk(buf, e0, n, [&](const float (&v)[W], int j0, int) {
#pragma unroll
                    for (int e = 0; e < W; ++e) {
                        const std::uint32_t k = float_key(v[e]);
                        const bool valid = j0 + e >= 0 && j0 + e < n;
                        hist_add(h, (k >> shift) & 255u, valid && (lvl == 0 || (k >> (shift + 8)) == (prefix >> (shift + 8))));
                    }
                });
                cl.sync();
                unsigned tot = 0;
                for (int c = 0; c < C; ++c) tot += *cl.map_shared_rank(&h[tid], c);
                sm.sel.hist[tid] = tot;
                __syncthreads();
                if (warp == 0) {
                    unsigned d = 0, ab = 0, ib = 0;
                    if (scan_bins_desc(sm.sel.hist, need, lane, d, ab, ib)) {
                        sm.dig_digit = d;
                        sm.dig_above = ab;
                        sm.dig_in_bin = ib;
                    }
                }
                __syncthreads();
                need -= sm.dig_above;
                d_last = sm.dig_digit;
                prefix |= d_last << shift;
                __syncthreads();  // sm.dig_* read before the next level's scan rewrites them
            }
            // prefix is the K-th key; `need` of its ties join (lowest index first).
            unsigned before = 0;
            for (int c = 0; c < rank; ++c) before += *cl.map_shared_rank(&sm.dig_hist[1][d_last], c);
            const unsigned mine = sm.dig_hist[1][d_last];
            const unsigned take = before >= need ? 0u : min(mine, need - before);
            if (tid == 0) sm.cand_n[p] = 0;  // the others read a_n, not cand_n
            __syncthreads();
            for_chunk(buf, e0, n, [&](const float (&v)[W], int j0, int) {
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const std::uint32_t k = float_key(v[e]);
                    const bool valid = j0 + e >= 0 && j0 + e < n;
                    warp_append(&sm.cand_n[p], sm.cand, smem_cand_cap, valid && k > prefix,
                                composite(k, static_cast<std::uint32_t>(lo + j0 + e)));
                }
            });
            __syncthreads();
            if (take > 0) append_ties_in_order(sm, &sm.cand_n[p], buf, e0, n, lo, prefix, take);
            cl.sync();  // 3: every block's candidates are in place, the tie counts read
        }
        SMEM_STAMP(tl_ties);
        if (rank != leader) continue;

        // C. The leader gathers, selects and sorts.
        unsigned nc_all = 0;
        for (int c = 0; c < C; ++c) {
            const unsigned nc = min(*cl.map_shared_rank(&sm.cand_n[p], c), static_cast<unsigned>(smem_cand_cap));
            const std::uint64_t* src = cl.map_shared_rank(&sm.cand[0], c);
            for (unsigned i = static_cast<unsigned>(tid); i < nc && nc_all + i < static_cast<unsigned>(smem_gather_cap);
                 i += block_threads)
                sm.gath[nc_all + i] = src[i];
            nc_all += nc;
        }
        const unsigned ng = min(nc_all, static_cast<unsigned>(smem_gather_cap));
        __syncthreads();
#ifdef FUSEBENCH_SMEM_TIMELINE
        if (threadIdx.x == 0 && smem_timeline != nullptr) smem_timeline[blockIdx.x * smem_tl_points + tl_ng] += ng;
#endif
        const float inv_S = 1.0f / S;
        // The leader's own list is gathered: its space takes the winners (no other block reads it).
        std::uint64_t* win = sm.cand;
        if (ng <= 2u * block_threads) {
            // Each candidate's rank among the others (composites are distinct): those of rank < K
            // are the top K, already in order. No barrier; two candidates a thread at most.
            const unsigned t0 = static_cast<unsigned>(tid), t1 = t0 + block_threads;
            const std::uint64_t c0 = t0 < ng ? sm.gath[t0] : ~0ull, c1 = t1 < ng ? sm.gath[t1] : ~0ull;
            unsigned r0 = 0, r1 = 0;
            const auto* g2 = reinterpret_cast<const ulonglong2*>(sm.gath);
            const unsigned npairs = ng / 2;
            for (unsigned i = 0; i < npairs; ++i) {
                const ulonglong2 q = g2[i];
                r0 += (q.x > c0) + (q.y > c0);
                r1 += (q.x > c1) + (q.y > c1);
            }
            if (ng & 1u) {
                const std::uint64_t q = sm.gath[ng - 1];
                r0 += q > c0;
                r1 += q > c1;
            }
            if (t0 < ng && r0 < Ku) {
                p_out[r0] = expf(composite_value(c0) - M) * inv_S;
                i_out[r0] = static_cast<std::int32_t>(composite_index(c0));
            }
            if (t1 < ng && r1 < Ku) {
                p_out[r1] = expf(composite_value(c1) - M) * inv_S;
                i_out[r1] = static_cast<std::int32_t>(composite_index(c1));
            }
            continue;
        }
        if (ng > Ku) {
            std::uint64_t sel_prefix = 0, sel_mask = 0;
            const std::uint64_t* g = sm.gath;
            block_radix_select(K, make_strided(static_cast<int>(ng), [g](int i) { return g[i]; }), sm.sel, sel_prefix,
                               sel_mask);
            if (tid == 0) sm.win_n = 0;
            __syncthreads();
            for (unsigned i = static_cast<unsigned>(tid); i < ng; i += block_threads) {
                if ((g[i] & sel_mask) >= sel_prefix) win[atomicAdd(&sm.win_n, 1u)] = g[i];
            }
        } else {
            for (unsigned i = static_cast<unsigned>(tid); i < ng; i += block_threads) win[i] = sm.gath[i];
        }
        const int P = 1 << (32 - __clz((K - 1) | 1));  // next power of two >= K (K = 1 gives 2)
        for (int i = K + tid; i < P; i += block_threads) win[i] = 0;
        __syncthreads();
        block_bitonic_sort_desc(win, P);
        for (int t = tid; t < K; t += block_threads) {
            const std::uint64_t c = win[t];
            p_out[t] = expf(composite_value(c) - M) * inv_S;
            i_out[t] = static_cast<std::int32_t>(composite_index(c));
        }
        __syncthreads();  // win (sm.cand) is this block's next candidate list
    }
    cl.sync();  // no block leaves while a leader reads its shared memory
}

template <class T> void launch_smem(const softmax_topk_args& a, cudaStream_t stream) {
    auto* kern = softmax_topk_smem_kernel<T>;
    int dev = 0;
    check_call(cudaGetDevice(&dev), "launch_softmax_topk_fused_smem: cudaGetDevice");
    int max_optin = 0;
    check_call(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
               "launch_softmax_topk_fused_smem: cudaDeviceGetAttribute");
    constexpr auto ctl = static_cast<std::int64_t>(sizeof(smem_ctl));
    constexpr auto sz = static_cast<std::int64_t>(sizeof(T));
    // A buffer holds the chunk plus 32 bytes (the 16-byte boundary below its start, the last vector).
    const std::int64_t stage_max = (max_optin - ctl) / smem_stages / 128 * 128;
    const std::int64_t chunk_max = (stage_max - 32) / sz / 64 * 64;
    const std::int64_t min_c = (a.V + chunk_max - 1) / chunk_max;
    if (min_c > smem_max_cluster) {
        throw std::invalid_argument("launch_softmax_topk_fused_smem: V " + std::to_string(a.V) + " needs " +
                                    std::to_string(min_c) + " blocks a row (at most " +
                                    std::to_string(smem_max_cluster) + ")");
    }
    check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
               "softmax_topk_smem_kernel: cudaFuncSetAttribute(non-portable cluster)");
    // C: the fewest blocks a row that fit, unless more blocks a row keep more SMs busy (clusters
    // must fit a GPC; the occupancy query says how many are resident).
    // A launch of `grid` blocks in clusters of `c` with `smem` bytes of dynamic shared memory; the
    // configuration points at `attr`, which must outlive it.
    const auto cluster_config = [&](unsigned grid, unsigned c, int smem, cudaLaunchAttribute& attr) {
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(grid);
        cfg.blockDim = dim3(block_threads);
        cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
        cfg.stream = stream;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = c;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        return cfg;
    };
    // The search below asks the occupancy of each cluster size; its answer depends only on the
    // device, the element type (this instantiation) and V, so it is made once per (device, V).
    struct plan {
        int c = 0, clusters = 0, stage = 0;
        std::int64_t chunk = 0;
    };
    static std::mutex plans_mutex;
    static std::map<std::pair<int, std::int64_t>, plan> plans;
    plan best;
    {
        const std::lock_guard<std::mutex> lock(plans_mutex);
        if (const auto it = plans.find({dev, a.V}); it != plans.end()) best = it->second;
    }
    if (best.clusters == 0) {
        const std::int64_t sms = cached_sm_count(dev);
        const std::int64_t c_hi = std::min<std::int64_t>(smem_max_cluster, std::max<std::int64_t>(min_c, 8));
        for (std::int64_t c = min_c; c <= c_hi; ++c) {
            std::int64_t chunk = (a.V + c - 1) / c;
            chunk = (chunk + 63) / 64 * 64;
            if ((c - 1) * chunk >= a.V && c > min_c) break;  // more blocks would hold nothing
            const auto stage = static_cast<int>((chunk * sz + 32 + 127) / 128 * 128);
            const int smem = smem_stages * stage + static_cast<int>(ctl);
            check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                       "softmax_topk_smem_kernel: cudaFuncSetAttribute(shared memory)");
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg = cluster_config(static_cast<unsigned>(c), static_cast<unsigned>(c), smem, attr);
            int clusters = 0;
            check_call(cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg),
                       "softmax_topk_smem_kernel: cudaOccupancyMaxActiveClusters");
            // Blocks beyond one a SM do not count (two blocks a SM halve each one's share of it).
            if (std::min<std::int64_t>(static_cast<std::int64_t>(clusters) * c, sms) >
                std::min<std::int64_t>(static_cast<std::int64_t>(best.clusters) * best.c, sms)) {
                best = plan{static_cast<int>(c), clusters, stage, chunk};
            }
        }
        if (best.clusters == 0) {
            throw std::runtime_error("launch_softmax_topk_fused_smem: no cluster of " + std::to_string(min_c) +
                                     " blocks fits the device");
        }
        const std::lock_guard<std::mutex> lock(plans_mutex);
        plans.emplace(std::make_pair(dev, a.V), best);
    }
    const int smem = smem_stages * best.stage + static_cast<int>(ctl);
    check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "softmax_topk_smem_kernel: cudaFuncSetAttribute(shared memory)");
    const std::int64_t n_clusters = std::min<std::int64_t>(a.rows, best.clusters);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg =
        cluster_config(static_cast<unsigned>(n_clusters * best.c), static_cast<unsigned>(best.c), smem, attr);
    check_call(cudaLaunchKernelEx(&cfg, kern, static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices,
                                  static_cast<int>(a.V), static_cast<int>(a.K), static_cast<int>(best.chunk), best.stage,
                                  a.rows),
               "softmax_topk_smem_kernel: launch");
    check_launch("softmax_topk_smem_kernel");
}

}  // namespace

void launch_softmax_topk_fused_smem(const softmax_topk_args& a, cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_fused_smem");
    const std::int64_t row_bytes = a.V * (a.type == elem::f32 ? 4 : 2);
    if (row_bytes > softmax_topk_smem_max_row_bytes) {
        throw std::invalid_argument("launch_softmax_topk_fused_smem: a row of " + std::to_string(row_bytes) +
                                    " bytes is more than " + std::to_string(softmax_topk_smem_max_row_bytes) +
                                    " (16 blocks a cluster)");
    }
    if (a.rows == 0) return;
    dispatch_elem(a.type, [&](auto v) { launch_smem<decltype(v)>(a, stream); });
}

}  // namespace fusebench::kernels
