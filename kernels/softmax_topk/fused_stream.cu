// Fused softmax + top-k, v5 `fused_stream`: one warp per row, built to stream at the DRAM limit.
//
// v4 (fused_warp.cu) showed that a warp per row keeps exactly one DRAM pass but spends too many
// instructions per element and spills. v5 keeps its shape and trims the per-element path to
// unpack, max, subtract, scale, ex2, add:
// - a rolling register pipeline of U 16-byte vectors per lane: each vector is consumed and its
//   registers refilled with the vector one batch ahead at once, so U - 1 to U loads per lane are
//   always in flight (the first v5 issued U loads, then waited on all of them and computed with
//   none in flight: 65% of the copy floor where the rolling loop reaches 88%);
// - one max per vector per lane, the running sum rescaled only when that max rises;
// - no per-element NaN/+inf test: exp(x - m) turns either into a NaN sum (NaN - m, +inf - +inf),
//   so the row statistics say it at the end;
// - one candidate vote per vector (vector max > threshold); the append path runs only for vectors
//   that hold a candidate;
// - no function calls: every compaction is inline, because a call makes the ABI save the live
//   registers, the loads in flight among them, to local memory (the first v5 read 18.7M local
//   sectors per launch that way).
// Selection per warp: a shared-memory buffer of 64-bit (value, ~index) composites. Candidates
// above the running threshold are appended through ballots; when the buffer could overflow, a warp
// radix select (8-bit digits, stops once the K-th composite's bin is taken whole) keeps the exact
// top K and raises the threshold to the smallest kept value. Strict `>` is exact with ties: an
// element equal to the threshold arrives after the K kept ones of that value or above, so its index
// is higher and it ranks below all of them. For K <= 32 the first batch seeds the threshold with
// the K-th largest of the 32 lane maxima (K elements of the batch are at or above it), so a row
// appends ~K ln(V / batch) candidates instead of its first batch, and room for a whole batch is
// made at batch starts. K > 32 has its own kernel (softmax_topk_stream_big_kernel): the row is read
// in stratified order, a sample of 1/P of it first, whose top 64 (to 96) set the threshold (about
// 2.5 K to 3.75 K elements of a row pass it, against ~K (1 + ln(V / buffer)) for a running
// exact top K; a sample of at most 640 vectors takes the 64th largest of its vectors' maxima
// instead, sample_by_maxima); candidates are compared as composites (exact in any order); a vector holding a
// candidate is parked in a shared list (one ballot per vector) and the list is drained 32 vectors
// at a time; loads go in batches of U steps; a row that lets fewer than K through is read again in
// order without the sample (as is one that, after the first phase past the sample, gains too few to
// reach K: the sample then held the row's top). Its blocks are one per SM with the rows split evenly, and a row ends
// with its top K sorted by value-range bins (finish_by_bins; K > 256: finish_wide, which writes the
// output from the bins) rather than a select and a sort. K > 256 (fused_stream): a sample of 1/10 by
// maxima with a rank from the sampled share (wide_sample_rank), the keys given the shared memory the
// block's warps leave, and softmax_topk_stream_wide_kernel, whose warps take rows in a loop (fp32: in
// runs of 4 steps, the next run's loads in flight while a run is voted on).
// No block barrier anywhere: a warp that selects never stalls the other rows of its SM.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/globaltimer.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/softmax_topk/select.cuh"
#include "kernels/softmax_topk/softmax_topk.hpp"
#include "kernels/softmax_topk/warp_row.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fusebench::kernels {
namespace {

using topk_detail::composite;
using topk_detail::composite_index;
using topk_detail::composite_value;
using topk_detail::fast_exp2;
using topk_detail::float_key;
using topk_detail::full_mask;
using topk_detail::hist_add;
using topk_detail::kahan_add;
using topk_detail::log2e;

// K <= 32 kernel: 4 rows per block, 8 blocks per SM (64 registers: 32 rows per SM), or one block of
// 32 rows an SM where the rows make one such wave (FUSEBENCH_STREAM_WHOLE_SM below: 4096-4224 rows on
// 132 SMs). The K > 32 kernel sizes its blocks at launch (one per SM).
// FUSEBENCH_STREAM_WARPS (probe builds; 4 in the library): warps (rows) a block, 32 / it blocks an SM,
// for every row count.
#ifdef FUSEBENCH_STREAM_WARPS
#define FUSEBENCH_STREAM_WARPS_FIXED 1
#else
#define FUSEBENCH_STREAM_WARPS 4
#define FUSEBENCH_STREAM_WARPS_FIXED 0
#endif
constexpr int stream_warps = FUSEBENCH_STREAM_WARPS;
constexpr int stream_blocks_per_sm = 32 / stream_warps;
static_assert(stream_warps * stream_blocks_per_sm == 32);
// Shared memory per warp stays under this many keys where K allows, so 8 blocks fit an SM.
constexpr int keys_budget = 800;
// The radix select's 256 bins as 16-bit counts, two per word (a buffer holds < 65536 keys): 512
// bytes per warp instead of 1 KB, which lets 16-bit logits keep U = 3 vectors per lane and a whole
// batch of room at 8 blocks per SM.
constexpr int hist_words = 128;
// Deferred list (K > 32): a batch of U vectors per lane always fits, and a drain takes at least 32.
template <int U> constexpr int list_cap = 32 * U + 32;
// fused_stream's 16-bit kernels at K in (32, 256] load U = big16_u steps a batch (other 16-bit K > 32
// kernels: 2). At U = 3 the launcher's cap is K + 32 W = 512 at K = 256, so compactions that made room
// for a whole round (32 W) kept exactly K (several radix passes); they make room for the round's own
// count instead (insert_round's CountRoom). H100 (GPU-f83ecb16, probes/stream_plain.cu, 4096 rows,
// std 10, us, median of 2 interleaved rounds, U = 2 -> U = 3 with CountRoom): bf16 50257 K = 256
// 221.3 -> 222.3, fp16 206.7 -> 201.3, bf16 32000 K = 256 152.4 -> 148.9, bf16 151936 K = 256
// 519.3 -> 509.4, bf16 50257 K = 128 211.9 -> 209.0, K = 64 198.9 -> 197.2, fp16 K = 64 192.3 ->
// 189.8 (U = 3 without CountRoom: bf16 50257 K = 256 227.0, bf16 32000 K = 256 161.9).
constexpr int big16_u = 3;
template <class T, int U> constexpr bool count_room = sizeof(T) == 2 && U == big16_u;
// fused_stream_resample at K > 32 (big_pass' Mode): the sampled pass of a row it gives up leaves a
// route in cthr's word (no composite of a kept element is 0 or 1: key 0 is a NaN); the in-order
// function turns it into a mark in the row's first output index (never an index) for the retry
// kernel: route_safe / mark_safe (the safe sample), route_ties / mark_ties (in order, index vote).
constexpr std::uint64_t route_safe = 0ull, route_ties = 1ull;
constexpr std::int32_t mark_safe = -1, mark_ties = -2;
// The retry kernel's launch with programmatic stream serialization (0 in probe builds: a plain launch).
#ifndef FUSEBENCH_STREAM_RETRY_PDL
#define FUSEBENCH_STREAM_RETRY_PDL 1
#endif

template <class T> struct alignas(16) vec16 {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

// The warp's selection state (warp-uniform). The buffer and histogram pointers stay out of it: they
// are derived from the __shared__ array in the kernel, so the compiler keeps shared-space accesses.
struct sel_state {
    int count = 0;          // composites in the buffer
    float thr = -INFINITY;  // candidates: x > thr (K > 32: a vector vote, at or above cthr's value)
    int vn = 0;             // vectors in the deferred list (K > 32)
};

// Per-row timeline of the K <= 32 kernel, a diagnostic build only (kernels/softmax_topk/probes/
// stream_timeline.cu defines FUSEBENCH_STREAM_TIMELINE and includes this file): lane 0 of each row's
// warp writes %globaltimer at the points below, its SM and its counts into
// stream_timeline[row * stream_tl_points + point] (the counts by atomics on the row's slots, from
// the K <= 32 kernel's row index, so that no counter is live in registers). Off, the stamps and
// counts are empty statements.
enum stream_tl_point : int {
    stl_start,     // the warp's first instruction after its row index
    stl_seed,      // first batch landed and the threshold seeded
    stl_eighth,    // an eighth and half of the row's full batches consumed (a stamp at three
    stl_half,      // quarters too made the 16-bit kernel spill)
    stl_stream,    // every element consumed (scalar tail included)
    stl_stats,     // row max and sum across the warp
    stl_end,       // top K written
    stl_smid,
    stl_appends,   // warp steps with an append
    stl_compactions,
    stream_tl_points = 10
};
#ifdef FUSEBENCH_STREAM_TIMELINE
__device__ unsigned long long* stream_timeline = nullptr;
#define STREAM_SET(row, point, value)                                                                      \
    do {                                                                                                   \
        if (threadIdx.x % 32 == 0 && stream_timeline != nullptr)                                           \
            stream_timeline[static_cast<std::size_t>(row) * stream_tl_points + (point)] = (value);         \
    } while (0)
#define STREAM_STAMP(row, point) STREAM_SET(row, point, globaltimer_ns())
// The K <= 32 kernel's row from the special registers (nothing live across the stream loop).
#define STREAM_SLOT_SMALL(point) \
    stream_timeline[(static_cast<std::size_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * stream_tl_points + (point)]
#define STREAM_COUNT_SMALL(point)                                                                    \
    do {                                                                                              \
        if (threadIdx.x % 32 == 0 && stream_timeline != nullptr) atomicAdd(&STREAM_SLOT_SMALL(point), 1ull); \
    } while (0)
#define STREAM_STAMP_SMALL(point)                                                                   \
    do {                                                                                             \
        if (threadIdx.x % 32 == 0 && stream_timeline != nullptr) STREAM_SLOT_SMALL(point) = globaltimer_ns(); \
    } while (0)
#else
#define STREAM_COUNT_SMALL(point) \
    do {                          \
    } while (0)
#define STREAM_SET(row, point, value) \
    do {                              \
    } while (0)
#define STREAM_STAMP(row, point) STREAM_SET(row, point, 0)
#endif

// K > 32 reads rows in stratified order, so arrival order says nothing about indices: an element is
// a candidate when its composite beats the smallest kept one, `cthr`. It lives in shared memory
// right after the warp's bins (read by drains, written by compactions: registers stay with the
// stream). The start value is the largest composite of -inf, so no -inf entry is ever a candidate
// (as with x > -inf).
constexpr std::uint64_t cthr_start = (static_cast<std::uint64_t>(0x007FFFFFu) << 32) | 0xFFFFFFFFull;
__device__ __forceinline__ std::uint64_t& cthr_of(unsigned* hist) {
    return *reinterpret_cast<std::uint64_t*>(hist + hist_words);
}
// x (index idx) beats the composite c: a larger value, or the same value at a lower index.
__device__ __forceinline__ bool beats(float x, std::uint32_t idx, float cv, std::uint32_t ci) {
    return x > cv || (x == cv && idx < ci);
}

// K > 32: the deferred list of candidate vectors (a vector whose max beat the threshold when it was
// read), drained 32 at a time into the composite buffer. Entries: the 16 bytes and the index of the
// vector's first element.
template <class T> struct vec_list {
    vec16<T>* vec;
    std::uint32_t* idx;
};

// Radix select over keys[0, n) (distinct composites, n > K): returns T such that K <= #(keys >= T)
// <= limit (limit = K: exactly K, the top K). MSB first, 8-bit digits starting right below the
// bits every key shares (`prefix`/`mask`, first digit at bit `shift`); it stops as soon as keeping
// the whole bin that holds the K-th key keeps at most `limit`, so an intermediate compaction (limit
// above K) usually takes one histogram pass where an exact one takes three or more.
// Plain: one shared atomic per key instead of one per distinct bin among the warp's keys
// (__match_any_sync). The K > 32 kernel's compactions start below the keys' common leading bits, so
// their bins spread and atomics rarely collide; the match was the slower part there (H100, fp32
// 4096 x 50257 K = 256: 365.1 us with the match, 358.5 without, same run). Keys that share their
// leading digits (the K <= 32 kernel starts at the top bits) keep the match.
template <bool Plain>
__device__ __forceinline__ std::uint64_t warp_radix_select(const std::uint64_t* keys, int n, int K, int limit,
                                                           unsigned* hist, int lane, std::uint64_t prefix,
                                                           std::uint64_t mask, int shift) {
    unsigned need = static_cast<unsigned>(K);
    for (;;) {
        for (int t0 = 0; t0 < n; t0 += 32) {
            const int t = t0 + lane;
            const bool valid = t < n;
            const std::uint64_t c = valid ? keys[t] : 0ull;
            const unsigned bin = static_cast<unsigned>(c >> shift) & 255u;
            if (Plain) {
                if (valid && (c & mask) == prefix) atomicAdd(&hist[bin >> 1], 1u << ((bin & 1u) * 16u));
            } else {
                hist_add<true>(hist, bin, valid && (c & mask) == prefix);
            }
        }
        __syncwarp();
        unsigned digit = 0, above_bin = 0, in_bin = 0;
        const bool mine = topk_detail::scan_bins_desc<true>(hist, need, lane, digit, above_bin, in_bin);
        const int src = __ffs(__ballot_sync(full_mask, mine)) - 1;
        digit = __shfl_sync(full_mask, digit, src);
        above_bin = __shfl_sync(full_mask, above_bin, src);
        in_bin = __shfl_sync(full_mask, in_bin, src);
        need -= above_bin;
        // Digit bits that overlap known bits (a last digit below bit 8) agree with them.
        prefix |= static_cast<std::uint64_t>(digit) << shift;
        mask |= 0xFFull << shift;
        __syncwarp();  // bins cleared before the next pass adds
        // Keeping the bin whole keeps K - need (above it) + in_bin keys.
        if (static_cast<int>(K - need + in_bin) <= limit || shift == 0) return prefix;
        shift = shift > 8 ? shift - 8 : 0;
    }
}

// Keeps the top K of the buffer (count > K), and at most `limit` keys in all, and raises the
// threshold to the smallest kept value. Inline at every use: a call makes the ABI save the live
// registers, and the vectors in flight would go through local memory (measured: 18.7M local-load
// sectors per launch when v5 had calls).
// Big (the K > 32 kernel): the keys' common leading bits are those of two bounds on their values,
// and the first digit examined is the one right below them, so the first histogram spreads instead
// of piling into one bin; the threshold is kept as the smallest kept composite (cthr). The bounds
// cost no pass over the keys: every key in the buffer beats cthr (drain_list tests a round again
// after a compaction inside it), and none is above the row's running maximum, `lane_max` across the
// warp (the K <= 32 kernel passes its lane maximum too; only Big reads it). (A min / max pass over
// the keys in every compaction instead: H200, fp32 4096 x 50257
// K = 256 261.9 against 248.6 us.) The K <= 32 kernel compacts rarely and keeps the plain select
// (the extra pass costs it registers: spills at 64).
template <bool Big>
__device__ __forceinline__ sel_state compact(std::uint64_t* keys, unsigned* hist, sel_state w, int K, int limit,
                                             int lane, float lane_max) {
    __syncwarp();  // the appends' writes before the select's reads
    if (!Big) STREAM_COUNT_SMALL(stl_compactions);
    std::uint64_t prefix0 = 0, mask0 = 0;
    int shift0 = 56;
    if (Big) {
        const auto lo = static_cast<std::uint32_t>(cthr_of(hist) >> 32);
        const std::uint32_t hi = __reduce_max_sync(full_mask, float_key(lane_max));
        const int common = lo == hi ? 32 : __clz(lo ^ hi);
        mask0 = common == 0 ? 0ull : ~0ull << (64 - common);
        prefix0 = (static_cast<std::uint64_t>(lo) << 32) & mask0;
        shift0 = 56 - common;
    }
    const std::uint64_t T = warp_radix_select<Big>(keys, w.count, K, limit, hist, lane, prefix0, mask0, shift0);
    std::uint64_t kmin = ~0ull;
    int out = 0;
    for (int t0 = 0; t0 < w.count; t0 += 32) {
        const int t = t0 + lane;
        const std::uint64_t c = t < w.count ? keys[t] : 0ull;
        const bool keep = t < w.count && c >= T;
        __syncwarp();  // every lane has read its composite before any lane writes (out <= t0)
        const unsigned m = __ballot_sync(full_mask, keep);
        if (keep) {
            keys[out + __popc(m & ((1u << lane) - 1u))] = c;
            kmin = c < kmin ? c : kmin;
        }
        out += __popc(m);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const std::uint64_t v = __shfl_xor_sync(full_mask, kmin, o);
        kmin = v < kmin ? v : kmin;
    }
    __syncwarp();
    w.count = out;  // K <= out <= limit
    if (Big) {
        // Any arrival order: a later element ranks above the kept ones' minimum when its composite
        // does; the vector vote lets through everything at or above that value.
        if (lane == 0) cthr_of(hist) = kmin;
        __syncwarp();
        w.thr = nextafterf(composite_value(kmin), -INFINITY);
    } else {
        w.thr = composite_value(kmin);
    }
    return w;
}

// Intermediate compactions may keep this many keys (the K-th key's bin whole): at most a quarter of
// the room above K, and never so many that `room` slots (what the caller appends next) do not fit.
// cap - room >= K at every call site.
__device__ __forceinline__ int relaxed_limit(int K, int cap, int room) { return max(K, min(K + (cap - K) / 4, cap - room)); }
// K > 32: also at most K / 2 above K, so that the sample's compactions (towards its top 64, in a
// buffer of ~600) keep a threshold near its 64th largest instead of its ~200th (fewer candidates
// parked while the sample is read).
__device__ __forceinline__ int big_limit(int K, int cap, int room) { return max(K, min(K + min((cap - K) / 4, K / 2), cap - room)); }

// Appends this lane's x (index idx) when it beats the threshold; room for 32 is made first.
template <bool Big>
__device__ __forceinline__ void append_one(std::uint64_t* keys, unsigned* hist, int cap, sel_state& w, int K, int lane,
                                           float x, std::uint32_t idx, float lane_max) {
    if (w.count + 32 > cap)
        w = compact<Big>(keys, hist, w, K, Big ? big_limit(K, cap, 32) : relaxed_limit(K, cap, 32), lane, lane_max);
    bool pred = x > w.thr;
    if (Big) {
        const std::uint64_t c = cthr_of(hist);
        pred = beats(x, idx, composite_value(c), composite_index(c));
    }
    const unsigned m = __ballot_sync(full_mask, pred);
    if (pred) keys[w.count + __popc(m & ((1u << lane) - 1u))] = composite(float_key(x), idx);
    w.count += __popc(m);
}

// One-FFMA terms (fused_stream in 16-bit; FUSEBENCH_STREAM_FFMA): a term is exp2(fma(x, log2e, -bl)),
// one FFMA, instead of exp2((x - m) log2e), an FADD and an FMUL: 8 of ~62 instructions a 16-bit vector
// (the H200 runs the 16-bit stream issue-bound). bl = m log2e rounded up to a float. x log2e - bl =
// (x - m) log2e + r exactly, r = m log2e - bl in (-ulp(bl), 0]: the lane's sum carries the factor
// 2^r, which a rescale keeps (it multiplies by exp2(min(bl_old - bl_new, 0))) and the row end takes
// out (each lane's sum times exp2(fma(-M, log2e, bl)), the product exact inside the FFMA). Rounding up
// makes r <= 0, so no term exceeds 1 and no lane's sum overflows, whatever the magnitudes; a lane whose
// maximum is hugely negative (a -1e30- or -FLT_MAX-masked prefix) keeps a finite sum that its rescale
// or the row end multiplies by 0, its true share. What is new is the rounding of t + r, 2^-24 (|t| +
// |r|) in the exponent: negligible while |bl| < 2^24, so rows with 2^20 < |M| < inf have their sum
// taken again by an exact pass over the row (exact_row_sum: the adversarial `huge` rows, +-1e30, are
// read twice). NaN and +inf rows end NaN as before. CPU emulation (probes/ffma_emulation.py, float32
// rounding, 19 kinds of row): S within 2.3e-7 of a double-precision sum.
// Where: fused_stream's 16-bit kernels. fp32 keeps the two-op term (H200: +0.2 / +0.6% with one FFMA),
// and so do fused_stream_resample's sampled pass and retry (its order-robust pass should not read
// `huge` rows twice); its rows without a sample (P = 1, short rows) share fused_stream's kernel.
// H200 (probes/ffma_ab.sh, 2026-11-27, GPU-8552d7c8 and GPU-e216fba8): 16-bit K <= 256 0.1-1.9% faster, K = 1024
// -1.4 / +0.6%, fp32 +0.1-0.6% (NOTES, "One-FFMA terms").
// A form without the exact pass (lanes with |m| >= 2^30 summing exp2(x - m), a branch in the terms)
// cost the 16-bit K <= 32 kernels 48-92 bytes of spills at their 64 registers and was 0.5-10.7%
// slower than the two-op terms on the same H200: not kept (NOTES, 2026-11-27).
// FUSEBENCH_STREAM_FFMA (probe builds): 2 the library's choice above, 0 nowhere, 1 fp32 too.
#ifndef FUSEBENCH_STREAM_FFMA
#define FUSEBENCH_STREAM_FFMA 2
#endif
template <class T>
constexpr bool ffma_terms = FUSEBENCH_STREAM_FFMA == 1 || (FUSEBENCH_STREAM_FFMA == 2 && sizeof(T) == 2);

// A lane's running statistics; F: one-FFMA terms (above). The flag rides on the type, so the functions
// that take a lane's statistics follow the kernel's choice.
template <bool F> struct lane_stats_t {
    float m = -INFINITY;  // running max of the lane's logits (NaN never wins fmaxf)
    float s = 0.0f;       // sum of exp(x - base); NaN once a NaN or (+inf with m = +inf) was added
    float base = 0.0f;    // m, or 0 while m = -inf (every term so far was -inf: exp(-inf - 0) = 0);
                          // F: bl (above; 0 while m = -inf)
    float k = 0.0f;       // the compensation of s (select.cuh, kahan_add): the lane's sum is s - k
    __device__ float sum() const { return s - k; }
};
// (A second running sum for a vector's odd terms, FUSEBENCH_STREAM_TWO_SUMS, was 0.1-5.3% slower on an
// H200 and removed: NOTES, "Rows of one SM end far apart".)

// The vector maximum first, one rescale when it rises, then the terms.
template <bool F> __device__ __forceinline__ void rescale_to(lane_stats_t<F>& st, float vmax) {
    if (vmax > st.m) {
        if constexpr (F) {
            const float bl = __fmul_ru(vmax, log2e);
            const float f = fast_exp2(fminf(st.base - bl, 0.0f));  // m = -inf: base 0 and s 0; the min keeps exp2 finite
            st.s *= f;
            st.k *= f;
            st.m = vmax;
            st.base = bl;
        } else {
            const float f = fast_exp2((st.m - vmax) * log2e);  // m = -inf: exp2(-inf) = 0, and s was 0
            st.s *= f;
            st.k *= f;
            st.m = vmax;
            st.base = vmax;
        }
    }
}
// One term of a lane's sum, exp(x - m), against the lane's base (see lane_stats_t).
template <bool F> __device__ __forceinline__ float term_of(float x, const lane_stats_t<F>& st) {
    if constexpr (F) {
        return fast_exp2(fmaf(x, log2e, -st.base));
    } else {
        return fast_exp2((x - st.base) * log2e);
    }
}

template <class T> __device__ __forceinline__ float elem_at(const vec16<T>& v, int e) { return to_f32(v.v[e]); }

// v = *src when `ok`, else all -inf (past the row's end: no term, no candidate).
template <class T> __device__ __forceinline__ void load_or_neg_inf(vec16<T>& v, const vec16<T>* src, bool ok) {
    if (ok) {
        v = *src;
    } else {
#pragma unroll
        for (int e = 0; e < vec16<T>::n; ++e) v.v[e] = from_f32<T>(-INFINITY);
    }
}

// A vector's maximum. 16-bit types take it on packed pairs (3 HMNMX2, then one pair unpacked):
// fewer instructions, and the eight unpacked floats of a vector are never live at once, which keeps
// the 16-bit loop within 64 registers at U = 3. __hmax2, like fmaxf, returns the other operand for a
// NaN (a NaN shows in the sum instead).
template <class T> __device__ __forceinline__ float vec_max(const vec16<T>& v) {
    float vm = elem_at(v, 0);
#pragma unroll
    for (int e = 1; e < vec16<T>::n; ++e) vm = fmaxf(vm, elem_at(v, e));
    return vm;
}
template <> __device__ __forceinline__ float vec_max<__nv_bfloat16>(const vec16<__nv_bfloat16>& v) {
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(v.v);
    const __nv_bfloat162 m = __hmax2(__hmax2(h[0], h[1]), __hmax2(h[2], h[3]));
    return fmaxf(__low2float(m), __high2float(m));
}
template <> __device__ __forceinline__ float vec_max<__half>(const vec16<__half>& v) {
    const auto* h = reinterpret_cast<const __half2*>(v.v);
    const __half2 m = __hmax2(__hmax2(h[0], h[1]), __hmax2(h[2], h[3]));
    return fmaxf(__low2float(m), __high2float(m));
}

// Appends the vector's elements above the threshold (one ballot per element; the caller made room
// for 32 W composites).
template <class T>
__device__ __forceinline__ void append_elems(const vec16<T>& v, std::uint32_t idx0, int lane, std::uint64_t* keys,
                                             sel_state& w) {
    STREAM_COUNT_SMALL(stl_appends);
#pragma unroll
    for (int e = 0; e < vec16<T>::n; ++e) {
        const float x = elem_at(v, e);
        const bool pred = x > w.thr;
        const unsigned m = __ballot_sync(full_mask, pred);
        if (pred) keys[w.count + __popc(m & ((1u << lane) - 1u))] = composite(float_key(x), idx0 + e);
        w.count += __popc(m);
    }
}

// One round of the drain: each lane's vector v (elements idx0 .. idx0 + W - 1; all -inf for a lane
// without one) has its elements that beat cthr appended. When they would not fit, the buffer is
// compacted first and the round tested again against the raised threshold, so every key in the
// buffer beats cthr (compact's lower bound). CountRoom (count_room, above): the compaction makes room
// for the round's cnt composites rather than for 32 W. The launcher keeps cap >= K + 32 W, so either
// the limit is K (exactly K kept; K + 32 W fit) or at most cap - cnt are kept and the round, tested
// again against the raised threshold, holds at most cnt: one compaction either way.
// Scan (the 16-bit wide kernel): each lane writes its own elements at its place from a warp prefix sum
// of the lanes' counts, instead of one ballot per element (W = 8: in the ballot form every element
// took ~20 instructions with the divergence checks around its ballot and store; ncu, bf16 4096 x
// 50257 K = 1024, H100 GPU-45d70c48: that append was ~10% of the wide kernel's instructions). The
// buffer's order within a round changes, which nothing depends on.
template <class T, bool CountRoom = false, bool Scan = false>
__device__ __forceinline__ void insert_round(const vec16<T>& v, std::uint32_t idx0, std::uint64_t* keys, unsigned* hist,
                                             int cap, sel_state& w, int K, int lane, float lane_max) {
    constexpr int W = vec16<T>::n;
    unsigned bits;
    for (;;) {
        const std::uint64_t c = cthr_of(hist);
        const float cv = composite_value(c);
        const std::uint32_t ci = composite_index(c);
        bits = 0;
#pragma unroll
        for (int e = 0; e < W; ++e) bits |= static_cast<unsigned>(beats(elem_at(v, e), idx0 + e, cv, ci)) << e;
        const int cnt = static_cast<int>(__reduce_add_sync(full_mask, __popc(bits)));
        if (w.count + cnt <= cap) break;
        w = compact<true>(keys, hist, w, K, big_limit(K, cap, CountRoom ? cnt : 32 * W), lane, lane_max);
    }
    if constexpr (Scan) {
        const auto mine = static_cast<unsigned>(__popc(bits));
        unsigned incl = mine;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned t = __shfl_up_sync(full_mask, incl, d);
            if (lane >= d) incl += t;
        }
        const int pos = w.count + static_cast<int>(incl - mine);
#pragma unroll
        for (int e = 0; e < W; ++e) {
            if ((bits >> e) & 1u)
                keys[pos + __popc(bits & ((1u << e) - 1u))] = composite(float_key(elem_at(v, e)), idx0 + e);
        }
        w.count += static_cast<int>(__shfl_sync(full_mask, incl, 31));
    } else {
#pragma unroll
        for (int e = 0; e < W; ++e) {
            const bool pred = (bits >> e) & 1u;
            const unsigned m = __ballot_sync(full_mask, pred);
            if (pred) keys[w.count + __popc(m & ((1u << lane) - 1u))] = composite(float_key(elem_at(v, e)), idx0 + e);
            w.count += __popc(m);
        }
    }
}

// Drains the deferred list into the composite buffer, 32 vectors per round (insert_round), against
// the current threshold (it may have risen since a vector was parked: fewer composites). The test
// is on composites, so it is exact in any arrival order. `whole`: every parked vector; otherwise
// (inside the stream) only full rounds, from the end of the list: the vn % 32 first entries stay
// parked for the next drain (the list holds them and a batch: L = 32 U + 32), so no round runs
// mostly empty. (Draining all: H200 fp32 4096 x 50257 K = 256 248.1 against 247.5 us, bf16 K = 50
// 198.3 against 184.1.) lane_max: this lane's running maximum (compact's upper bound).
template <class T, bool CountRoom = false, bool Scan = false>
__device__ __forceinline__ void drain_list(const vec_list<T>& list, int lane, std::uint64_t* keys, unsigned* hist,
                                           int cap, sel_state& w, int K, float lane_max, bool whole) {
    __syncwarp();  // the pushes' writes before the reads
    const int first = whole ? 0 : w.vn % 32;
    for (int b = first; b < w.vn; b += 32) {
        const bool ok = b + lane < w.vn;
        vec16<T> v;
        load_or_neg_inf(v, list.vec + b + lane, ok);
        const std::uint32_t idx0 = ok ? list.idx[b + lane] : 0u;
        insert_round<T, CountRoom, Scan>(v, idx0, keys, hist, cap, w, K, lane, lane_max);
    }
    __syncwarp();  // every lane has read the list before the next pushes
    w.vn = first;
}

// Lean (the bf16 K <= 32 kernel on devices with fast DRAM, and fused_stream's bf16 rows with K >= 12
// and V <= 65536 elsewhere: see stream_lean below; written for
// 16-bit and fp32 alike). There the 16-bit stream is bound inside the SM, not by DRAM (ncu,
// bf16 4096 x 50257 K = 10: 288k cycles on an H200, 300k on an H100; the H200's 1.4x bandwidth buys
// ~4%), so fewer instructions per element pay:
// - lean_elem: a bf16 element straight from its packed 32-bit word (the low half a shift, the high
//   half a mask): the same float as elem_at (a bf16 is its float's upper 16 bits), one instruction
//   where the compiler's high-half conversion took two (PRMT + IMAD.U32);
// - append_lanes_lean (below): one ballot per vector that holds a candidate instead of W per warp step.
// The float of the bf16 in half `hi` (0: low, 1: high) of a packed 32-bit word.
__device__ __forceinline__ float bf16_half(std::uint32_t u, int hi) { return __uint_as_float(hi ? u & 0xFFFF0000u : u << 16); }
template <class T> __device__ __forceinline__ float lean_elem(const vec16<T>& v, int e) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        return bf16_half(reinterpret_cast<const std::uint32_t*>(v.v)[e >> 1], e & 1);
    } else {
        return elem_at(v, e);
    }
}
template <class T> __device__ __forceinline__ float vec_max_lean(const vec16<T>& v) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const auto* h = reinterpret_cast<const __nv_bfloat162*>(v.v);
        const __nv_bfloat162 m = __hmax2(__hmax2(h[0], h[1]), __hmax2(h[2], h[3]));
        const std::uint32_t u = *reinterpret_cast<const std::uint32_t*>(&m);
        return fmaxf(bf16_half(u, 0), bf16_half(u, 1));
    } else {
        return vec_max(v);
    }
}
// A vector's terms into the lane's statistics (its max first, one rescale when that rises); returns
// the vector's max. Lean: the element reads above (the same values). (A tree sum of a vector's terms, a
// shorter FADD chain, was 0.3-1.9% slower than Lean on an H100 and slower on an H200: NOTES, 2026-11-27.)
template <class T, bool Lean = false, bool F>
__device__ __forceinline__ float consume_stats(const vec16<T>& v, lane_stats_t<F>& st) {
    constexpr int W = vec16<T>::n;
    float vm;
    if constexpr (Lean) {
        vm = vec_max_lean(v);
    } else {
        vm = vec_max(v);
    }
    rescale_to(st, vm);
    // the vector's W terms summed on their own, then one compensated add into the lane's sum
    float vs = 0.0f;
#pragma unroll
    for (int e = 0; e < W; ++e) {
        if constexpr (Lean) {
            vs += term_of(lean_elem(v, e), st);
        } else {
            vs += term_of(elem_at(v, e), st);
        }
    }
    kahan_add(st.s, st.k, vs);
    return vm;
}

// One ballot per vector: the lanes whose vector holds a candidate (pred) park it in the list, in lane
// order after the w.vn already there (the caller made room for a whole batch); its elements are
// sorted out 32 vectors at a time.
template <class T>
__device__ __forceinline__ void park_if(bool pred, const vec16<T>& v, std::uint32_t idx0, int lane, const vec_list<T>& list,
                                        sel_state& w) {
    const unsigned m = __ballot_sync(full_mask, pred);
    if (pred) {
        const int pos = w.vn + __popc(m & ((1u << lane) - 1u));
        list.vec[pos] = v;
        list.idx[pos] = idx0;
    }
    w.vn += __popc(m);
}

// One vector per lane (elements idx0 .. idx0 + W - 1 of the row): its max, one rescale when that
// rises, the terms, and the candidate vote. Deferred (K > 32, where candidates are common): the
// vectors holding a candidate go to the list, so the per-element work runs on 32 candidate vectors
// at a time instead of on all 32 lanes whenever one lane has a candidate (that per-element path was
// 43% of the instructions at K = 256). Otherwise (K <= 32, candidates rare after the seeded
// threshold) the elements are appended at once. Room was made by the caller. Masked-off elements
// are -inf and contribute nothing.
template <class T, bool Deferred, bool F>
__device__ __forceinline__ void consume_vec(const vec16<T>& v, std::uint32_t idx0, int lane, lane_stats_t<F>& st,
                                            std::uint64_t* keys, const vec_list<T>& list, sel_state& w) {
    const float vm = consume_stats(v, st);
    if (Deferred) {
        park_if(vm > w.thr, v, idx0, lane, list, w);
    } else if (__any_sync(full_mask, vm > w.thr)) {
        append_elems(v, idx0, lane, keys, w);
    }
}

// The candidate element of word k of a vector: lane e < W of the warp takes element e of the four
// 32-bit words w0..w3 that it was sent (warp-uniform words: no per-lane register indexing).
template <class T>
__device__ __forceinline__ float lane_elem_of_words(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2, std::uint32_t w3,
                                                    int e) {
    constexpr int per_word = 4 / sizeof(T);
    const int k = e / per_word;
    const std::uint32_t u = (k & 2) ? ((k & 1) ? w3 : w2) : ((k & 1) ? w1 : w0);
    if constexpr (std::is_same_v<T, float>) {
        return __uint_as_float(u);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        return bf16_half(u, e & 1);
    } else {
        return __half2float(__ushort_as_half(static_cast<unsigned short>((e & 1) ? u >> 16 : u & 0xFFFFu)));
    }
}
// The appends of one warp step, lane by lane (m: the lanes whose vector holds a candidate, ~1.5 on
// random rows): each such vector is sent to the warp (4 shuffles and its index), lane e < W tests
// element e, one ballot places the vector's candidates. append_elems runs W ballots with their
// divergence checks over all lanes whatever the candidates (~100 instructions a step in 16-bit); this
// is ~30 a candidate vector. The buffer holds the same keys in another order (vector by vector
// instead of element by element), which nothing depends on: compactions keep by value, the row end
// sorts.
template <class T>
__device__ __forceinline__ void append_lanes_lean(const vec16<T>& v, std::uint32_t idx0, int lane, std::uint64_t* keys,
                                                  sel_state& w, unsigned m) {
    STREAM_COUNT_SMALL(stl_appends);
    constexpr int W = vec16<T>::n;
    const auto* words = reinterpret_cast<const std::uint32_t*>(v.v);
    const int e = lane & (W - 1);
    do {  // warp-uniform
        const int src = __ffs(m) - 1;
        m &= m - 1u;
        const std::uint32_t w0 = __shfl_sync(full_mask, words[0], src), w1 = __shfl_sync(full_mask, words[1], src),
                            w2 = __shfl_sync(full_mask, words[2], src), w3 = __shfl_sync(full_mask, words[3], src);
        const std::uint32_t i0 = __shfl_sync(full_mask, idx0, src);
        const float x = lane_elem_of_words<T>(w0, w1, w2, w3, e);
        const bool pred = lane < W && x > w.thr;
        const unsigned b = __ballot_sync(full_mask, pred);
        if (pred) keys[w.count + __popc(b & ((1u << lane) - 1u))] = composite(float_key(x), i0 + static_cast<std::uint32_t>(e));
        w.count += __popc(b);
    } while (m != 0u);
}
// consume_vec<T, false> with the lean pieces above. Steps where more than lean_lanes_max lanes hold a
// candidate (dense rows: ascending, a row's first batches) keep append_elems, whose W ballots cost
// less than that many vectors sent one by one.
#ifndef FUSEBENCH_LEAN_LANES_MAX
#define FUSEBENCH_LEAN_LANES_MAX 4
#endif
template <class T, bool F>
__device__ __forceinline__ void consume_vec_lean(const vec16<T>& v, std::uint32_t idx0, int lane, lane_stats_t<F>& st,
                                                 std::uint64_t* keys, sel_state& w) {
    const float vm = consume_stats<T, true>(v, st);
    const unsigned m = __ballot_sync(full_mask, vm > w.thr);
    if (m != 0u) {
        if (__popc(m) <= FUSEBENCH_LEAN_LANES_MAX) {
            append_lanes_lean(v, idx0, lane, keys, w, m);
        } else {
            append_elems(v, idx0, lane, keys, w);
        }
    }
}

// consume_vec<T, true> with a vote aware of indices, for the retry kernel only (big_pass' Retry): a
// vector whose max equals the threshold's value (cthr's) is parked only when its first element's
// index is below cthr's, since only an element of that value at a lower index beats cthr (the drain
// tests every element against cthr, so nothing it would keep is lost). Without it a row whose top
// values tie (all_equal) parks every vector that reaches the threshold's value, each then rejected
// element by element in a drain. In the main kernels' stream loop the same vote cost random logits
// 1-3.8% (NOTES.md, "topkadv"), so they keep the plain vote and hand such rows to the retry kernel.
template <class T, bool F>
__device__ __forceinline__ void park_vec(const vec16<T>& v, std::uint32_t idx0, int lane, lane_stats_t<F>& st,
                                         const unsigned* hist, const vec_list<T>& list, sel_state& w) {
    const float vm = consume_stats(v, st);
    bool pred = vm > w.thr;
    const std::uint64_t c = *reinterpret_cast<const std::uint64_t*>(hist + hist_words);
    const float cv = composite_value(c);
    if (pred && !(vm > cv)) pred = idx0 < composite_index(c);  // vm == cv
    park_if(pred, v, idx0, lane, list, w);
}

template <class T, bool IndexAware, bool F>
__device__ __forceinline__ void vote_vec(const vec16<T>& v, std::uint32_t idx0, int lane, lane_stats_t<F>& st,
                                         std::uint64_t* keys, const unsigned* hist, const vec_list<T>& list,
                                         sel_state& w) {
    if constexpr (IndexAware) park_vec<T>(v, idx0, lane, st, hist, list, w);
    else consume_vec<T, true>(v, idx0, lane, st, keys, list, w);
}

// A threshold from a sample spread over the rest of a row (K <= 32): lane l reads vector
// ((l + 1) n / 32) - 1 of the n vectors at `from` (lane 31 the row's last one), and the K-th largest
// of those 32 W elements, v (found bit by bit: 32 warp counts, nothing in shared memory), bounds the
// row's K-th largest from below (K elements of the row are >= v), so x > nextafter(v, -inf) loses
// no member of the top K. The sampled elements are read again in order by the stream and nothing
// is kept from the sample, so no element is kept twice. NaN counts as -inf here (a NaN row is
// written without a softmax anyway). fused_stream_resample only (consume_batch_refill's Resample):
// taken after a compaction of more than half a batch of candidates, since the running threshold
// only knows what was read, and on ascending rows every later element beat it (5.4x / 12.5x the
// random-logit time in fp32 / bf16 at K = 10 on an H100; with the resample 1.10x / 1.28x). No
// once-a-row flag: another such batch after a sample costs another sample, small against the
// batch's appends (a flag, one register more in the loop, cost random bf16 rows 3%). Its price
// even where it never runs: random bf16 rows 2-3.5% slower (the loop is at its 64 registers), which
// is why fused_stream leaves it out. Measured alternatives (H100, NOTES.md): the sample at every
// row's start, with a shared-memory radix select (random bf16 rows +7.6%: every row waits for its
// sample at once); at every row's second compaction (+7%).
template <class T>
__device__ __forceinline__ float threshold_from_spread_sample(const vec16<T>* from, std::uint32_t n, int K, int lane) {
    constexpr int W = vec16<T>::n;
    const auto q = static_cast<std::uint32_t>((static_cast<std::uint64_t>(lane + 1) * n) / 32u - 1u);
    const vec16<T> s = from[q];
    std::uint32_t key[W];
#pragma unroll
    for (int e = 0; e < W; ++e) {
        const float x = elem_at(s, e);
        key[e] = float_key(x == x ? x : -INFINITY);
    }
    // The K-th largest key, bit by bit from the top: the largest t with at least K keys >= t.
    std::uint32_t t = 0;
#pragma unroll 1
    for (int b = 31; b >= 0; --b) {
        const std::uint32_t c = t | (1u << b);
        unsigned cnt = 0;
#pragma unroll
        for (int e = 0; e < W; ++e) cnt += key[e] >= c;
        if (__reduce_add_sync(full_mask, cnt) >= static_cast<unsigned>(K)) t = c;
    }
    return nextafterf(composite_value(static_cast<std::uint64_t>(t) << 32), -INFINITY);
}

// How many batches ahead the K <= 32 stream asks L2 for a lane's vectors (0: no prefetch) is the
// kernel's PF, chosen per device at launch (stream_fast_memory below); FUSEBENCH_STREAM_L2PF
// fixes it in probe builds (probes/l2pf_ab.sh builds it both ways).

// One batch of U vectors per lane (K <= 32; room for all its elements is made first): each vector
// is consumed and its registers refilled with the matching vector of the next batch right away, so
// U - 1 to U vectors per lane stay in flight while the warp computes (v4 and the first v5 issued U
// loads and then waited on all of them). `p` points at this lane's vector j of the batch (j = the
// batch's first vector + lane), `idx` is its first element's index.
template <class T, int U, bool MaskedRefill, bool Resample, std::uint32_t PF, bool Lean, bool F>
__device__ __forceinline__ void consume_batch_refill(vec16<T> (&v)[U], const vec16<T>* __restrict__ p, std::uint32_t j,
                                                     std::uint32_t nvec, std::uint32_t idx, int lane, lane_stats_t<F>& st,
                                                     std::uint64_t* keys, unsigned* hist, int cap, sel_state& w,
                                                     int K) {
    constexpr int W = vec16<T>::n;
    constexpr int per_batch = 32 * U;
    if (w.count + per_batch * W > cap) {
        // Resample: more than half a batch of candidates since the last compaction (which kept at
        // most cap - per_batch W) means the running threshold knows too little of the row.
        const bool dense = Resample && w.count > cap / 2;
        w = compact<false>(keys, hist, w, K, relaxed_limit(K, cap, per_batch * W), lane, st.m);
        if constexpr (Resample) {
            // The rest of the row after this batch: vectors [j - lane + per_batch, nvec).
            const std::uint32_t rest = j - static_cast<std::uint32_t>(lane) + per_batch;
            if (dense && rest + 32u <= nvec) {
                const float t = threshold_from_spread_sample(p - lane + per_batch, nvec - rest, K, lane);
                if (t > w.thr) w.thr = t;
            }
        }
    }
    // Ask L2 for this lane's vectors of the batch PF ahead, so the refills below find them in L2: on
    // two H100s 1.4-4.3% faster on every K = 10 case (2 and 4 batches ahead slower); on an H200 up to
    // 8.6% slower (kernels/softmax_topk/NOTES.md, "An L2 prefetch one batch ahead" and "The K <= 32
    // L2 prefetch on an H200").
    if constexpr (PF > 0) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const std::uint32_t ja = j + PF * per_batch + u * 32;
            if (ja < nvec) asm volatile("prefetch.global.L2 [%0];" ::"l"(p + PF * per_batch + u * 32));
        }
    }
    const vec_list<T> no_list{nullptr, nullptr};
#pragma unroll
    for (int u = 0; u < U; ++u) {
        if constexpr (Lean) {
            consume_vec_lean<T>(v[u], idx + u * 32 * W, lane, st, keys, w);
        } else {
            consume_vec<T, false>(v[u], idx + u * 32 * W, lane, st, keys, no_list, w);
        }
        load_or_neg_inf(v[u], p + per_batch + u * 32, !MaskedRefill || j + per_batch + u * 32 < nvec);
    }
}

// The K-th largest of the 32 lane maxima of the first batch (K <= 32): K elements of the batch are
// at or above it, so x >= it (x > the float just below it) loses no member of the top K.
template <class T, int U>
__device__ __forceinline__ void seed_threshold(const vec16<T> (&v)[U], int K, int lane, sel_state& w) {
    float bm = -INFINITY;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int e = 0; e < vec16<T>::n; ++e) bm = fmaxf(bm, elem_at(v[u], e));
    const std::uint64_t sorted =
        topk_detail::warp_bitonic_sort_desc(composite(float_key(bm), static_cast<std::uint32_t>(lane)));
    const float vk = composite_value(__shfl_sync(full_mask, sorted, K - 1));
    if (vk > -INFINITY && nextafterf(vk, -INFINITY) > w.thr) w.thr = nextafterf(vk, -INFINITY);
}

// Where a row's 16-byte vectors are: a scalar head up to the first `Align`-byte boundary, nvec
// vectors, then a scalar tail from element `tail`. A row that is not element aligned goes the
// scalar way. The K > 32 kernel aligns to 128 bytes: it reads a row's 512-byte steps out of order,
// and a step that shared a 128-byte line with a neighbour read much later fetched that line twice
// (ncu, H100, fp32 4096 x 50257 K = 256: 934 MB from DRAM against 826 MB with 16-byte alignment).
struct row_split {
    std::int64_t head, nvec, tail;
};
template <class T, int Align = 16> __device__ __forceinline__ row_split split_row(const T* row, std::int64_t V) {
    constexpr int W = vec16<T>::n;
    const auto addr = reinterpret_cast<std::uintptr_t>(row);
    std::int64_t head = ((Align - static_cast<std::int64_t>(addr % Align)) % Align) / static_cast<std::int64_t>(sizeof(T));
    if (addr % sizeof(T) != 0) head = V;
    if (head > V) head = V;
    const std::int64_t nvec = (V - head) / W;
    return {head, nvec, head + nvec * W};
}

// Elements [begin, end) one per lane per step (the scalar head and tail).
template <bool Big, class T, bool F>
__device__ __forceinline__ void scalar_range(const T* row, std::int64_t begin, std::int64_t end, int lane,
                                             lane_stats_t<F>& st, std::uint64_t* keys, unsigned* hist, int cap,
                                             sel_state& w, int K) {
    for (std::int64_t b = begin; b < end; b += 32) {
        const bool ok = b + lane < end;
        const float x = ok ? to_f32(row[b + lane]) : -INFINITY;
        rescale_to(st, x);
        kahan_add(st.s, st.k, term_of(x, st));
        if (__any_sync(full_mask, x > w.thr))
            append_one<Big>(keys, hist, cap, w, K, lane, x, static_cast<std::uint32_t>(b + lane), st.m);
    }
}

// The row's sum of exp(x - M), element by element (one-FFMA rows with 2^20 < |M| < inf, above).
template <class T> __device__ __noinline__ float exact_row_sum(const T* row, std::int64_t V, float M) {
    const int lane = static_cast<int>(threadIdx.x & 31u);
    float s = 0.0f, k = 0.0f;
    for (std::int64_t j = lane; j < V; j += 32) kahan_add(s, k, fast_exp2((to_f32(row[j]) - M) * log2e));
    s -= k;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(full_mask, s, o);
    return s;
}
// The warp's max M of its lanes' statistics and their sum S = sum exp(x - M) (no exactness pass).
template <bool F> __device__ __forceinline__ void warp_stats(const lane_stats_t<F>& st, float& M, float& S) {
    M = st.m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(full_mask, M, o));
    if constexpr (F) {
        S = st.s == 0.0f ? 0.0f : st.sum() * fast_exp2(fmaf(-M, log2e, st.base));  // s == 0 covers m = -inf
    } else {
        S = st.s == 0.0f ? 0.0f : st.sum() * fast_exp2((st.m - M) * log2e);  // s == 0 covers m = -inf
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) S += __shfl_xor_sync(full_mask, S, o);
}
// The row's max M and sum S = sum exp(x - M) across the warp; false when the row has no finite
// softmax (a NaN anywhere, or +inf (inf - inf), made S NaN; an all -inf row has M = -inf).
template <class T, bool F>
__device__ __forceinline__ bool row_stats(const lane_stats_t<F>& st, float& M, float& S, const T* row, std::int64_t V) {
    warp_stats(st, M, S);
    if constexpr (F) {
        if (fabsf(M) > 0x1p20f && fabsf(M) != INFINITY) S = exact_row_sum(row, V, M);
    } else {
        (void)row;
        (void)V;
    }
    return !(S != S || M == INFINITY || M == -INFINITY);
}

// The end of a K <= 32 row: the exact top K of the buffer, sorted across the warp (one key per
// lane), written with the probabilities. (K > 32 rows end in finish_big_row.) The shared-memory
// branch is never taken in this kernel; without it ptxas allocated the fp32 kernel differently and
// spilled it (28 bytes stored, 60 loaded per thread, against none), so it stays until that can be
// measured.
template <class T>
__device__ __forceinline__ void finish_small_row(std::uint64_t* keys, unsigned* hist, sel_state w, const T* row,
                                                 std::int64_t V, int K, float M, float S, float* p_out,
                                                 std::int32_t* i_out, int lane) {
    __syncwarp();  // the last appends' writes before the reads below
    if (w.count > K) w = compact<false>(keys, hist, w, K, K, lane, M);
    const int n = w.count;
    if (K <= 32) {
        std::uint64_t c = lane < n ? keys[lane] : 0ull;  // 0 sorts below every real composite
        c = topk_detail::warp_bitonic_sort_desc(c);
        __syncwarp();
        if (lane < n) keys[lane] = c;
    } else {
        topk_detail::warp_sort_desc_smem_padded(keys, n, lane);
    }
    __syncwarp();
    topk_detail::warp_write_topk(keys, n, row, V, K, M, S, p_out, i_out, lane);
}

// The composite range [lo, hi] of a warp's n keys, for value-range bins (finish_by_bins,
// finish_wide): where compact has set a threshold, cthr and the row maximum's composite (every key
// beats cthr, none is above the maximum: no pass over the keys); else the keys' own minimum and
// maximum over the warp.
__device__ __forceinline__ void key_range(const std::uint64_t* keys, int n, unsigned* hist, float M, int lane,
                                          std::uint64_t& lo, std::uint64_t& hi) {
    lo = ~0ull;
    hi = 0ull;
    const std::uint64_t cthr = cthr_of(hist);
    if (cthr != cthr_start) {
        lo = cthr;
        hi = composite(float_key(M), 0u);
    } else {
        for (int t = lane; t < n; t += 32) {
            const std::uint64_t c = keys[t];
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const std::uint64_t a = __shfl_xor_sync(full_mask, lo, o), b = __shfl_xor_sync(full_mask, hi, o);
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
    }
}

// The sorted top min(K, n) of keys[0, n) (distinct composites) into keys[0, ..) without a select
// and a sort: 256 bins spread evenly over the range of the keys' values (in 32-bit value keys, from
// cthr, which every key beats, to the row maximum M; from the keys' min to max when no compaction
// has set cthr yet), so the bins follow the data instead of bit boundaries (a bit-aligned digit
// left most bins empty and crowded the rest, and fell back on 1,778 of 4,096 rows at V = 151936);
// one counting pass and a scan give each bin its place in the output; the bins above the one
// holding the K-th key are scattered into `out` grouped by bin, and each key is ranked among its
// bin's keys and written to its final slot; the K-th key's bin (at most 32 keys) is sorted across
// the warp. About half the instructions of the exact select plus register sort it replaces (H200
// lab, fp32 4096 x 50257 K = 256: 271.9 -> 265.4 us; V = 151936: 660.0 -> 654.7). Returns false,
// with nothing moved and the bins clear, when a bin above the K-th's holds more than 64 keys, the
// K-th's more than 32 (ties: bins are value ranges), or `out` is too small; the caller then
// selects and sorts. Bins: the warp's 16-bit histogram words, rewritten after the scan as (count,
// cursor) byte pairs (counts <= 64 and cursors < 256 then).
__device__ __forceinline__ bool finish_by_bins(std::uint64_t* keys, int n, int K, unsigned* hist, std::uint64_t* out,
                                               int out_cap, int lane, float M) {
    constexpr unsigned bin_max = 64;  // keys ranked pairwise within a bin: O(size^2) per bin
    const int need = min(K, n);
    std::uint64_t lo, hi;
    key_range(keys, n, hist, M, lane, lo, hi);
    const auto lo32 = static_cast<std::uint32_t>(lo >> 32);
    const std::uint64_t mul = (256ull << 32) / ((hi >> 32) - lo32 + 1ull);  // bin = (key - lo) 256 / span
    const auto bin_of = [&](std::uint64_t c) {
        return static_cast<unsigned>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(c >> 32) - lo32) * mul) >> 32);
    };
    for (int t = lane; t < n; t += 32) {
        const unsigned b = bin_of(keys[t]);
        atomicAdd(&hist[b >> 1], 1u << ((b & 1u) * 16u));
    }
    __syncwarp();
    // Lane l owns bins 255 - 8l .. 248 - 8l (words 127 - 4l .. 124 - 4l), the largest first.
    unsigned cnt[8], tot;
    const unsigned incl = topk_detail::read_lane_bins<true, false>(hist, lane, cnt, tot);
    unsigned above = incl - tot;  // keys in the bins above this lane's
    const auto uneed = static_cast<unsigned>(need);
    const bool mine = above < uneed && incl >= uneed;  // this lane's bins hold the need-th key
    unsigned kbin = 0, k_above = 0, k_in = 0, crowd = 0, packed[4];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        if (above < uneed && above + cnt[i] >= uneed) {
            kbin = 255u - 8u * static_cast<unsigned>(lane) - i;
            k_above = above;
            k_in = cnt[i];
        } else if (above + cnt[i] < uneed) {
            crowd = max(crowd, cnt[i]);
        }
        const unsigned half = (min(cnt[i], 255u) << 8) | (above & 255u);  // (count, cursor = first slot)
        if (i % 2 == 0) packed[i / 2] = half << 16; else packed[i / 2] |= half;
        above += cnt[i];
    }
    const int src = __ffs(__ballot_sync(full_mask, mine)) - 1;
    kbin = __shfl_sync(full_mask, kbin, src);
    k_above = __shfl_sync(full_mask, k_above, src);
    k_in = __shfl_sync(full_mask, k_in, src);
    crowd = __reduce_max_sync(full_mask, crowd);
    __syncwarp();  // every lane has read its bins
    if (crowd > bin_max || k_in > 32 || static_cast<int>(k_above) > out_cap) {
        for (int b = lane; b < hist_words; b += 32) hist[b] = 0;
        __syncwarp();
        return false;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) hist[127 - 4 * lane - q] = packed[q];
    __syncwarp();
    // Scatter the bins above the K-th's into `out`; stage the K-th's keys at keys[0, k_in) (a
    // position is written only after every lane has read the round that covers it).
    int staged = 0;
    for (int t0 = 0; t0 < n; t0 += 32) {
        const int t = t0 + lane;
        const std::uint64_t c = t < n ? keys[t] : 0ull;
        const unsigned b = t < n ? bin_of(c) : 0u;
        if (t < n && b > kbin) {
            const unsigned sh = (b & 1u) * 16u;
            const unsigned old = atomicAdd(&hist[b >> 1], 1u << sh);
            out[(old >> sh) & 255u] = c;
        }
        const bool in_k = t < n && b == kbin;
        const unsigned m = __ballot_sync(full_mask, in_k);
        __syncwarp();
        if (in_k) keys[staged + __popc(m & ((1u << lane) - 1u))] = c;
        staged += __popc(m);
    }
    __syncwarp();
    std::uint64_t kv = lane < static_cast<int>(k_in) ? keys[lane] : 0ull;
    kv = topk_detail::warp_bitonic_sort_desc(kv);
    __syncwarp();  // the staged keys are read before the ranked writes below
    for (int t = lane; t < static_cast<int>(k_above); t += 32) {
        const std::uint64_t c = out[t];
        const unsigned b = bin_of(c);
        const unsigned half = (hist[b >> 1] >> ((b & 1u) * 16u)) & 0xFFFFu;
        const int end = static_cast<int>(half & 255u);  // the cursor ends past the bin's last slot
        const int start = end - static_cast<int>(half >> 8);
        int rank = 0;
        // One key a step: four a step (as finish_wide<true>) measured no faster here (bf16 K = 33 .. 256,
        // H100 GPU-efc27386, NOTES.md "The two sets of cuts timed by the lead").
        for (int j = start; j < end; ++j) rank += out[j] > c;
        keys[start + rank] = c;
    }
    if (lane < need - static_cast<int>(k_above)) keys[k_above + lane] = kv;
    __syncwarp();
    for (int b = lane; b < hist_words; b += 32) hist[b] = 0;
    __syncwarp();
    return true;
}

// The end of a K > 256 row (n >= K keys) by value-range bins, without the exact select and the
// shared-memory bitonic sort of K keys (at K = 1024: 55 stages over 1,024 64-bit keys, each a load,
// compare, store and __syncwarp, run by every row of a launch at once). nbins bins (16-bit counts,
// then 16-bit cursors) over the keys' value range, in the empty list's room; one counting pass and
// a scan give each bin its first output slot. The keys of the bins above the one holding the K-th
// key (k_above < K of them) are copied to the row's own output (p_out / i_out as the upper / lower
// 32 bits of each composite, coalesced), then scattered back into `keys` grouped by bin, each
// ranked within its bin there and written as (probability, index) to its final slot of the output;
// the K-th key's bin (at most 64 keys) is staged in the warp's histogram words and ranked there.
// Returns false, with the keys unchanged and the histogram words clear, when a bin above the K-th
// key's holds more than 64 keys or that bin more than 64 (ties: bins are value ranges); the caller
// then selects and sorts. Out of line: it runs once a row and keeps its registers to itself.
// Fast (softmax_topk_stream_wide_kernel only, so that the big kernels, which serve K <= 256 too, keep
// their machine code): a 32-bit bin multiply and rank loops that read four keys a step. ncu (fp32
// K = 1024, before): this function held 18% of the wide kernel's stall samples and 20% of its
// instructions, its one-key-a-step rank loop 6% of each. Suite, H100 GPU-21d38e6b, same seed, main
// -> this change (16-bit rows change only here), us: fp16 K = 1024 378.4 -> 371.7 / 372.2, K = 512
// 290.3 -> 288.0; bf16 K = 1024 398.8 -> 399.5 / 400.5, K = 512 299.1 -> 298.8 (fp32 changed with
// the runs, so its share there is not separated).
// H100 (GPU-cef945ca, probes/stream_plain.cu, 4096 x 50257, std 10, us, against the select and the
// sort): fp32 K = 1024 857.5 -> 699.5, bf16 980.0 -> 823.1, fp16 882.0 -> 716.8, fp32 K = 512 621.8 ->
// 532.5, bf16 581.5 -> 487.3; a row's end (timeline, p50) fp32 K = 1024 116 -> 32 us.
// HS > 0 (the 16-bit wide kernels: key_low_bits): the bins are spread over a 32-bit projection of
// the composite instead of its value key: the value key without its HS low bits, which are the same
// for every key of a 16-bit row (bf16: 16, fp16: 13; -0 is folded onto +0), then HS bits of ~index
// from bit idx_shift (the row's index width less HS, at least 0, so that ~index is all ones above
// them). The projection keeps the order of the composites (its ties are ranked by the full composite
// as before), so the keys of one value spread over several bins by index. bf16 rows hold few distinct
// values near the K-th (std 10: ~30 keys a value), so each value bin held ~30 keys and the rank loop
// compared every key with its whole bin: ncu, bf16 4096 x 50257 K = 1024 (H100 GPU-45d70c48, helper
// w16): that loop's line alone was 12.7% of the wide kernel's instructions and 8.7% of its stall
// samples. CPU emulation of these bins on std-10 rows (NOTES.md, helper w16): the rank loop's warp steps
// a row bf16 K = 1024 175 -> 68, K = 512 56 -> 25, fp16 K = 1024 68 -> 62; output equal to a sort. With
// insert_round's Scan, H100 GPU-efc27386 (probes/stream_ab.cu, 4096 x 50257 std 10): bf16 K = 1024
// 405.8 / 408.7 -> 386.0 / 389.2 us, K = 512 305.0 / 303.7 -> 295.5 / 295.2, fp16 K = 1024 -1.2%,
// K = 512 -0.5%. idx_shift rides in nbins' low 6 bits (nbins is a multiple of 64): an extra
// parameter changed the machine code of the 25 big and retry kernels that call finish_wide<false>
// (nvcc 13.0 -cubin sm_90, per-section md5); this way only the two 16-bit wide kernels change.
template <bool Fast, int HS = 0>
__device__ __noinline__ bool finish_wide(std::uint32_t keys_s, int n, int K, std::uint32_t hist_s, std::uint32_t bins_s,
                                         int nbins, float* p_out, std::int32_t* i_out, float M, float S) {
    constexpr unsigned bin_max = 64;           // keys ranked pairwise within a bin: O(size^2) per bin
    constexpr int stage_max = hist_words / 2;  // the K-th key's bin, staged in the histogram words
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const unsigned lt = (1u << lane) - 1u;
    auto* keys = static_cast<std::uint64_t*>(__cvta_shared_to_generic(keys_s));
    auto* hist = static_cast<unsigned*>(__cvta_shared_to_generic(hist_s));
    auto* bins = static_cast<unsigned*>(__cvta_shared_to_generic(bins_s));  // bin b: word b / 2, high half when odd
    auto* stage = reinterpret_cast<std::uint64_t*>(hist);
    auto* s_hi = reinterpret_cast<unsigned*>(p_out);
    auto* s_lo = reinterpret_cast<unsigned*>(i_out);
    // HS > 0: nbins (a multiple of 64) carries the index shift in its low 6 bits.
    const int idx_shift = HS > 0 ? nbins & 63 : 0;
    if constexpr (HS > 0) nbins &= ~63;
    const auto proj = [&](std::uint64_t c) -> std::uint32_t {
        constexpr std::uint32_t low = HS > 0 ? (1u << HS) - 1u : 0u;
        return (static_cast<std::uint32_t>(c >> 32) & ~low) | ((static_cast<std::uint32_t>(c) >> idx_shift) & low);
    };
    std::uint64_t lo, hi;
    key_range(keys, n, hist, M, lane, lo, hi);
    const auto lo32 = HS == 0 ? static_cast<std::uint32_t>(lo >> 32) : proj(lo);
    const std::uint64_t mul = (static_cast<std::uint64_t>(nbins) << 32) /
                              (HS == 0 ? (hi >> 32) - lo32 + 1ull : static_cast<std::uint64_t>(proj(hi)) - lo32 + 1ull);
    // Fast: bin = (key - lo) nbins / span by one 32-bit high multiply instead of a 64-bit one; a span
    // of at most nbins key steps clamps the multiplier to 2^32 - 1 (bin <= key - lo < nbins): any map
    // that keeps the order of the values and stays below nbins will do.
    const auto mul32 = static_cast<std::uint32_t>(mul < 0xFFFFFFFFull ? mul : 0xFFFFFFFFull);
    const auto bin_of = [&](std::uint64_t c) -> unsigned {
        if constexpr (Fast) return __umulhi((HS == 0 ? static_cast<std::uint32_t>(c >> 32) : proj(c)) - lo32, mul32);
        return static_cast<unsigned>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(c >> 32) - lo32) * mul) >> 32);
    };
    const int words = nbins / 2;
    for (int w = lane; w < words; w += 32) bins[w] = 0;
    __syncwarp();
    for (int t = lane; t < n; t += 32) {
        const unsigned b = bin_of(keys[t]);
        atomicAdd(&bins[b >> 1], 1u << ((b & 1u) * 16u));
    }
    __syncwarp();
    // Lane l owns words top .. top - wpl + 1 (the largest bins first); each count is replaced by its
    // bin's first slot (the number of keys in larger bins).
    const int wpl = words / 32;
    const int top = words - 1 - lane * wpl;
    unsigned tot = 0;
    for (int q = 0; q < wpl; ++q) {
        const unsigned x = bins[top - q];
        tot += (x >> 16) + (x & 0xFFFFu);
    }
    unsigned incl = tot;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned v = __shfl_up_sync(full_mask, incl, d);
        if (lane >= d) incl += v;
    }
    unsigned above = incl - tot;
    const auto uK = static_cast<unsigned>(K);
    unsigned kbin = 0, k_above = 0, k_in = 0, crowd = 0;
    bool mine = false;
    for (int q = 0; q < wpl; ++q) {
        const unsigned x = bins[top - q];
        unsigned cur = 0;
#pragma unroll
        for (int h = 1; h >= 0; --h) {
            const unsigned c = h ? x >> 16 : x & 0xFFFFu;
            if (above < uK && above + c >= uK) {
                kbin = 2u * static_cast<unsigned>(top - q) + static_cast<unsigned>(h);
                k_above = above;
                k_in = c;
                mine = true;
            } else if (above + c < uK) {
                crowd = max(crowd, c);
            }
            cur |= (above & 0xFFFFu) << (16 * h);
            above += c;
        }
        bins[top - q] = cur;
    }
    const int src = __ffs(__ballot_sync(full_mask, mine)) - 1;
    kbin = __shfl_sync(full_mask, kbin, src);
    k_above = __shfl_sync(full_mask, k_above, src);
    k_in = __shfl_sync(full_mask, k_in, src);
    crowd = __reduce_max_sync(full_mask, crowd);
    if (crowd > bin_max || k_in > static_cast<unsigned>(stage_max)) return false;
    // The keys above the K-th's bin to the output (in buffer order), the K-th's bin to the stage.
    int copied = 0, staged = 0;
    for (int t0 = 0; t0 < n; t0 += 32) {
        const int t = t0 + lane;
        const std::uint64_t c = t < n ? keys[t] : 0ull;
        const unsigned b = t < n ? bin_of(c) : 0u;
        const bool up = t < n && b > kbin, in_k = t < n && b == kbin;
        const unsigned mu = __ballot_sync(full_mask, up), mk = __ballot_sync(full_mask, in_k);
        if (up) {
            const int pos = copied + __popc(mu & lt);
            s_hi[pos] = static_cast<unsigned>(c >> 32);
            s_lo[pos] = static_cast<unsigned>(c);
        }
        if (in_k) stage[staged + __popc(mk & lt)] = c;
        copied += __popc(mu);
        staged += __popc(mk);
    }
    __syncwarp();  // the copies (global) and every read of `keys` before the scatter below
    const int na = static_cast<int>(k_above);
    for (int s = lane; s < na; s += 32) {
        const std::uint64_t c = (static_cast<std::uint64_t>(s_hi[s]) << 32) | s_lo[s];
        const unsigned b = bin_of(c), sh = (b & 1u) * 16u;
        keys[(atomicAdd(&bins[b >> 1], 1u << sh) >> sh) & 0xFFFFu] = c;
    }
    __syncwarp();  // the scatter, and every read of the copies, before the output is written
    const auto cursor = [&](unsigned b) { return static_cast<int>((bins[b >> 1] >> ((b & 1u) * 16u)) & 0xFFFFu); };
    const float inv_S = 1.0f / S;
    // Bin b holds keys[cursor(b + 1), cursor(b)) now: the bins are laid out from the largest, and
    // bin b + 1's cursor ended where b's first slot is.
    for (int s = lane; s < na; s += 32) {
        const std::uint64_t c = keys[s];
        const unsigned b = bin_of(c);
        const int end = cursor(b);
        const int start = b + 1 < static_cast<unsigned>(nbins) ? cursor(b + 1) : 0;
        // Fast: four keys a step with independent loads (one at a time, each step waited on its load
        // and compare: ncu, fp32 K = 1024, 6% of the kernel's stall samples on that loop). A slot past
        // the bin reads as 0, which beats no key.
        int rank = start;
        if constexpr (Fast) {
            for (int j = start; j < end; j += 4) {
#pragma unroll
                for (int u = 0; u < 4; ++u) rank += (j + u < end ? keys[j + u] : 0ull) > c;
            }
        } else {
            for (int j = start; j < end; ++j) rank += keys[j] > c;
        }
        p_out[rank] = expf(composite_value(c) - M) * inv_S;
        i_out[rank] = static_cast<std::int32_t>(composite_index(c));
    }
    const int kin = static_cast<int>(k_in);
    for (int s = lane; s < kin; s += 32) {
        const std::uint64_t c = stage[s];
        int rank = na;
        if constexpr (Fast) {
            for (int j = 0; j < kin; j += 4) {
#pragma unroll
                for (int u = 0; u < 4; ++u) rank += (j + u < kin ? stage[j + u] : 0ull) > c;
            }
        } else {
            for (int j = 0; j < kin; ++j) rank += stage[j] > c;
        }
        if (rank < K) {
            p_out[rank] = expf(composite_value(c) - M) * inv_S;
            i_out[rank] = static_cast<std::int32_t>(composite_index(c));
        }
    }
    __syncwarp();  // every stage read done
    for (int w = lane; w < hist_words; w += 32) hist[w] = 0;
    __syncwarp();
    return true;
}
template <class T> constexpr int key_low_bits = std::is_same_v<T, __nv_bfloat16> ? 16 : std::is_same_v<T, __half> ? 13 : 0;

// The end of a K > 32 row: the exact top K, sorted, written. Out of line: the call saves almost
// nothing (the stream's registers are dead here), and the function gets its own register
// allocation instead of pushing the stream loop into spills (an inlined register sort did: H100
// fp32 K = 256 394 us against 381). Shared memory comes in as 32-bit shared-window addresses.
// Every row of a launch ends at about the same time, so this runs on all warps of an SM at once
// and its instruction count is what matters. First choice: finish_by_bins (K <= 256, scattering into
// the list's room, 256 keys for fp32 and 192 for 16-bit logits, or else into the key buffer above
// the keys); K > 256: finish_wide (at least K keys). Otherwise (or when its bins are too crowded) the
// exact select, then a register sort up to 256 keys (8 per lane; the shared-memory sort of 256 keys
// took ~25 us per row on the H100, this one ~7; 16 per lane spilled and was slower than selecting
// down to 256 first: 374.6 against 360.4 us), the shared-memory sort above 256. One instantiation per
// batch size U (whose list room is out_cap): with one for both U of a 16-bit type, out_cap was no
// longer a constant to the compiler, and the U = 2 kernels' machine code changed with the U = 3 ones.
template <class T, int U, bool Wide = false>
__device__ __noinline__ void finish_big_row(std::uint32_t keys_s, int cap, std::uint32_t hist_s, std::uint32_t out_s,
                                            int out_cap, sel_state w, const T* row, std::int64_t V, int K, float M,
                                            float S, float* p_out, std::int32_t* i_out) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    auto* keys = static_cast<std::uint64_t*>(__cvta_shared_to_generic(keys_s));
    auto* hist = static_cast<unsigned*>(__cvta_shared_to_generic(hist_s));
    auto* out = static_cast<std::uint64_t*>(__cvta_shared_to_generic(out_s));
    __syncwarp();  // the last appends' writes before the reads below
    if (K - 1 > out_cap && K <= 256 && 2 * K - 1 <= cap) {
        // The list's room is too small (16-bit logits at K > 192): scatter into the key buffer
        // above the keys instead, after a compaction that leaves K - 1 free (it keeps the K-th key's
        // bin whole: usually one histogram pass where the exact top K takes three or more). H100
        // (GPU-9b19e0a7), against the exact select and the register sort: bf16 4096 x 50257 K = 256
        // 245.3 -> 240.5 us, 4096 x 151936 524.7 -> 521.1, fp16 232.6 -> 230.6. K <= 256 keeps
        // every bin cursor below 256 (finish_by_bins packs them in bytes).
        if (w.count + K - 1 > cap) w = compact<true>(keys, hist, w, K, cap - (K - 1), lane, M);
        out = keys + w.count;
        out_cap = cap - w.count;
    }
    if (w.count > 1 && K <= 256 && K - 1 <= out_cap && finish_by_bins(keys, w.count, K, hist, out, out_cap, lane, M)) {
        topk_detail::warp_write_topk(keys, min(w.count, K), row, V, K, M, S, p_out, i_out, lane);
        return;
    }
    // K > 256: the end by bins written straight to the output (rows with at least K keys).
    // The 16-bit wide kernels bin by value and index bits (finish_wide's HS): its idx_shift, the row's
    // index width less HS, rides in nbins' low bits.
    constexpr int hs = Wide ? key_low_bits<T> : 0;
    const int ibits = hs > 0 && V > 1 ? 64 - __clzll(static_cast<unsigned long long>(V - 1)) : 0;
    if (K > 256 && w.count >= K &&
        finish_wide<Wide, hs>(keys_s, w.count, K, hist_s, out_s,
                              min(1024, out_cap * 4 / 64 * 64) | (hs > 0 ? max(0, ibits - hs) : 0), p_out, i_out, M, S))
        return;
    if (w.count > K) w = compact<true>(keys, hist, w, K, K, lane, M);  // n <= 256 for K <= 256
    const int n = w.count;
    if (n <= 64) {
        topk_detail::warp_sort_desc_regs<2>(keys, n, lane);
    } else if (n <= 128) {
        topk_detail::warp_sort_desc_regs<4>(keys, n, lane);
    } else if (n <= 256) {
        topk_detail::warp_sort_desc_regs<8>(keys, n, lane);
    } else {
        topk_detail::warp_sort_desc_smem_padded(keys, n, lane);  // cap >= the next power of two of K
    }
    __syncwarp();
    topk_detail::warp_write_topk(keys, n, row, V, K, M, S, p_out, i_out, lane);
}

// K <= 32: rows read in order, the threshold seeded from the first batch, candidates appended at
// once (rare after the seed), compactions at batch starts.
template <class T, int U, bool Resample, std::uint32_t PF, bool Lean, int NW = stream_warps>
__global__ void __launch_bounds__(32 * NW, 32 / NW)
    softmax_topk_stream_kernel(const T* __restrict__ logits, float* __restrict__ probs,
                               std::int32_t* __restrict__ indices, std::int64_t rows, std::int64_t V, int K, int cap) {
    extern __shared__ __align__(16) unsigned char stream_smem[];
    constexpr int W = vec16<T>::n;
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * NW + warp;
    if (r >= rows) return;  // warp-uniform; no block barrier follows
    STREAM_STAMP(r, stl_start);

    // [keys: NW x cap][bins: NW x hist_words]
    std::uint64_t* keys = reinterpret_cast<std::uint64_t*>(stream_smem) + static_cast<std::size_t>(warp) * cap;
    unsigned* hist = reinterpret_cast<unsigned*>(reinterpret_cast<std::uint64_t*>(stream_smem) + NW * cap) +
                     warp * hist_words;
    for (int b = lane; b < hist_words; b += 32) hist[b] = 0;
    __syncwarp();
    sel_state w;

    const T* row = logits + r * V;
    lane_stats_t<ffma_terms<T> && !Resample> st;
    const row_split rs = split_row(row, V);
    scalar_range<false>(row, 0, rs.head, lane, st, keys, hist, cap, w, K);

    const auto* vrow = reinterpret_cast<const vec16<T>*>(row + rs.head);
    constexpr int per_batch = 32 * U;
    const auto nv32 = static_cast<std::uint32_t>(rs.nvec);  // elements per row < 2^32 (32-bit composite index)
    vec16<T> v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) load_or_neg_inf(v[u], vrow + u * 32 + lane, u * 32 + lane < rs.nvec);
    // Launched only for K <= 32; saying so here keeps the compiler from planning for K > 32 (without
    // it the kernel spilled at 64 registers).
    if (K <= 32) seed_threshold(v, K, lane, w);
#ifdef FUSEBENCH_STREAM_TIMELINE
    if (w.thr == w.thr) STREAM_STAMP(r, stl_seed);  // after the seed, which waited for the first batch
#endif
    const vec16<T>* p = vrow + lane;
    auto j = static_cast<std::uint32_t>(lane);
    std::uint32_t idx = static_cast<std::uint32_t>(rs.head) + j * W;
    for (; j + 2 * per_batch - lane <= nv32; j += per_batch, idx += per_batch * W, p += per_batch) {
        consume_batch_refill<T, U, false, Resample, PF, Lean>(v, p, j, nv32, idx, lane, st, keys, hist, cap, w, K);
#ifdef FUSEBENCH_STREAM_TIMELINE
        {  // batches done / full batches, from the live j and nv32
            const std::uint32_t b = (j - lane) / per_batch + 1, nb = nv32 / per_batch;
            if (b == nb / 8) STREAM_STAMP_SMALL(stl_eighth);
            if (b == nb / 2) STREAM_STAMP_SMALL(stl_half);
        }
#endif
    }
    for (; j - lane < nv32; j += per_batch, idx += per_batch * W, p += per_batch) {
        consume_batch_refill<T, U, true, Resample, PF, Lean>(v, p, j, nv32, idx, lane, st, keys, hist, cap, w, K);
    }
    scalar_range<false>(row, rs.tail, V, lane, st, keys, hist, cap, w, K);
    STREAM_STAMP(r, stl_stream);

    float M, S;
    float* p_out = probs + r * K;
    std::int32_t* i_out = indices + r * K;
#ifdef FUSEBENCH_STREAM_TIMELINE
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    STREAM_SET(r, stl_smid, smid);
#endif
    if (!row_stats(st, M, S, row, V)) {
        topk_detail::warp_write_no_softmax(p_out, i_out, K, lane);
        return;
    }
    STREAM_STAMP(r, stl_stats);
    finish_small_row(keys, hist, w, row, V, K, M, S, p_out, i_out, lane);
    STREAM_STAMP(r, stl_end);
}

// The sample of a K > 32 row (phase 0 of the stratified order: steps 0, P, 2P, ..., 1/P of the row)
// without a selection in its stream: each lane folds the maxima of G consecutive vectors of its own
// into one group maximum, kept as the upper 16 bits of its key rounded up (a bound at or above it)
// in the warp's still empty key buffer (4 cap of them; G = 1 for the samples the host sends here).
// At its end the threshold t is the smallest bound in the value-range bin (256 bins from the
// smallest finite bound to the largest) that holds the r-th largest one: about r elements of the
// sample are >= t. The groups whose bound is >= t are read again (recent: mostly from L2) and their
// elements >= t inserted; every other group holds nothing >= t, and the rest of the row drops only
// elements below the (rising) threshold. The final check (at least K kept, else the row is read
// again in order) keeps it exact. The parked sample instead parks and drains its candidate vectors
// and compacts towards its top r while its threshold forms (every vector of its first batch is a
// candidate): costly in 16-bit, where the whole launch does it at once. Returns count -1 (the row
// goes in order) when more groups pass than the list's room holds as ids (ties).
// FUSEBENCH_BIG_SEED (1 in the library since 2026-11-26; 0 gives the previous code) starts a 16-bit big
// kernel's parked sample (or its in-order pass) with cthr at the Kc-th largest value of its first batch (Kc = r in the
// sample, K in order) instead of -inf: every member of the sample's (row's) top Kc is at or above it,
// since the batch is part of the sample. CPU emulation (probes/big_emulation.py, bf16 std 10, 32 rows):
// K = 64 P = 2 inserts 762 composites a row instead of 1170, 2.0 compactions / 2.0 radix passes instead
// of 4.0 / 4.9; K = 33 in order 575 instead of 1081, 1.0 / 1.0 instead of 2.5 / 3.3. The value is found
// on the upper 16 bits of its key (16 warp counts; exact for bf16, a lower bound for fp16); keys the
// scalar head put in the buffer below it are dropped (they are not in the top Kc either).
// Measured (H100 GPU-efc27386, probes/stream_ab.cu, 4096 x 50257 std 10, two rounds, us, 0 vs 1):
// bf16 K = 33 198.8 / 197.7 -> 182.9 / 184.6, K = 64 197.9 / 197.9 -> 192.9 / 193.0, K = 128
// 211.0 / 209.3 -> 202.6 / 204.0, K = 256 (maxima sample, unchanged code path) 220.9 / 219.9 ->
// 220.9 / 222.0; fp16 K = 64 188.2 / 188.1 -> 183.3 / 182.9.
#ifndef FUSEBENCH_BIG_SEED
#define FUSEBENCH_BIG_SEED 1
#endif
template <class T, int U>
__device__ __forceinline__ void seed_first_batch(const vec16<T> (&v)[U], int Kc, int lane, std::uint64_t* keys,
                                                 unsigned* hist, sel_state& w) {
    std::uint32_t t = 0;
#pragma unroll 1
    for (int b = 15; b >= 0; --b) {
        const std::uint32_t c = t | (1u << b);
        const float fc = topk_detail::key_float(c << 16);  // NaN below -inf's key and above +inf's: counts 0
        unsigned cnt = 0;
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < vec16<T>::n; ++e) cnt += elem_at(v[u], e) >= fc;
        if (__reduce_add_sync(full_mask, cnt) >= static_cast<unsigned>(Kc)) t = c;
    }
    const float ft = topk_detail::key_float(t << 16);
    if (!(ft > -INFINITY)) return;  // no Kc finite elements at or above any bound: no seed
    const std::uint64_t c0 = composite(t << 16, 0xFFFFFFFFu);  // every element >= ft beats it
    __syncwarp();  // the head's appends before the reads below
    int out = 0;
    for (int t0 = 0; t0 < w.count; t0 += 32) {
        const int i = t0 + lane;
        const std::uint64_t c = i < w.count ? keys[i] : 0ull;
        const bool keep = i < w.count && c > c0;
        __syncwarp();  // every lane has read its key before any lane writes (out <= t0)
        const unsigned m = __ballot_sync(full_mask, keep);
        if (keep) keys[out + __popc(m & ((1u << lane) - 1u))] = c;
        out += __popc(m);
    }
    w.count = out;
    if (lane == 0) cthr_of(hist) = c0;
    __syncwarp();
    w.thr = nextafterf(ft, -INFINITY);
}
template <bool F> struct sample_result {
    lane_stats_t<F> st;
    float thr;
    int count;  // composites in the buffer; -1: the row goes in order; -2 (Ties): every group max equal
};
template <class T, int U, bool Ties = false, bool Runs = false, bool Scan = false, bool F = false>
__device__ __forceinline__ sample_result<F> sample_by_maxima(const vec16<T>* vrow, std::uint32_t nfull, std::uint32_t stride,
                                                       std::uint32_t hd, std::uint32_t keys_s, std::uint32_t hist_s,
                                                       std::uint32_t list_s, int cap, int K, int r) {
    constexpr int W = vec16<T>::n;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    auto* keys = static_cast<std::uint64_t*>(__cvta_shared_to_generic(keys_s));
    auto* hist = static_cast<unsigned*>(__cvta_shared_to_generic(hist_s));
    auto* list_vec = static_cast<vec16<T>*>(__cvta_shared_to_generic(list_s));
    lane_stats_t<F> st;
    sel_state w;
    constexpr int id_cap = list_cap<U> * 4;  // slot ids (32-bit) in the list's vector room
    // Runs: the row's units are runs of U consecutive steps (nfull / U of them), one a batch; the
    // sample is units 0, stride, 2 stride, ...; its vector j (per lane) is step sample_step(j).
    constexpr std::uint32_t R = Runs ? static_cast<std::uint32_t>(U) : 1u;
    const std::uint32_t jump = stride * 32 * R;                          // vectors from one unit to the next
    const std::uint32_t n0 = (nfull / R + stride - 1) / stride * R;     // the sample's steps: vectors per lane
    const auto sample_step = [&](std::uint32_t j) { return Runs ? (j / R) * stride * R + j % R : j * stride; };
    const auto per_lane = static_cast<std::uint32_t>(4 * cap / 32);     // group maxima per lane that fit
    const std::uint32_t G = (n0 + per_lane - 1) / per_lane;             // vectors per group
    // A group maximum as the upper 16 bits of its key, rounded up (0 for -inf): a bound at or above
    // it, so a group whose bound is below t holds nothing >= t.
    auto* gkey = reinterpret_cast<std::uint16_t*>(keys);
    const auto key16 = [](float x) -> std::uint16_t {
        if (!(x > -INFINITY)) return 0;
        const std::uint32_t k = float_key(x);
        return static_cast<std::uint16_t>(k >= 0xFFFF0000u ? 0xFFFFu : (k + 0xFFFFu) >> 16);
    };
    const auto val16 = [](std::uint32_t k16) { return k16 == 0 ? -INFINITY : topk_detail::key_float(k16 << 16); };
    float gm = -INFINITY;
    std::uint32_t gc = 0, ng = 0;  // warp-uniform: vectors in the open group, groups stored
    const auto fold = [&](float vm) {
        gm = fmaxf(gm, vm);
        if (++gc == G) {
            gkey[ng * 32 + static_cast<std::uint32_t>(lane)] = key16(gm);
            ++ng;
            gc = 0;
            gm = -INFINITY;
        }
    };
    const vec16<T>* p = vrow + lane;
    if constexpr (Runs) {
        // A unit's U steps at once, the next unit's loads issued before this one is consumed.
        vec16<T> v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = p[u * 32];  // n0 >= U
        for (std::uint32_t i = 0; i < n0; i += U, p += jump) {
            vec16<T> nx[U];
#pragma unroll
            for (int u = 0; u < U; ++u) load_or_neg_inf(nx[u], p + jump + u * 32, i + U < n0);
#pragma unroll
            for (int u = 0; u < U; ++u) fold(consume_stats(v[u], st));
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = nx[u];
        }
    } else {
        std::uint32_t i = 0;
        for (; i + U <= n0; i += U, p += U * jump) {
            vec16<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = p[u * jump];
#pragma unroll
            for (int u = 0; u < U; ++u) fold(consume_stats(v[u], st));
        }
        for (; i < n0; ++i, p += jump) {
            const vec16<T> v = *p;
            fold(consume_stats(v, st));
        }
    }
    if (gc > 0) {
        gkey[ng * 32 + static_cast<std::uint32_t>(lane)] = key16(gm);
        ++ng;
    }
    __syncwarp();
    const int n = static_cast<int>(ng) * 32;
    float lo = INFINITY, hi = -INFINITY;
    for (int t = lane; t < n; t += 32) {
        const float x = val16(gkey[t]);
        hi = fmaxf(hi, x);
        if (x > -INFINITY) lo = fminf(lo, x);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        lo = fminf(lo, __shfl_xor_sync(full_mask, lo, o));
        hi = fmaxf(hi, __shfl_xor_sync(full_mask, hi, o));
    }
    if (!(lo <= hi)) lo = hi;  // no finite group maximum
    const float span = hi - lo;
    const float scale = span > 0.0f && span < INFINITY ? 255.99f / span : 0.0f;
    // Monotone in x (0 for -inf and NaN), so a group in a lower bin has a smaller maximum.
    const auto bin_of = [&](float x) { return x > lo ? min(255u, __float2uint_rz((x - lo) * scale)) : 0u; };
    for (int t = lane; t < n; t += 32) {
        const unsigned b = bin_of(val16(gkey[t]));
        atomicAdd(&hist[b >> 1], 1u << ((b & 1u) * 16u));
    }
    __syncwarp();
    unsigned digit = 0, above_bin = 0, in_bin = 0;
    const bool mine =
        topk_detail::scan_bins_desc<true>(hist, static_cast<unsigned>(min(r, n)), lane, digit, above_bin, in_bin);
    digit = __shfl_sync(full_mask, digit, __ffs(__ballot_sync(full_mask, mine)) - 1);
    // The ids of the groups in that bin or above, into the list's vector room; t = their smallest max.
    auto* ids = reinterpret_cast<std::uint32_t*>(list_vec);
    int m = 0;
    float t_min = INFINITY;
    for (int t0 = 0; t0 < n; t0 += 32) {
        const int t = t0 + lane;
        const float x = val16(gkey[t]);
        const bool sel = bin_of(x) >= digit;
        const unsigned bal = __ballot_sync(full_mask, sel);
        const int pos = m + __popc(bal & ((1u << lane) - 1u));
        if (sel) {
            if (pos < id_cap) ids[pos] = static_cast<std::uint32_t>(t);
            t_min = fminf(t_min, x);
        }
        m += __popc(bal);
    }
    if (m > id_cap) {
        // -2 (Ties): one finite value, or a plateau: 7/8 of the groups' maxima at the smallest. The rest of such a
        // row would park every vector that reaches the plateau's value, each rejected element by element (the
        // plain vote cannot tell equal values apart by index); the retry kernel's vote can. Session m (H200, calls
        // 5 / 6, same build, an A/B knob since removed): bf16 4096 x 50257 K = 256 plateau rows (1.0 with a 3.0 at
        // every 1256th) 460.2 -> 283.8 us (2.23x -> 1.37x the std 1 time); ties, huge, stride_trap, all_equal and
        // std 1 at that shape within -0.6% to +2.1%. The same test on the parked sample's kept keys (7/8 at the
        // threshold's value, or at most 8 above it) also helped fp32 50257 and both 151936 plateaus (0.43-0.65x)
        // but sent `ties` rows at V = 151936 to the retry kernel, 1.53-1.57x slower: not kept
        // (kernels/softmax_topk/NOTES.md, "Session m").
        bool plateau = Ties && lo == hi;
        if (Ties && !plateau && hi > -INFINITY) {
            int nlo = 0;
            for (int t = lane; t < n; t += 32) nlo += val16(gkey[t]) == lo ? 1 : 0;
            nlo = static_cast<int>(__reduce_add_sync(full_mask, static_cast<unsigned>(nlo)));
            plateau = 8 * nlo >= 7 * n;
        }
        return {st, 0.0f, plateau && hi > -INFINITY ? -2 : -1};
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) t_min = fminf(t_min, __shfl_xor_sync(full_mask, t_min, o));
    // Every element >= t is a candidate (the largest index ranks below any element of value t); no
    // -inf ever is (cthr_start).
    const std::uint64_t c0 = composite(float_key(t_min), 0xFFFFFFFFu);
    if (lane == 0) cthr_of(hist) = c0 > cthr_start ? c0 : cthr_start;
    __syncwarp();
    w.thr = nextafterf(t_min, -INFINITY);
    // The selected groups again: vector j of lane sl's groups is step j of phase 0.
    for (int b0 = 0; b0 < m; b0 += 32) {
        const bool ok = b0 + lane < m;
        const std::uint32_t s = ok ? ids[b0 + lane] : 0u;
        const std::uint32_t j0 = (s / 32) * G, sl = s % 32;
        for (std::uint32_t g = 0; g < G; ++g) {
            const std::uint32_t vi = sample_step(j0 + g) * 32 + sl;
            vec16<T> v;
            load_or_neg_inf(v, vrow + vi, ok && j0 + g < n0);
            insert_round<T, count_room<T, U>, Scan>(v, hd + vi * W, keys, hist, cap, w, K, lane, st.m);
        }
    }
    return {st, w.thr, w.count};
}

// fused_stream_resample's parked sample (Mode 1) sends a row to the retry kernel (route_ties) when 90% or more of
// the sample's vectors were parked and 32 or more kept keys hold the threshold's value: a plateau of equal values
// at the row's K-th, whose later vectors would all be parked and rejected element by element. Tests on the kept
// keys alone routed a few `ties` rows at V = 151936 too, and those rows' tail in the retry kernel cost 1.5x
// (NOTES.md, "Session m"); in probes/resample_emulation.cpp the parked share is 100% on every plateau and
// all_equal row and at most 69% on ties rows (at most 49% on the other kinds). Measured in the suite (session n,
// NOTES.md; reports/examples/pr-1127n/): fp32 4096 x 151936 K = 256 plateau rows 2.30-2.75x -> 1.24-1.31x their
// random-logit time, 4096 x 50257 2.11-2.49x -> 1.49-1.63x, every other fp32 kind -0.1% to +0.8% (H100, H200);
// in 16-bit the route's registers spill more (bf16 56 / 76 -> 86 / 116 bytes) and random bf16 rows ran 5.1-5.7%
// slower (H100: 151936 K = 256, 50257 K = 64 / 128), so the library takes it for fp32 rows only.
// FUSEBENCH_RESAMPLE_PARKED_ROUTE: 1 (default) fp32 rows, 2 every dtype (the A/B's "pr" build), 0 none.
#ifndef FUSEBENCH_RESAMPLE_PARKED_ROUTE
#define FUSEBENCH_RESAMPLE_PARKED_ROUTE 1
#endif
template <typename T>
constexpr bool resample_parked_route =
    FUSEBENCH_RESAMPLE_PARKED_ROUTE == 2 || (FUSEBENCH_RESAMPLE_PARKED_ROUTE == 1 && std::is_same_v<T, float>);
// FUSEBENCH_RESAMPLE_PARKED_EARLY (1 in the library since session o: fp32 rows): the same route taken
// during the sample, at its drains: a drain of 29 U or more parked vectors
// (90% of a batch) that inserted at most resample_early_quiet (1) keys and did not compact (the count grew by 0 or
// 1) drained a batch tied at the threshold's value with larger indices, which only a plateau at
// the row's K-th does (on other rows every parked vector holds a key that beats the threshold); with 32 or more
// kept keys at the threshold's value the row then goes to the retry kernel, after about a sixth of its sample at
// V = 50257 instead of all of it (session n's suite runs: fp32 4096 x 50257 plateau 1.49-1.63x its random time with
// the route at the sample's end). No register lives across the phase loop for it (a window or a streak counter
// did, and spilled more); one more lives across the drain (ptxas, the parked resample kernels' spill stores / loads
// with it on: fp32 12 / 8 -> 20 / 24 bytes; with 2, bf16 56 / 76 -> 100 / 112, fp16 24 / 20 -> 28 / 40).
// probes/resample_emulation.cpp (the EARLY line, mode 1 streak 1; fp32 K = 256, the suite's inputs, 4096 rows):
// see NOTES.md "Session n". Measured (session o, NOTES.md; reports/examples/pr-1127o/; H100, 4096 rows, K = 256,
// with RISING_SAFE below): fp32 plateau 50257 1.49x -> 1.39x its random time, 151936 1.23x -> 1.13x, all_equal
// -6% / -8%, random fp32 rows +0.1% to +0.9%, fp32 ties rows at 50257 +1.8% / +2.5% (two boards); with 2 random
// 16-bit rows ran 1.9-3.7% slower (bf16 K = 64 / 128 std10, fp16 K = 64), the spills above, so the library takes 1.
// FUSEBENCH_RESAMPLE_PARKED_EARLY: 0 off, 1 (default) where resample_parked_route<T> holds (fp32), 2 every dtype
// (in 16-bit the early test alone: the route at the sample's end stays off there, its counter cost 5%).
#ifndef FUSEBENCH_RESAMPLE_PARKED_EARLY
#define FUSEBENCH_RESAMPLE_PARKED_EARLY 1
#endif
constexpr int resample_early_quiet = 1;
// A form that kept the early test's count in the key buffer's free last slot instead of a register live across
// the drain (FUSEBENCH_RESAMPLE_EARLY_STASH, sessions o-p; the 16-bit spills back at the off levels) was measured
// with EARLY = 2 on an H100: random 16-bit rows paid the same +1.5 to +3.5% as with the register, so the spills
// were not the cost; removed (NOTES.md "Session p"; its code at 1a34139).
template <typename T>
constexpr bool resample_parked_early =
    FUSEBENCH_RESAMPLE_PARKED_EARLY == 2 || (FUSEBENCH_RESAMPLE_PARKED_EARLY == 1 && resample_parked_route<T>);

// The plateau routes' last test: how many of the warp's kept keys hold the threshold's value (cthr's), warp-wide.
__device__ __forceinline__ unsigned keys_at_threshold(const std::uint64_t* keys, int count, unsigned* hist, int lane) {
    __syncwarp();  // the drain's / the sample's last writes to the keys and cthr before the reads
    const auto ck = static_cast<std::uint32_t>(cthr_of(hist) >> 32);
    unsigned at = 0;
    for (int t = lane; t < count; t += 32) at += static_cast<std::uint32_t>(keys[t] >> 32) == ck ? 1u : 0u;
    return __reduce_add_sync(full_mask, at);
}

// FUSEBENCH_RESAMPLE_RISING_SAFE (1 in the library since session o; 0 turns it off): the ties-at-the-top route
// (the sample's kept keys all hold the row's maximum: all_equal rows) sends a row to the retry kernel's in-order
// pass, whose index-aware vote rejects every later element once the first K equal ones are in. A row that rises
// along the index to a run of equal values at its end (bf16 4096 x 151936 `ascending`: -4 + 8 j / V rounds to runs of
// ~300 equal bf16 values, ~148 at the maximum) takes the same route, since the parked sample reads its last step
// first; in order every element is then a new record (H200, session n call 1 and session m call 4: 14.65-14.67 ms,
// 30-31x its random-logit time). With this on, a row whose kept keys' lowest index lies in the row's second half
// (the maximum first met late: the row rises) goes to the retry kernel's safe sample instead (route_safe: it reads
// its last steps first, as fp32 rising rows take it today: fp32 151936 ascending 0.98x). Measured (session o, H100,
// with PARKED_EARLY = 2): bf16 4096 x 151936 K = 256 ascending 14562 -> 754 us (26.1x -> 1.33x its random time).
#ifndef FUSEBENCH_RESAMPLE_RISING_SAFE
#define FUSEBENCH_RESAMPLE_RISING_SAFE 1
#endif
constexpr bool resample_rising_safe = FUSEBENCH_RESAMPLE_RISING_SAFE != 0;

// One pass over a row (K > 32): Sampled reads it in stratified order with the sample's threshold,
// otherwise in order with a running exact top K. Returns false when the sampled pass let fewer than
// K through (the row is then not written). Two instantiations instead of a runtime flag: with one,
// the compiler kept the flag in local memory and reloaded it on every step to get the stride.
// Mode (fused_stream_resample at K > 32; 0: fused_stream, none of this). 1, its main pass: a row given
// up leaves a route for the retry kernel (route_ties: the sample's top tied; route_safe: given up
// after the second phase past the sample or more, or failed at its end, as rows that rise along the
// index do); rows given up after the first phase (their top in the sampled steps or at the row's
// start) go in order as in fused_stream; its parked sample reads its own last U steps first. 2, the
// retry kernel's pass: the vote is aware of indices (park_vec); Sampled: the sample keeps its top K
// instead of its top r_sample, so at least K of the row are at or above its threshold and the pass
// cannot fail in any order (the "safe sample"), and its last U steps are read first too (rows that
// rise along the index then set a high threshold at once; rows that fall do with the sample's first
// steps right after); no row is given up.
// Plain: the two-op terms whatever T (fused_stream_resample's in-order pass; see lane_stats_t).
template <class T, int U, bool Sampled, bool ByMaxima = false, int Mode = 0, bool Runs = false, bool Wide = false,
          bool Plain = false>
__device__ __forceinline__ bool big_pass(const T* row, std::int64_t V, std::uint32_t hd, std::uint32_t nvec, int K,
                                         int cap, int P, int r_sample, std::uint64_t* keys, unsigned* hist,
                                         const vec_list<T>& list, float* p_out, std::int32_t* i_out, int lane) {
    constexpr int W = vec16<T>::n;
    constexpr int L = list_cap<U>;
    // The 16-bit wide kernel appends a drain round's elements by a prefix sum (insert_round's Scan).
    // (The same in the 16-bit big kernel at K <= 256 on an H200, GPU-a4ca70f0: bf16 4096 x 151936
    // K = 256 +3.0%, bf16 50257 K = 64 +1.1%, fp16 50257 K = 256 -2.9%: not kept; kernels/softmax_topk/NOTES.md, "The 16-bit stream on the H200".)
    constexpr bool scan16 = Wide && sizeof(T) == 2;
    const std::uint32_t nfull = nvec / 32;
    const auto* vrow = reinterpret_cast<const vec16<T>*>(row + hd);
    if (lane == 0) cthr_of(hist) = cthr_start;
    __syncwarp();
    constexpr bool F = ffma_terms<T> && Mode == 0 && !Plain;
    lane_stats_t<F> st;
    sel_state w;
    const std::uint32_t stride = Sampled ? static_cast<std::uint32_t>(P) : 1u;
    // ByMaxima: phase 0 (the sample) goes through sample_by_maxima, which leaves its threshold and
    // its elements at or above it in the buffer; the scalar head comes after it, against that
    // threshold. Otherwise the sample parks and drains its candidates like the rest of the row.
    constexpr bool maxima = Sampled && ByMaxima;
    // FUSEBENCH_BIG_SEED (on in the library): the parked sample's / in-order pass' first batch seeds cthr.
    constexpr bool big_seed = FUSEBENCH_BIG_SEED != 0 && sizeof(T) == 2 && !maxima && Mode == 0 && !Wide && !Runs;
    if constexpr (maxima) {
        const sample_result<F> sr = sample_by_maxima<T, U, Mode == 1, Runs, scan16, F>(
            vrow, nfull, stride, hd, static_cast<std::uint32_t>(__cvta_generic_to_shared(keys)),
            static_cast<std::uint32_t>(__cvta_generic_to_shared(hist)),
            static_cast<std::uint32_t>(__cvta_generic_to_shared(list.vec)), cap, K, r_sample);
        if (sr.count < 0) {
            if (Mode == 1 && sr.count == -2 && lane == 0) cthr_of(hist) = route_ties;
            return false;
        }
        st = sr.st;
        w.thr = sr.thr;
        w.count = sr.count;
    }
    constexpr bool Retry = Mode == 2;
    static_assert(!Retry || !ByMaxima, "the retry pass samples by parking");
    int Kc = Sampled && !maxima && !Retry ? r_sample : K;  // the sample keeps its top r_sample (Retry: K)
    // The keys at the end of the sample, for the check after phase 1, kept in the buffer's last slot
    // rather than in a register live across the phase loop (ptxas: the sampled kernels' spills as
    // before). The slot is overwritten only once the buffer is full, and then a compaction leaves at
    // least K keys, which the check tests first.
    auto* s0_slot = reinterpret_cast<int*>(keys + cap - 1);
    if constexpr (maxima && Mode != 1) {
        if (lane == 0) *s0_slot = w.count;
    }
    bool thresholded = maxima;                   // elements below the sample's r-th may have been dropped
    // End of the sample: keep its top r_sample and at most r_sample / 2 more (the bin of the
    // r-th whole: one histogram pass where the exact top r takes three or more); the smallest kept
    // composite becomes the threshold, at or below the sample's r-th largest. The sample's own
    // compactions (towards r_sample) dropped only composites below the kept ones, and left at least
    // r_sample; with fewer, nothing was ever dropped.
    [[maybe_unused]] std::uint32_t parked0 = 0;  // the sample's vectors parked (resample_parked_route<T>)
    const auto end_sample = [&] {
        if constexpr (Mode == 1 && resample_parked_route<T>) parked0 += static_cast<std::uint32_t>(w.vn);
        if (w.vn > 0) drain_list<T, count_room<T, U>, scan16>(list, lane, keys, hist, cap, w, Kc, st.m, true);
        if (w.count > Kc) w = compact<true>(keys, hist, w, Kc, Kc + Kc / 2, lane, st.m);
        thresholded = w.count >= Kc;
        Kc = K;
    };
    scalar_range<true>(row, 0, hd, lane, st, keys, hist, cap, w, Kc);
    if constexpr (maxima && Mode == 1) {
        // Mode 1: after the scalar head, so that phase 1's gain is phase 1's. Counted with it, the
        // head (columns below the first 128-byte boundary: stride_trap's run 0 in 16-bit) kept rows
        // with a long head past phase 1, to be given up after phase 2 and sent to the retry kernel
        // (H100, bf16 stride_trap 348.6 -> 467.6 us against fused_stream).
        if (lane == 0) *s0_slot = w.count;
    }

    // Phase phi reads steps phi, phi + stride, ... with a plain pointer stride (the shape the
    // compiler keeps in registers: a first version that computed the next step's phase inside one
    // loop kept its cursor and row geometry in local memory, ~75 instructions per step against
    // ~55). U steps are loaded at once, consumed, and the list drained if it might not hold the next
    // batch: U loads per lane in flight while the warp waits, and no vector live across a drain (a
    // drain between a refill and its use spilled the vectors in flight).
    // Runs (the wide kernel): the units of the order are runs of U consecutive steps (1.5 KB of fp32
    // per warp) instead of single steps (512 bytes), one unit a batch; the steps past the last whole
    // run come after the phases.
    static_assert(!Runs || (maxima && Mode == 0), "runs: the wide kernel's pass only");
    constexpr std::uint32_t R = Runs ? static_cast<std::uint32_t>(U) : 1u;
    const std::uint32_t nunits = nfull / R;
    const std::uint32_t jump = stride * 32 * R;  // vectors from one unit of a phase to the next
    if constexpr (big_seed) {
        // Phase 0's first batch (steps 0, stride, 2 stride) read for the seed only; the phase loop reads
        // it again (from L2) and votes it as before, so the loop's code is unchanged (a peeled first
        // batch with its own vote and drain doubled the 16-bit kernels' spills, ptxas).
        if ((nunits + stride - 1) / stride >= static_cast<std::uint32_t>(U)) {
            vec16<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = vrow[u * jump + static_cast<std::uint32_t>(lane)];
            seed_first_batch<T, U>(v, Kc, lane, keys, hist, w);
        }
    }
    for (std::uint32_t phi = maxima ? 1u : 0u; phi < stride && phi < nunits; ++phi) {
        std::uint32_t n = (nunits - phi + stride - 1) / stride;  // units of this phase (>= 1)
        const vec16<T>* p = vrow + phi * 32 * R + static_cast<std::uint32_t>(lane);
        std::uint32_t idx = hd + (phi * 32 * R + static_cast<std::uint32_t>(lane)) * W;
        // A rising row sets the sample's threshold at once when the sample's last steps come first,
        // instead of parking every vector of its sample (each one a new maximum: in Mode 1 ~5,100
        // elements and ~13 compactions before an ascending fp32 row's give-up, against ~500 and
        // one); a random row parks about as much in either order. Mode 1 reads its sample's last
        // step first (one step: rows that fall or tie then pay less than with U steps); the retry's
        // safe sample its last min(U, n) steps. H100, suite, fp32 4096 x 50257 K = 256, time / the
        // random time (NOTES.md, "asc" and "patch F"): in order: ascending 1.73x, descending 1.17x,
        // all_equal 1.37x; last U steps first: 1.34-1.35x, 1.22x, 1.46-1.47x; last step first
        // (kept): 1.33x, 1.17x, 1.38x; random unchanged.
        if constexpr (Mode == 1 && !maxima) {
            if (phi == 0) {  // the sample's last step first (n >= 1: with n == 1 it is the only step)
                --n;
                const vec16<T> v = p[n * jump];
                vote_vec<T, Retry>(v, idx + n * jump * W, lane, st, keys, hist, list, w);
            }
        }
        if constexpr (Retry && Sampled) {
            if (phi == 0) {  // the sample's last min(U, n) steps first
                const std::uint32_t pre = n < static_cast<std::uint32_t>(U) ? n : static_cast<std::uint32_t>(U);
                n -= pre;
                vec16<T> v[U];
#pragma unroll
                for (int u = 0; u < U; ++u) load_or_neg_inf(v[u], p + (n + u) * jump, static_cast<std::uint32_t>(u) < pre);
#pragma unroll
                for (int u = 0; u < U; ++u) vote_vec<T, Retry>(v[u], idx + (n + u) * jump * W, lane, st, keys, hist, list, w);
                if (w.vn + 32 * U > L) drain_list<T, count_room<T, U>, scan16>(list, lane, keys, hist, cap, w, Kc, st.m, false);
            }
        }
        std::uint32_t i = 0;
        if constexpr (Runs) {
            vec16<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = p[u * 32];
            for (; i < n; ++i, p += jump, idx += jump * W) {
                vec16<T> nx[U];
#pragma unroll
                for (int u = 0; u < U; ++u) load_or_neg_inf(nx[u], p + jump + u * 32, i + 1 < n);
#pragma unroll
                for (int u = 0; u < U; ++u) vote_vec<T, Retry>(v[u], idx + u * 32 * W, lane, st, keys, hist, list, w);
                if (w.vn + 32 * U > L) drain_list<T, count_room<T, U>, scan16>(list, lane, keys, hist, cap, w, Kc, st.m, false);
#pragma unroll
                for (int u = 0; u < U; ++u) v[u] = nx[u];
            }
        }
        for (; i + U <= n; i += U, p += U * jump, idx += U * jump * W) {
            vec16<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = p[u * jump];
#pragma unroll
            for (int u = 0; u < U; ++u) vote_vec<T, Retry>(v[u], idx + u * jump * W, lane, st, keys, hist, list, w);
            if (w.vn + 32 * U > L) {
                [[maybe_unused]] const int before = w.vn;
                [[maybe_unused]] int c0 = 0;
                if constexpr (Mode == 1 && !maxima && resample_parked_early<T>) c0 = w.count;
                drain_list<T, count_room<T, U>, scan16>(list, lane, keys, hist, cap, w, Kc, st.m, false);
                if constexpr (Mode == 1 && resample_parked_route<T>) parked0 += phi == 0 ? static_cast<std::uint32_t>(before - w.vn) : 0u;
                if constexpr (Mode == 1 && !maxima && resample_parked_early<T>) {  // the early plateau route (above)
                    if (phi == 0 && before >= 29 * U && w.count >= c0 && w.count - c0 <= resample_early_quiet) {
                        if (keys_at_threshold(keys, w.count, hist, lane) >= 32u) {
                            __syncwarp();
                            if (lane == 0) cthr_of(hist) = route_ties;
                            return false;
                        }
                    }
                }
            }
        }
        if (i < n) {  // the phase's last, partial batch
            vec16<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) load_or_neg_inf(v[u], p + u * jump, i + u < n);
#pragma unroll
            for (int u = 0; u < U; ++u) vote_vec<T, Retry>(v[u], idx + u * jump * W, lane, st, keys, hist, list, w);
            if (w.vn + 32 * U > L) {
                [[maybe_unused]] const int before = w.vn;
                drain_list<T, count_room<T, U>, scan16>(list, lane, keys, hist, cap, w, Kc, st.m, false);
                if constexpr (Mode == 1 && resample_parked_route<T>) parked0 += phi == 0 ? static_cast<std::uint32_t>(before - w.vn) : 0u;
            }
        }
        if constexpr (Sampled) {
            if (!maxima && phi == 0) {  // phase 0 is the sample
                end_sample();
                if (lane == 0) *s0_slot = w.count;
                // Ties at the top: the sample's kept keys all hold the row's (read) maximum, so every
                // vector that reaches it would be parked and rejected element by element (all_equal:
                // the whole row, twice over with the in-order re-read). Given up now, to the retry
                // kernel (its vote is aware of indices). Random rows never get here (their sample's
                // top r values differ).
                if constexpr (Mode == 1) {
                    if (thresholded && __reduce_max_sync(full_mask, float_key(st.m)) ==
                                           static_cast<std::uint32_t>(cthr_of(hist) >> 32)) {
                        [[maybe_unused]] std::uint64_t route = route_ties;
                        if constexpr (resample_rising_safe) {  // (above) a maximum first met in the row's second half
                            __syncwarp();
                            std::uint32_t low = 0;  // the kept composites' largest low word: ~(the lowest index)
                            for (int t = lane; t < w.count; t += 32) low = max(low, static_cast<std::uint32_t>(keys[t]));
                            const std::uint32_t first = ~__reduce_max_sync(full_mask, low);
                            if (2 * static_cast<std::int64_t>(first) >= V) route = route_safe;
                            __syncwarp();
                        }
                        if (lane == 0) cthr_of(hist) = route;
                        return false;
                    }
                    if constexpr (resample_parked_route<T>) {  // a plateau at the threshold's value (above)
                        const std::uint32_t voted0 = 32u * ((nunits + stride - 1) / stride);
                        if (thresholded && 10u * parked0 >= 9u * voted0 && keys_at_threshold(keys, w.count, hist, lane) >= 32u) {
                            if (lane == 0) cthr_of(hist) = route_ties;
                            return false;
                        }
                    }
                }
            }
            // After the first phase past the sample: a row whose keys (and parked vectors) grew so
            // little that even 4 times its gain over each of the P - 1 phases after the sample would
            // leave it short of K is given up now (the caller reads it again in order,
            // big_pass_in_order) instead of being read to its end and then again. Random rows gain
            // ~r per phase; rows whose top lies in the sampled steps (stride_trap) or at the row's
            // start (descending) gain nothing. The factor 4: a row whose phases differ (cluster256
            // at fp32 puts its cluster in every other step, so phase 1 gains ~r / 3) must not be
            // given up; the projection alone (factor 1) gave up some of those rows (H100, 1.10x ->
            // 1.25x the random time). A heuristic only: a row kept here ends exact by the final
            // check as before. (Rows of one value, all_equal, still park every vector that reaches
            // the threshold's value, so they are not given up here; see NOTES.md, "topkadv".)
            // H100 (probe, 4096 x 50257 K = 256, us, before -> after): fp32 stride_trap 633 -> 414,
            // descending 611 -> 394; bf16 stride_trap 430 -> 345; random logits within 1%.
            if (Mode == 0 && phi == 1 && thresholded && w.count + w.vn < K) {
                __syncwarp();
                const int s0 = *s0_slot;
                if ((w.count + w.vn - s0) * 4 * (P - 1) < K - s0) return false;
            }
            // Mode 1: a test after every phase past the sample, while the row holds fewer than K: a
            // phase that gained nothing gives the row up (the slot then holds the count after the
            // last phase; it is written only while the buffer holds fewer than K keys, so never over
            // a key). Rows whose top lies in the sampled steps or at the row's start gain nothing in
            // phase 1, rows that rise along the index nothing after phase 1. Not Mode 0's projection
            // (gain x 4 x (P - phi) < K - now): phases differ when the data's period shares a factor
            // with P. fp32 cluster256 at P = 10 has its cluster in every other step; in the rows
            // whose sample holds it (1 in 8: a head of <= 3 elements) the sample's 40 cluster
            // elements leave ~24 of its tail above the threshold, and each phase of odd steps gains
            // ~24 (P(gain <= 5) ~ 3e-4), against ~64 elsewhere. The projection gave up one such row
            // in 4 of 20 seeds (CPU emulation on the suite's inputs, probes/resample_emulation.cpp),
            // and the device agreed seed for seed (H100 GPU-e3cd45d1, 4096 x 50257 K = 256: 405-409
            // us with a row read in order after phase 1, 585.7 us (1.74x the random time) with one
            // run alone in the retry kernel after phase 5, 364-365 us otherwise; with this test all
            // 20 seeds 364.0-366.8 us). A phase of ~24 gains nothing with probability ~2^-24. The
            // other kinds' rows are given up as before (emulation, fp32 K = 256; suite times equal).
            if (Mode == 1 && phi >= 1 && thresholded && w.count + w.vn < K) {
                __syncwarp();
                const int sp = *s0_slot, now = w.count + w.vn;
                if (now <= sp) {
                    if (phi >= 2 && lane == 0) cthr_of(hist) = route_safe;
                    return false;
                }
                __syncwarp();
                if (lane == 0) *s0_slot = now;
            }
        }
    }
    if (Sampled && !maxima && Kc != K) end_sample();  // a row without full steps (the host keeps nfull >= 2 P)
    if constexpr (Runs) {  // the full steps past the last whole run (fewer than U)
        const std::uint32_t first = nunits * R;
        if (first < nfull) {
            vec16<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                load_or_neg_inf(v[u], vrow + (first + u) * 32 + lane, first + u < nfull);
#pragma unroll
            for (int u = 0; u < U; ++u)
                vote_vec<T, Retry>(v[u], hd + ((first + u) * 32 + static_cast<std::uint32_t>(lane)) * W, lane, st, keys,
                                   hist, list, w);
            if (w.vn + 32 * U > L) drain_list<T, count_room<T, U>, scan16>(list, lane, keys, hist, cap, w, Kc, st.m, false);
        }
    }
    const std::uint32_t rem = nvec % 32;
    if (rem > 0) {  // the last partial step (indices above every full step); room was made above
        vec16<T> t;
        const std::uint32_t jv = nfull * 32 + static_cast<std::uint32_t>(lane);
        load_or_neg_inf(t, vrow + jv, static_cast<std::uint32_t>(lane) < rem);
        vote_vec<T, Retry>(t, hd + jv * W, lane, st, keys, hist, list, w);
    }
    if (w.vn > 0) drain_list<T, count_room<T, U>, scan16>(list, lane, keys, hist, cap, w, Kc, st.m, true);
    scalar_range<true>(row, hd + nvec * W, V, lane, st, keys, hist, cap, w, Kc);

    float M, S;
    if (!row_stats(st, M, S, row, V)) {
        topk_detail::warp_write_no_softmax(p_out, i_out, K, lane);
        return true;
    }
    if (Sampled && thresholded && w.count < K) {  // fewer than K above the sample's threshold
        if (Mode == 1 && lane == 0) cthr_of(hist) = route_safe;  // rows that rise along the index
        return false;
    }
    // The list is empty here: its vectors' room serves finish_by_bins as scatter space.
    finish_big_row<T, U, Wide>(static_cast<std::uint32_t>(__cvta_generic_to_shared(keys)), cap,
                      static_cast<std::uint32_t>(__cvta_generic_to_shared(hist)),
                      static_cast<std::uint32_t>(__cvta_generic_to_shared(list.vec)),
                      static_cast<int>(L * sizeof(vec16<T>) / sizeof(std::uint64_t)), w, row, V, K, M, S, p_out, i_out);
    return true;
}

// The in-order pass of a sampling kernel, out of line: it runs only for rows that cannot be sampled
// or whose sample let fewer than K through. Inline, the kernel's 64 registers served two copies of
// the stream loop and spilled (ptxas, per thread, stored / loaded bytes: bf16 268 / 492, fp16
// 108 / 352, fp32 16 / 112); out of line the sampled pass keeps 40 / 52, 20 / 20, 16 / 8 (the
// in-order function 20 / 136, 0 / 64, 0 / 48). H100 (GPU-9b19e0a7, probes/stream_plain.cu, 4096
// rows, std 10, events, median of 3 interleaved rounds; with the 16-bit end by bins below): bf16
// 50257 K = 256 245.3 -> 235.5 us, K = 64 199.5 -> 196.5; fp16 K = 256 232.6 -> 220.3, K = 64
// 196.1 -> 190.7; fp32 K = 256 330.9 -> 328.7, K = 64 317.6 -> 316.1, K = 1024 882.3 -> 864.9;
// bf16 151936 K = 256 524.7 -> 514.2.
// MarkSampled (fused_stream_resample's sampling kernels): a row that had a sampled pass (at least
// 2 P full steps, with the host's P = 5 K / 128 of every sampling launch) and left a route is not
// read here but marked for the retry kernel (its first output index := mark_safe / mark_ties). The
// mark is made here rather than at the kernel's call site: a branch and a store there moved ptxas'
// allocation of the fp32 maxima kernel (spills 28 / 32 -> 52 / 120 bytes).
template <class T, int U, bool MarkSampled = false>
__device__ __noinline__ void big_pass_in_order(const T* row, std::int64_t V, std::uint32_t hd, std::uint32_t nvec,
                                               int K, int cap, std::uint32_t keys_s, std::uint32_t hist_s,
                                               std::uint32_t list_vec_s, std::uint32_t list_idx_s, float* p_out,
                                               std::int32_t* i_out) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if constexpr (MarkSampled) {
        const auto P = static_cast<std::uint32_t>(5 * K / 128);
        __syncwarp();
        const std::uint64_t route = cthr_of(static_cast<unsigned*>(__cvta_shared_to_generic(hist_s)));
        if (P > 1 && nvec / 32 >= 2u * P && route <= route_ties) {
            if (lane == 0) *i_out = route == route_safe ? mark_safe : mark_ties;
            return;
        }
    }
    auto* keys = static_cast<std::uint64_t*>(__cvta_shared_to_generic(keys_s));
    auto* hist = static_cast<unsigned*>(__cvta_shared_to_generic(hist_s));
    const vec_list<T> list{static_cast<vec16<T>*>(__cvta_shared_to_generic(list_vec_s)),
                           static_cast<std::uint32_t*>(__cvta_shared_to_generic(list_idx_s))};
    big_pass<T, U, false, false, 0, false, false, MarkSampled>(row, V, hd, nvec, K, cap, 1, 0, keys, hist, list, p_out,
                                                              i_out, lane);
}

// The K > 32 kernels' shared memory (big, wide and retry kernels), per block: [keys: nwarps x cap]
// [lists: nwarps x L vectors][list indices][bins + cthr per warp]; declares L, keys, list_base,
// list_idx_base, list and hist for the calling warp (needs stream_smem, warp, nwarps and cap). A
// macro, not a function: a __forceinline__ helper returning the pointers, with the same expressions in
// the same order, changed the machine code of 21 of these kernels (nvcc 13.0, sm_90, b829c93), whose
// times were measured with the expressions written in place; the macro keeps them byte-identical.
#define FUSEBENCH_STREAM_BIG_SMEM(T, U)                                                                       \
    constexpr int L = list_cap<U>;                                                                            \
    std::uint64_t* keys = reinterpret_cast<std::uint64_t*>(stream_smem) + static_cast<std::size_t>(warp) * cap; \
    auto* list_base = reinterpret_cast<vec16<T>*>(reinterpret_cast<std::uint64_t*>(stream_smem) +            \
                                                  static_cast<std::size_t>(nwarps) * cap);                    \
    auto* list_idx_base = reinterpret_cast<std::uint32_t*>(list_base + nwarps * L);                           \
    const vec_list<T> list{list_base + warp * L, list_idx_base + warp * L};                                   \
    unsigned* hist = list_idx_base + nwarps * L + warp * (hist_words + 2)

// K > 32. A row of nfull warp steps (32 vectors each) is read in stratified order: steps 0, P, 2P,
// ... first (the sample, 1/P of the row spread evenly over it), then 1, 1 + P, ..., and so on; the
// last partial step and the scalar tail come after. The sample keeps only its top r (and up to r / 2
// more: the r-th key's radix bin whole), and the smallest kept composite becomes the threshold for
// the rest of the row: about r P = 2.5 K to 3.75 K elements of a row pass it (host picks P = 5 K /
// 128, r = 64), against the K (1 + ln(V / cap)) that pass a
// running exact top K (~1,700 at K = 256, V = 50257). Everything below that threshold is dropped,
// which is exact when at least K composites pass it (the final top K then lies above it). A row
// where fewer pass (a sample holding more than r of the top K: about 25.6 of them are expected
// there, so for random rows this is beyond 7 standard deviations; a row built against the order
// can do it) is read again in order without sampling. Candidate vectors are parked in the list and
// drained 32 at a time; compactions keep the K-th key's radix bin (at most K / 2 or a quarter of
// the room above K). ByMaxima (samples of at most maxima_sample_vectors vectors, the host's
// choice): the sample's threshold comes from its vectors' maxima instead (sample_by_maxima).
//
// Block shape: one block per SM (up to 32 warps, as many as its shared memory allows), and the rows
// split evenly over the blocks (block b takes rows [b rows / G, (b + 1) rows / G)). With blocks of
// 4 warps, 4096 rows filled 100 SMs with 32 rows and 32 SMs with 28; an SM streams at about the same
// rate whatever its row count, so the 28-row SMs finished early and the launch waited on the
// others (H100 trace: 323 against 351 us mean row end). Even shares (31 or 32 rows) took fp32 4096 x
// 50257 K = 256 from 379.3 to 365.1 us on the H100, same run. (The K <= 32 kernel keeps its 4-warp
// blocks: there the same change measured 312.3 against 308.8 us.)
// Sampling = false (K with P = 1: no sample) leaves the sampled pass out of the kernel: fewer
// registers wanted, no spills (H200, 4096 x 50257 K = 50: fp32 238.3 against 243.5 us, bf16 203.3
// against 212.9).
// Retry (fused_stream_resample): the sampled pass in Mode 1, and the rows it gives up with a route
// marked for softmax_topk_stream_big_retry_kernel, launched after this one.
template <class T, int U, bool Sampling, bool ByMaxima, bool Retry = false>
__global__ void __launch_bounds__(1024, 1)
    softmax_topk_stream_big_kernel(const T* __restrict__ logits, float* __restrict__ probs,
                                   std::int32_t* __restrict__ indices, std::int64_t rows, std::int64_t V, int K,
                                   int cap, int P, int r_sample) {
    extern __shared__ __align__(16) unsigned char stream_smem[];
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const int nwarps = static_cast<int>(blockDim.x) / 32;
    const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * rows / gridDim.x + warp;
    if (r >= static_cast<std::int64_t>(blockIdx.x + 1) * rows / gridDim.x) return;  // warp-uniform; no block barrier follows

    FUSEBENCH_STREAM_BIG_SMEM(T, U);
    for (int b = lane; b < hist_words; b += 32) hist[b] = 0;

    const T* row = logits + r * V;
    // 32-bit geometry (V < 2^31): fewer registers live across the stream.
    const row_split rs = split_row<T, 128>(row, V);
    const auto hd = static_cast<std::uint32_t>(rs.head);
    const auto nvec = static_cast<std::uint32_t>(rs.nvec);
    float* p_out = probs + r * K;
    std::int32_t* i_out = indices + r * K;
    // The sampled pass needs at least 2 P full steps (the host's P assumes an aligned row; a row that
    // is not element aligned has none and goes in order at once instead of sampling its scalar head).
    if constexpr (Sampling) {
#if FUSEBENCH_STREAM_RETRY_PDL
        if constexpr (Retry) asm volatile("griddepcontrol.launch_dependents;");  // the retry kernel may be placed
#endif
        if (P > 1 && nvec / 32 >= 2u * static_cast<std::uint32_t>(P) &&
            big_pass<T, U, true, ByMaxima, Retry ? 1 : 0>(row, V, hd, nvec, K, cap, P, r_sample, keys, hist, list,
                                                           p_out, i_out, lane))
            return;
        // Retry: a row given up with a route is only marked there, for the retry kernel.
        big_pass_in_order<T, U, Retry>(row, V, hd, nvec, K, cap, static_cast<std::uint32_t>(__cvta_generic_to_shared(keys)),
                                static_cast<std::uint32_t>(__cvta_generic_to_shared(hist)),
                                static_cast<std::uint32_t>(__cvta_generic_to_shared(list.vec)),
                                static_cast<std::uint32_t>(__cvta_generic_to_shared(list.idx)), p_out, i_out);
    } else {
        big_pass<T, U, false>(row, V, hd, nvec, K, cap, P, r_sample, keys, hist, list, p_out, i_out, lane);
    }
}

// fused_stream at K > 256, rows with a sample: softmax_topk_stream_big_kernel's passes (the sample by
// maxima), but each warp takes rows until none is left (block b's warp w: rows b nwarps + w, then
// that plus gridDim.x nwarps, ...) in one block per SM, instead of one row a warp in two rounds of
// blocks, where a block's second-round successor waited for the slowest of its warps. At most
// wide_warps warps a block, so the launch bounds give it up to 128 registers (ptxas: 108-110, no
// spills). H100 (probes/stream_big_params.cu, 4096 x 50257, std 10, the same host parameters, us,
// two rounds; the big kernel -> this one): fp32 K = 1024 461.0 / 462.5 -> 453.1 / 454.2, K = 512
// 400.9 / 400.2 -> 391.5 / 392.7; bf16 K = 1024 416.5 / 416.2 -> 403.6 / 403.3, K = 512 319.0 / 318.5
// -> 304.4 / 303.6; fp16 K = 1024 385.9 / 388.2 -> 381.4 / 381.5, K = 512 301.0 / 301.5 -> 295.6 /
// 294.9. The same kernel held to 64 registers (launch bounds for 2 blocks an SM) was slower than the
// big kernel (fp32 K = 1024 483.6 / 485.0, bf16 455.6 / 454.9); finish_wide's read-back of its copies
// 4 rounds at a time, loads first: within ~1 us (451.6 / 452.0), not kept.
// fp32 (wide_runs): the row's units are runs of wide_u = 4 consecutive steps (2 KB a warp) instead
// of single 512-byte steps P apart, one run a batch, and the next run's loads go out before this one
// is voted on and drained, so a warp has a batch in flight while it works (ncu of the single-step
// kernel, fp32 K = 1024: 31% of its stall samples waited on the stream's loads, 5% on the sample's).
// The sample is every P-th run (its rank from the run count), the steps past the last whole run
// come after the phases. Its rows' ends go through finish_wide<true> (both types). H100
// (GPU-53765fd3, probes/stream_ab.cu, 4096 x 50257, std 10, events, us, two rounds; main -> kept):
// fp32 K = 1024 457.6 / 455.0 -> 412.6 / 412.8, K = 512 394.5 -> 365.7. Suite with finish_wide<true>
// (GPU-21d38e6b, seed 2211, CUPTI medians, main -> kept): fp32 K = 1024 446.5 -> 398.8 / 399.2 us
// (63.8% -> 71.4% of the floor), K = 512 383.4 -> 353.3 (72.8% -> 79.0%). Measured and not kept:
// the next batch's loads in flight with single steps (U = 3: fp32 K = 1024 426.5 / 429.1, U = 4
// 429.3 / 429.0; bf16 K = 1024 404.3 / 408.0 -> 477.6 / 477.6 and 506.9 / 502.5: 16-bit keeps the
// batch of 2 single steps loaded and used at once); runs of 3 (fp32 434.1 / 435.9; bf16 421.6 /
// 422.8; runs of 4 in bf16 454.9 / 454.7); runs of 3 with the next row's sample asked of L2 before
// a row's end (434.1 / 436.1). probes/stream_pattern.cu (the same read orders without the
// selection, 16 warps an SM, fp32): single steps P apart 311.2 us (342.6 with a busy loop standing
// in for the vote), runs of 3 with the next run in flight 301.5 (303.7), in row order 297.4.
constexpr int wide_warps = 16;
#ifndef FUSEBENCH_STREAM_WIDE
#define FUSEBENCH_STREAM_WIDE 1
#endif
// Probe builds may set the fp32 run length / batch (FUSEBENCH_WIDE_U32) or turn runs off
// (FUSEBENCH_WIDE_RUNS32=0: single steps, batches of FUSEBENCH_WIDE_U32).
#ifndef FUSEBENCH_WIDE_U32
#define FUSEBENCH_WIDE_U32 4
#endif
#ifndef FUSEBENCH_WIDE_RUNS32
#define FUSEBENCH_WIDE_RUNS32 1
#endif
// FUSEBENCH_WIDE_U16: the 16-bit batch (single steps loaded together), for probe builds.
#ifndef FUSEBENCH_WIDE_U16
#define FUSEBENCH_WIDE_U16 2
#endif
template <class T> constexpr int wide_u = sizeof(T) == 4 ? FUSEBENCH_WIDE_U32 : FUSEBENCH_WIDE_U16;
template <class T> constexpr bool wide_runs = sizeof(T) == 4 && FUSEBENCH_WIDE_RUNS32 != 0;
template <class T, int U>
__global__ void __launch_bounds__(32 * wide_warps, 1)
    softmax_topk_stream_wide_kernel(const T* __restrict__ logits, float* __restrict__ probs,
                                    std::int32_t* __restrict__ indices, std::int64_t rows, std::int64_t V, int K,
                                    int cap, int P, int r_sample) {
    extern __shared__ __align__(16) unsigned char stream_smem[];
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const int nwarps = static_cast<int>(blockDim.x) / 32;
    FUSEBENCH_STREAM_BIG_SMEM(T, U);
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * nwarps;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * nwarps + warp; r < rows; r += stride) {
        for (int b = lane; b < hist_words; b += 32) hist[b] = 0;
        __syncwarp();
        const T* row = logits + r * V;
        const row_split rs = split_row<T, 128>(row, V);
        const auto hd = static_cast<std::uint32_t>(rs.head);
        const auto nvec = static_cast<std::uint32_t>(rs.nvec);
        float* p_out = probs + r * K;
        std::int32_t* i_out = indices + r * K;
        if (P > 1 && nvec / 32 / (wide_runs<T> ? U : 1) >= 2u * static_cast<std::uint32_t>(P) &&
            big_pass<T, U, true, true, 0, wide_runs<T>, true>(row, V, hd, nvec, K, cap, P, r_sample, keys, hist, list,
                                                               p_out, i_out, lane))
            continue;
        big_pass_in_order<T, U>(row, V, hd, nvec, K, cap, static_cast<std::uint32_t>(__cvta_generic_to_shared(keys)),
                                static_cast<std::uint32_t>(__cvta_generic_to_shared(hist)),
                                static_cast<std::uint32_t>(__cvta_generic_to_shared(list.vec)),
                                static_cast<std::uint32_t>(__cvta_generic_to_shared(list.idx)), p_out, i_out);
    }
}

// fused_stream_resample at K > 32: the rows its sampling kernel gave up with a route are read again
// by a second launch, this kernel, with the same grid and rows per warp: a warp whose row's first
// output index holds mark_safe reads the row with the safe sample (big_pass Mode 2, Sampled: cannot
// fail, its vote aware of indices), mark_ties in order with the vote aware of indices (rows whose
// top ties: after the first batch nothing is parked); every other warp leaves at once. The main
// kernel keeps its stream loop: every form of the safe sample inside it (a second loop iteration,
// a second __noinline__ function, inside big_pass_in_order, as a nested or an indirect call from
// there) moved ptxas' allocation of the sampled kernels into spills (NOTES.md, "topkadv", "retry").
// Launched with programmatic stream serialization: its blocks are placed as the main kernel's leave
// (griddepcontrol.launch_dependents at its start) and wait for the main grid's writes
// (griddepcontrol.wait). On rows that all pass its cost is that wait's end and one load per warp
// (H100: 1-3.5 us, up to 1.6% of random-logit time at K = 64-1024, which is why fused_stream has no
// retry). The rows run in the main kernel's mapping, one per warp; when only some rows of a launch
// are given up they run here after the others, with fewer warps per SM (H100, bf16 posinf, one
// +inf in every other row: 1.62x its random-logit time when those rows came here, ~1.17x read in
// order in the main kernel, so rows without a route stay there).
template <class T, int U, bool Sampled>
__device__ __noinline__ bool big_pass_retry(const T* row, std::int64_t V, std::uint32_t hd, std::uint32_t nvec, int K,
                                            int cap, int P, std::uint32_t keys_s, std::uint32_t hist_s,
                                            std::uint32_t list_vec_s, std::uint32_t list_idx_s, float* p_out,
                                            std::int32_t* i_out) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    auto* keys = static_cast<std::uint64_t*>(__cvta_shared_to_generic(keys_s));
    auto* hist = static_cast<unsigned*>(__cvta_shared_to_generic(hist_s));
    const vec_list<T> list{static_cast<vec16<T>*>(__cvta_shared_to_generic(list_vec_s)),
                           static_cast<std::uint32_t*>(__cvta_shared_to_generic(list_idx_s))};
    return big_pass<T, U, Sampled, false, 2>(row, V, hd, nvec, K, cap, Sampled ? P : 1, K, keys, hist, list, p_out,
                                             i_out, lane);
}

template <class T, int U>
__global__ void __launch_bounds__(1024, 1)
    softmax_topk_stream_big_retry_kernel(const T* __restrict__ logits, float* __restrict__ probs,
                                         std::int32_t* __restrict__ indices, std::int64_t rows, std::int64_t V, int K,
                                         int cap, int P) {
    extern __shared__ __align__(16) unsigned char stream_smem[];
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const int nwarps = static_cast<int>(blockDim.x) / 32;
    const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * rows / gridDim.x + warp;
    if (r >= static_cast<std::int64_t>(blockIdx.x + 1) * rows / gridDim.x) return;
#if FUSEBENCH_STREAM_RETRY_PDL
    asm volatile("griddepcontrol.wait;" ::: "memory");  // the main kernel's writes are visible
#endif
    float* p_out = probs + r * K;
    std::int32_t* i_out = indices + r * K;
    const std::int32_t mark = *static_cast<volatile std::int32_t*>(i_out);
    if (mark != mark_safe && mark != mark_ties) return;  // warp-uniform

    FUSEBENCH_STREAM_BIG_SMEM(T, U);
    for (int b = lane; b < hist_words; b += 32) hist[b] = 0;
    __syncwarp();  // every lane has read the mark before the row's writes

    const T* row = logits + r * V;
    const row_split rs = split_row<T, 128>(row, V);
    const auto hd = static_cast<std::uint32_t>(rs.head);
    const auto nvec = static_cast<std::uint32_t>(rs.nvec);
    const auto keys_s = static_cast<std::uint32_t>(__cvta_generic_to_shared(keys));
    const auto hist_s = static_cast<std::uint32_t>(__cvta_generic_to_shared(hist));
    const auto vec_s = static_cast<std::uint32_t>(__cvta_generic_to_shared(list.vec));
    const auto idx_s = static_cast<std::uint32_t>(__cvta_generic_to_shared(list.idx));
    // Each pass out of line: inline, the two passes shared the kernel's 64 registers (ptxas, bf16:
    // 318 / 556 bytes of spill stores / loads).
    if (mark == mark_ties) {
        big_pass_retry<T, U, false>(row, V, hd, nvec, K, cap, P, keys_s, hist_s, vec_s, idx_s, p_out, i_out);
        return;
    }
    if (big_pass_retry<T, U, true>(row, V, hd, nvec, K, cap, P, keys_s, hist_s, vec_s, idx_s, p_out, i_out)) return;
    big_pass_in_order<T, U>(row, V, hd, nvec, K, cap, keys_s, hist_s, vec_s, idx_s, p_out, i_out);  // not reached
}
#undef FUSEBENCH_STREAM_BIG_SMEM  // the three K > 32 kernels above are its only users

int kpad_of(std::int64_t K) {
    int p = 32;
    while (p < K) p <<= 1;
    return p;
}

// K > 32: the sample keeps its top sample_rank, and 1 / P of the row is the sample, P = 5 K / 128:
// the sample then holds K / P ~ 25.6 of the row's top K on average, and the threshold lets about
// sample_rank P = 2.5 K elements of a row through.
constexpr int sample_rank = 64;
// Samples of at most this many vectors (32 per warp step of the sample) take sample_by_maxima; larger
// ones park and drain their candidates. Chosen from one H100 measurement (GPU-9b19e0a7, 4096 rows,
// std 10; us, the parked sample -> by maxima): 640 vectors (bf16 / fp16 50257 K = 256) 235.5 ->
// 220.6 / 220.3 -> 207.1, 320 (fp32 50257 K = 1024) 864.9 -> 853.9; 1280 (fp32 50257 K = 256)
// 328.7 -> 335.9 and 1920 (bf16 151936 K = 256) 514.2 -> 519.5 were slower, and so was every
// K = 64 (P = 2: 3136 and 6272 vectors, G = 2 and 4 per group). With this rule, against the parked
// sample (another H100, GPU-4fe26708, same probe; us): bf16 50257 K = 256 235.2 -> 219.7, fp16
// 221.0 -> 207.1, bf16 32000 K = 256 164.7 -> 151.7, fp32 50257 K = 512 639.4 -> 621.7, K = 1024
// 863.4 -> 852.9; the other cases take the parked sample (within 1 us).
constexpr int maxima_sample_vectors = 640;
int sample_stride(std::int64_t K, std::int64_t nfull) {
    const auto p = static_cast<int>(5 * K / 128);
    return p >= 2 && nfull >= 2 * static_cast<std::int64_t>(p) ? p : 1;
}
// K > 256: a sample of 1 / 10 of the row (wide_sample_stride) taken by maxima whatever its size, whose
// rank r is the expected number of the row's top K in it, K f (f: the share of the row's full steps
// sampled, ceil(nfull / P) / nfull <= 1 / P + 1 / nfull), plus 7 standard deviations of that number
// (binomial: K f (1 - f)), so a random row fails (fewer than K elements of it at or above the r-th
// largest sampled vector maximum) about as rarely as with P = 5 K / 128 and r = 64 (7.7 deviations).
// P = 10 is at or below the 5 K / 128 that big_pass_in_order assumes when it marks rows for the retry
// kernel (so no row it marks went without a sampled pass). H100 (probes/stream_big_params.cu, 4096 x
// 50257, std 10, us, softmax_topk_stream_big_kernel with the key room below, r fixed at 170 / 100):
// fp32 K = 1024, P = 40 r = 64 495.6-496.9 -> P = 10 r = 170 458.2-459.2 (P = 20 r = 100 467.6-467.7,
// P = 8 r = 200 462.7-463.4, P = 5 r = 300 478.3-479.4; the parked sample at P = 10 / 5 / 4:
// 470.4-472.8 / 477.0-477.4 / 487.9-489.0); fp32 K = 512 (P = 20 r = 64) 409.9-410.6 -> P = 10 r = 100
// 399.4-400.3 (P = 5 r = 165 422.4-423.2); bf16 K = 1024 504.0-506.5 -> 406.6-407.8 (P = 5 r = 300
// 405.3-406.0). A random fp32 K = 1024 row then inserts ~1,690 composites instead of ~2,060 (timeline).
// Larger samples cost more than they save: the sample phase reads its steps at about the stream's
// rate and its end (bins over the maxima, the selected groups read again) costs ~10 us a row.
constexpr int wide_sample_stride = 10;
int wide_sample_rank(std::int64_t K, int P, std::int64_t nfull) {
    const double f = std::min(1.0, 1.0 / P + 1.0 / static_cast<double>(std::max<std::int64_t>(nfull, 1)));
    const double m = static_cast<double>(K) * f;
    return std::max(sample_rank, static_cast<int>(std::ceil(m + 7.0 * std::sqrt(m * (1.0 - f)))));
}

// Per kernel: the carveout once (shared memory before L1: the stream has no reuse, the buffers are
// what limits residency; a hint, the launch reports real failures), and the dynamic shared memory
// limit when a launch needs more than 48 KB (it depends on K).
template <auto Kernel>
void set_smem(std::size_t smem) {
    static const bool carveout = cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                                      cudaSharedmemCarveoutMaxShared) == cudaSuccess;
    (void)carveout;
    if (smem > 48 * 1024) {
        const cudaError_t e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        if (e != cudaSuccess) {
            throw std::runtime_error(std::string("cudaFuncSetAttribute(softmax_topk_stream_kernel): ") +
                                     cudaGetErrorName(e));
        }
    }
}

// The largest K that goes to the K <= 32 kernel (larger K: the K > 32 kernel); at most 32; on a
// device with fast memory fused_stream's 16-bit rows go there only up to K = 15
// (stream_small_max_k below). FUSEBENCH_STREAM_SMALL_MAX_K fixes it for every device and type in
// probe builds (probes/stream_k.cu).
#ifdef FUSEBENCH_STREAM_SMALL_MAX_K
#define FUSEBENCH_STREAM_SMALL_MAX_K_FIXED 1
#else
#define FUSEBENCH_STREAM_SMALL_MAX_K 32
#endif
static_assert(FUSEBENCH_STREAM_SMALL_MAX_K >= 1 && FUSEBENCH_STREAM_SMALL_MAX_K <= 32);
// fused_stream's K <= 32 kernel keeps this many keys of room above kpad: its compactions keep up to
// kpad + slack keys instead of kpad. Without it, at K = 32 (kpad = K) every compaction kept exactly
// K, so any candidate after one made the next batch compact again (an exact radix select per batch
// with a candidate). H100 (GPU-7ba55e45, probes/stream_k.cu, 4096 rows, std 10, events, us, slack 0 ->
// 16): bf16 50257 K = 32 405.4 -> 194.5, fp16 319.8 -> 185.7, fp32 383.1 -> 288.4, bf16 151936 773.0 ->
// 443.1, bf16 32000 323.5 -> 156.8; bf16 50257 K = 24 193.5 -> 177.1, K = 16 172.1 -> 169.7, K = 10
// 166.8 -> 164.4; fp32 50257 K = 16 282.3 -> 282.7, bf16 151936 K = 16 427.8 -> 424.8 (the same indices).
// 16 is the most that keeps 8 blocks an SM in 16-bit (4 x ((32 + 16 + 768) x 8 + 512) = 28,160
// bytes a block). fused_stream_resample takes the same slack (its dense-batch test, count > cap / 2,
// moves by 8 keys of ~800): without it, its K = 32 ran at 31.7% (bf16) / 42.0% (fp16) / 69.4% (fp32)
// of the floor on H100 GPU-0d52a412 (kernels/softmax_topk/NOTES.md, "The K sweep").
// FUSEBENCH_STREAM_SMALL_SLACK overrides it in probe builds.
#ifndef FUSEBENCH_STREAM_SMALL_SLACK
#define FUSEBENCH_STREAM_SMALL_SLACK 16
#endif

// Whether the device's peak DRAM bandwidth (kernels/common/launch_check.hpp) is at least 4 TB/s:
// H200 (3201 MHz x 6016 bits = 4.81 TB/s) yes, H100 SXM (2619 MHz x 5120 bits = 3.35 TB/s) no; a
// device that reports neither counts as no.
bool stream_fast_memory() {
    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    return cached_peak_dram_gbps(dev) >= 4000;
}

// Two choices of the K <= 32 kernel follow stream_fast_memory, each measured both ways on an H200 only
// and kept for it alone (kernels/softmax_topk/NOTES.md, "The K <= 32 L2 prefetch on an H200", and
// kernels/softmax_topk/NOTES.md, "The 16-bit stream on the H200"):
// - its L2 prefetch one batch ahead (PF = 1) unless the memory is fast: H100 SXM (two boards)
//   1.4-4.3% faster with it on every case (probes/l2pf_ab.sh, 4096 rows, K = 10, events, medians of
//   three interleaved rounds); H200 (GPU-93e77610) 2.7-8.6% slower on fp32 and bf16 151936, within 1%
//   elsewhere;
// - Lean (consume_vec_lean) in bf16 where it is fast (lean_type): H200 GPU-a4ca70f0, ncu of one launch
//   each (clocks left alone), bf16 4096 x 50257 K = 10: 150.3 -> 144.4 us, 92.8 -> 82.9 M warp
//   instructions; fp32 K = 10 with it 219.2 -> 226.3 us (+6.3% instructions: W = 4 ballots are
//   cheap), so fp32 keeps append_elems; fp16 passed the GPU tests with it but was not timed cleanly
//   (kernels/softmax_topk/NOTES.md, "The 16-bit stream on the H200"), so it keeps its kernel until it is (probes/lean_ab.sh).
// - elsewhere (the H100, PF = 1) Lean in fused_stream's bf16 rows with 12 <= K and V <= 65536
//   (stream_lean): H100 GPU-b208df0d (probes/stream_k.cu built with and without
//   FUSEBENCH_STREAM_LEAN=1, 4096 rows, std 10, events, two interleaved runs of two rounds;
//   kernels/softmax_topk/NOTES.md, "16-bit K = 10..32 on the H100"), Lean / without, bf16 V 32000:
//   K = 10 / 16 / 24 / 32 0.985 / 0.965 / 0.935 / 0.911; V 50257: 1.002 / 0.982 / 0.972 / 0.950;
//   V 151936: 0.997-1.006 at every K (so not there); fp16 within -4% .. +1.2%, not moved; K = 10
//   (the default run's bf16 rows) keeps the kernel it had. fused_stream_resample keeps Lean off.
// FUSEBENCH_STREAM_L2PF / FUSEBENCH_STREAM_LEAN fix either in probe builds.
template <class T> constexpr bool lean_type = std::is_same_v<T, __nv_bfloat16>;

// Whether these rows run the K <= 32 kernel with Lean (the choices above).
template <class T, bool Resample> bool stream_lean(const softmax_topk_args& a) {
    if constexpr (!lean_type<T>) {
        return false;
    } else {
        return stream_fast_memory() || (!Resample && a.K >= 12 && a.V <= 65536);
    }
}

// The largest K that fused_stream (not _resample) sends to the K <= 32 kernel. On fast memory, 16-bit
// rows with K >= 16 run faster in the K > 32 kernel: an H200 (probes/stream_k.cu, 4096 rows,
// std 10, events, two rounds of two; kernels/softmax_topk/NOTES.md "Routing 16-bit K >= 16 to the
// K > 32 kernel on an H200") bf16 V 50257 K = 16 / 24 / 32 159.6 / 175.1 / 192.8 -> 146.4 / 150.2 /
// 153.6 us, V 32000 -6 to -29%, fp16 alike; bf16 V 151936 K = 16 +1.0% (the one case slower); at
// K = 10 and 12 the K <= 32 kernel stays ahead at V 32000 and 151936. fp32 within 2% either way, not
// moved. fused_stream_resample keeps its K <= 32 kernel (its order-robust resample is that kernel's).
// Elsewhere (the H100) the crossing depends on the row length: H100 GPU-b208df0d, same probe, K > 32
// kernel / K <= 32 kernel (Lean where stream_lean takes it), us: bf16 V 32000 K = 16 / 20
// / 24 / 32 129.8 / 124.0 / 123.0 / 126.5 against 118.8 / 124.5 / 128.0 / 142.4; bf16 V 50257 K = 24 /
// 28 / 32 180.4 / 181.9 / 182.5 against 176.1 / 180.4 / 186.4; fp16 V 32000 K = 16 / 20 123.8 / 119.4
// against 117.8 / 122.5; fp16 V 50257 K = 24 / 28 / 32 174.3 / 175.4 / 177.2 against 174.5 / 180.2 /
// 187.9; V 151936 the K <= 32 kernel ahead at every K (1.9-4.8%). So 16-bit rows with V <= 32768 go to
// the K > 32 kernel from K = 20, V <= 65536 from K = 31 (bf16; K = 29 / 30 unmeasured, counted with
// 28) or K = 28 (fp16), longer rows never; fp32 stays (not measured here).
template <class T, bool Resample>
int stream_small_max_k(std::int64_t V) {
#ifdef FUSEBENCH_STREAM_SMALL_MAX_K_FIXED
    (void)V;
    return FUSEBENCH_STREAM_SMALL_MAX_K;
#else
    if constexpr (sizeof(T) == 2 && !Resample) {
        if (stream_fast_memory()) return 15;
        if (V <= 32768) return 19;
        if (V <= 65536) return lean_type<T> ? 30 : 27;
    }
    return FUSEBENCH_STREAM_SMALL_MAX_K;
#endif
}

// FUSEBENCH_STREAM_WHOLE_SM (1 in the library; 0 in probe builds that time the old layout): one block
// of 32 warps an SM instead of 8 blocks of stream_warps when the rows make one wave of (nearly) 32 rows
// on every SM, at most 4 SMs without a block (4096-4224 rows on a 132-SM board: the suite's 4096-row
// cases). The rows of one block end together, those of different blocks on one SM do not (the timeline
// probe's balance report, H100: 30-41 us apart in 16-bit at 4096 rows against 8-13 within a block), so
// one block an SM ends its rows closer together. knob_ab.sh, 4096
// rows (128 blocks on 132 SMs), K = 10 unless named, 32 against 4 warps a block, us: H200 GPU-38d1a32f
// bf16 V 50257 141.4 -> 134.1, K = 12 144.5 -> 134.5, V 32000 101.2 -> 92.5, V 151936 325.7 -> 313.1,
// fp16 140.5 -> 133.5, fp32 222.1 -> 218.8; H100 GPU-03e2b425 bf16 168.2 -> 166.3, K = 16 170.1 -> 165.7,
// V 32000 115.6 -> 111.6, V 151936 432.6 -> 428.4, fp16 164.7 -> 163.3, fp32 291.8 -> 291.5; H100
// GPU-dfa473fb bf16 167.7 -> 164.8, V 32000 116.4 -> 111.4, ascending rows 1845.6 -> 1658.9
// (kernels/softmax_topk/NOTES.md, "Rows of one SM end far apart"). Other row counts keep 4 warps a block
// (not measured: fewer rows would leave SMs idle, more would make waves of blocks that wait for their
// slowest row). FUSEBENCH_STREAM_WARPS fixes the block for every row count in probe builds.
#ifndef FUSEBENCH_STREAM_WHOLE_SM
#define FUSEBENCH_STREAM_WHOLE_SM 1
#endif
constexpr bool stream_whole_sm_on = FUSEBENCH_STREAM_WHOLE_SM && !FUSEBENCH_STREAM_WARPS_FIXED;
// Whether rows make such a wave on this device and 32 warps' shared memory fits a block.
bool stream_whole_sm_blocks(std::int64_t rows, std::size_t warp_smem) {
    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    const std::int64_t sms = cached_sm_count(dev);
    if (rows > 32 * sms || rows + 4 * 32 < 32 * sms) return false;
    return 32 * warp_smem <= static_cast<std::size_t>(cached_max_smem_optin(dev));
}

template <class T, int UK, int UB, bool Resample>
void launch_typed(const softmax_topk_args& a, cudaStream_t stream) {
    constexpr int step = 32 * vec16<T>::n;  // elements of one vector per lane across the warp
    const int kpad = kpad_of(a.K);
    const auto K = static_cast<int>(a.K);
    if (a.K <= stream_small_max_k<T, Resample>(a.V)) {
        // Room for the kept K (rounded up to a power of two for the final sort), the slack above it
        // and one batch of candidates (compactions only at batch starts; the seeded threshold keeps
        // them rare).
        const int cap = kpad + FUSEBENCH_STREAM_SMALL_SLACK + UK * step;
        const std::size_t warp_smem = static_cast<std::size_t>(cap) * 8 + hist_words * 4;
        const bool whole_sm = stream_whole_sm_on && stream_whole_sm_blocks(a.rows, warp_smem);
        const auto run = [&](auto pf, auto lean) {
            constexpr std::uint32_t PF = decltype(pf)::value;
            constexpr bool Lean = decltype(lean)::value;
            const auto go = [&](auto nw) {
                constexpr int NW = decltype(nw)::value;
                const auto blocks = static_cast<unsigned>((a.rows + NW - 1) / NW);
                const std::size_t smem = NW * warp_smem;
                set_smem<softmax_topk_stream_kernel<T, UK, Resample, PF, Lean, NW>>(smem);
                softmax_topk_stream_kernel<T, UK, Resample, PF, Lean, NW><<<blocks, 32 * NW, smem, stream>>>(
                    static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices, a.rows, a.V, K, cap);
            };
            if constexpr (stream_whole_sm_on) {
                if (whole_sm) {
                    go(std::integral_constant<int, 32>{});
                    return;
                }
            }
            go(std::integral_constant<int, stream_warps>{});
        };
        using pf_on = std::integral_constant<std::uint32_t, 1>;
        using pf_off = std::integral_constant<std::uint32_t, 0>;
#if defined(FUSEBENCH_STREAM_L2PF) || defined(FUSEBENCH_STREAM_LEAN)
        // Probe builds: a fixed knob, the other one per device.
        const auto with_pf = [&](auto lean) {
#ifdef FUSEBENCH_STREAM_L2PF
            run(std::integral_constant<std::uint32_t, FUSEBENCH_STREAM_L2PF>{}, lean);
#else
            if (stream_fast_memory()) run(pf_off{}, lean); else run(pf_on{}, lean);
#endif
        };
#ifdef FUSEBENCH_STREAM_LEAN
        with_pf(std::bool_constant<FUSEBENCH_STREAM_LEAN != 0>{});
#else
        if (stream_lean<T, Resample>(a)) with_pf(std::true_type{}); else with_pf(std::false_type{});
#endif
#else
        // The library: only the combinations a device takes are instantiated (the probe form above
        // would build all four): fast memory PF = 0 with Lean by type; elsewhere PF = 1, with Lean
        // only in fused_stream's bf16 kernels (stream_lean decides per launch).
        if (stream_fast_memory()) {
            run(pf_off{}, std::bool_constant<lean_type<T>>{});
        } else if constexpr (lean_type<T> && !Resample) {
            if (stream_lean<T, Resample>(a)) run(pf_on{}, std::true_type{}); else run(pf_on{}, std::false_type{});
        } else {
            run(pf_on{}, std::false_type{});
        }
#endif
        check_launch("softmax_topk_stream_kernel");
        return;
    }
    // K > 32: the deferred vector list (16 bytes and a 4-byte index per entry) beside the keys, which
    // get room for one drain round (32 vectors) above kpad and as much more as the budget left by
    // the list allows (fewer compactions).
    const int list_bytes = list_cap<UB> * (16 + 4);
    const int budget = keys_budget - list_bytes / 8;
    int cap = kpad + (kpad + step < budget ? budget - kpad : step);
    std::size_t per_warp = static_cast<std::size_t>(cap) * 8 + list_bytes + (hist_words + 2) * 4;
    // One block per SM: as many warps (rows) as its shared memory holds, at most 32 (64 registers).
    int dev = 0, sms = 0, smem_optin = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    check_call(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
               "cudaDeviceGetAttribute");
    int nwarps = static_cast<int>(std::min<std::size_t>(32, static_cast<std::size_t>(smem_optin) / per_warp));
    if (nwarps < 1) throw std::runtime_error("softmax_topk fused_stream: K too large for this GPU's shared memory");
    // K > 256: shared memory holds fewer rows than 4096 / 132 an SM (fp32 K = 512: 28, K = 1024: 18), so
    // the rows take two rounds of blocks; they are split evenly between the rounds (16 warps a block
    // for 4096 rows) rather than a full first round and a short second one: a warp's row takes about
    // as long whatever the round holds, so a short round costs a whole row time. H100 (GPU-00f47668,
    // stream_plain, 4096 x 50257, std 10, us): fp32 K = 1024 697.0 -> 673.3, bf16 817.0 -> 782.8,
    // fp32 K = 512 532.4 -> 438.2, bf16 486.8 -> 420.5, fp16 441.1 -> 391.0 (at most 20 warps a block
    // instead: fp32 K = 512 460.5, K = 1024 697.8).
    if (a.K > 256) {
        const std::int64_t per_round = static_cast<std::int64_t>(sms) * nwarps;
        if (a.rows > per_round) {
            const std::int64_t rounds = (a.rows + per_round - 1) / per_round;
            nwarps = static_cast<int>((a.rows + sms * rounds - 1) / (sms * rounds));
        }
    }
    // K > 256: the key room then takes the shared memory that the warps of a block leave (fp32 K = 512
    // and 1024 at 16 warps: 1,431 keys instead of 640 / 1,152). At cap = K + 32 W every drain round that
    // did not fit compacted exactly to K (fp32 K = 1024: 9.2 compactions a row, each an exact select
    // over ~1,150 keys); with ~400 keys of room they are relaxed and ~1 a row. H100
    // (probes/stream_big_params.cu, 4096 x 50257, std 10, the sample as before (P = 5 K / 128, r = 64), us): fp32
    // K = 1024 671.0-676.2 -> 495.6-496.9, K = 512 437.0-437.3 -> 409.9-410.6, bf16 K = 1024 (1,511 keys)
    // 783.3-783.5 -> 504.0-506.5. At most 4 kpad keys (small launches: few warps a block).
    // fused_stream's sampled rows at K > 256 go to softmax_topk_stream_wide_kernel (at most wide_warps
    // warps a block; FUSEBENCH_STREAM_WIDE=0 in probe builds: the big kernel instead).
    const bool wide = FUSEBENCH_STREAM_WIDE && !Resample && a.K > 256 &&
                      (a.V / step - 2) / (wide_runs<T> ? wide_u<T> : 1) >= 2 * wide_sample_stride;
    if (wide) nwarps = std::min(nwarps, wide_warps);
    if (a.K > 256) {
        const std::size_t fixed = per_warp - static_cast<std::size_t>(cap) * 8;
        const std::size_t room = (static_cast<std::size_t>(smem_optin) / nwarps - fixed) / 8 / 2 * 2;
        cap = static_cast<int>(std::max<std::size_t>(cap, std::min<std::size_t>(room, 4 * static_cast<std::size_t>(kpad))));
        per_warp = fixed + static_cast<std::size_t>(cap) * 8;
    }
    const std::size_t smem = static_cast<std::size_t>(nwarps) * per_warp;
    const auto grid = static_cast<unsigned>(std::max<std::int64_t>(std::min<std::int64_t>(sms, a.rows),
                                                                   (a.rows + nwarps - 1) / nwarps));
    // Full warp steps of a row (an upper bound: the row's head may take a few elements).
    const std::int64_t nfull_max = a.V / (static_cast<std::int64_t>(step));  // the device's is at least this - 1
    const int P = a.K <= 256 ? sample_stride(a.K, nfull_max - 2) : nfull_max - 2 >= 2 * wide_sample_stride ? wide_sample_stride : 1;
    const int r_sample = a.K > 256 ? wide_sample_rank(a.K, P, nfull_max - 1) : sample_rank;
    // Without a sample (P = 1) the kernel leaves the sampled pass out; a sample of at most
    // maxima_sample_vectors vectors goes through sample_by_maxima.
    const auto launch = [&](auto sampling, auto by_maxima) {
        constexpr bool S = decltype(sampling)::value, M = decltype(by_maxima)::value;
        constexpr bool R = S && Resample;
        set_smem<softmax_topk_stream_big_kernel<T, UB, S, M, R>>(smem);
        softmax_topk_stream_big_kernel<T, UB, S, M, R><<<grid, 32 * nwarps, smem, stream>>>(
            static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices, a.rows, a.V, K, cap, P, r_sample);
        if constexpr (R) {  // the rows it gave up (softmax_topk_stream_big_retry_kernel)
            check_launch("softmax_topk_stream_big_kernel");
            set_smem<softmax_topk_stream_big_retry_kernel<T, UB>>(smem);
            cudaLaunchConfig_t cfg{};
            cfg.gridDim = dim3(grid);
            cfg.blockDim = dim3(32 * static_cast<unsigned>(nwarps));
            cfg.dynamicSmemBytes = smem;
            cfg.stream = stream;
#if FUSEBENCH_STREAM_RETRY_PDL
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attr[0].val.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
#endif
            check_call(cudaLaunchKernelEx(&cfg, softmax_topk_stream_big_retry_kernel<T, UB>,
                                          static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices, a.rows, a.V, K,
                                          cap, P),
                       "softmax_topk_stream_big_retry_kernel");
        }
    };
    if constexpr (!count_room<T, UB>) {  // the 16-bit U = big16_u launch is K <= 256 only: never wide
        if (wide) {
            // The wide kernel's own batch (wide_u): its list, and so the key room, follow from it.
            constexpr int UW = wide_u<T>;
            const std::size_t fixed_w = static_cast<std::size_t>(list_cap<UW>) * (16 + 4) + (hist_words + 2) * 4;
            const std::size_t room_w = (static_cast<std::size_t>(smem_optin) / nwarps - fixed_w) / 8 / 2 * 2;
            const int cap_w = static_cast<int>(std::min<std::size_t>(room_w, 4 * static_cast<std::size_t>(kpad)));
            if (cap_w < K + 32 * vec16<T>::n) throw std::runtime_error("softmax_topk fused_stream: no key room for K");
            const std::size_t smem_w = static_cast<std::size_t>(nwarps) * (fixed_w + static_cast<std::size_t>(cap_w) * 8);
            set_smem<softmax_topk_stream_wide_kernel<T, UW>>(smem_w);
            const auto grid_w = static_cast<unsigned>(std::min<std::int64_t>(sms, (a.rows + nwarps - 1) / nwarps));
            softmax_topk_stream_wide_kernel<T, UW><<<grid_w, 32 * nwarps, smem_w, stream>>>(
                static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices, a.rows, a.V, K, cap_w, P,
                wide_runs<T> ? wide_sample_rank(a.K, P, (nfull_max - 1) / UW) : r_sample);
            check_launch("softmax_topk_stream_wide_kernel");
            return;
        }
    }
    if (P > 1 && (a.K > 256 || (nfull_max + P - 1) / P * 32 <= maxima_sample_vectors)) {
        launch(std::true_type{}, std::true_type{});
    } else if (P > 1) {
        launch(std::true_type{}, std::false_type{});
    } else {
        launch(std::false_type{}, std::false_type{});
    }
    check_launch("softmax_topk_stream_big_kernel");
}

}  // namespace

namespace {
// 16-bit K in (32, 256]: U = big16_u in fused_stream (fused_stream_resample keeps 2).
template <class T, bool Resample> void launch_16bit(const softmax_topk_args& a, cudaStream_t stream) {
    if constexpr (!Resample) {
        if (a.K <= 256) {
            launch_typed<T, 3, big16_u, Resample>(a, stream);
            return;
        }
    }
    launch_typed<T, 3, 2, Resample>(a, stream);
}

template <bool Resample> void launch_stream(const softmax_topk_args& a, cudaStream_t stream, const char* what) {
    topk_detail::validate(a, softmax_topk_max_k, what);
    if (a.rows == 0) return;
    // Vectors per lane per batch for K <= 32 (rolling) and K > 32 (loaded together). H200 (4096
    // rows, K = 10): fp32 V = 50257 U = 2 224.8 us, 3 220.4, 4 220.2 (spilling); bf16 V = 151936
    // U = 2 365.2 us, 3 350.0 (with 16-bit bins: at 1 KB of bins per warp U = 3 fit only 7 blocks per
    // SM, 446.7 us). K > 32 (H100, fp32 V = 50257 K = 256): U = 2 386.0 us, 3 380.9, 4 398.7; bf16
    // U = 1 365.8, 2 328.5 (U = 3 would leave too little shared memory for the keys at 8 blocks per
    // SM; with one block per SM it fits, and fused_stream's 16-bit K <= 256 takes it: big16_u).
    switch (a.type) {
        case elem::f32: launch_typed<float, 3, 3, Resample>(a, stream); break;
        case elem::f16: launch_16bit<__half, Resample>(a, stream); break;
        case elem::bf16: launch_16bit<__nv_bfloat16, Resample>(a, stream); break;
    }
}
}  // namespace

void launch_softmax_topk_fused_stream(const softmax_topk_args& a, cudaStream_t stream) {
    launch_stream<false>(a, stream, "softmax_topk fused_stream");
}

void launch_softmax_topk_fused_stream_resample(const softmax_topk_args& a, cudaStream_t stream) {
    launch_stream<true>(a, stream, "softmax_topk fused_stream_resample");
}

}  // namespace fusebench::kernels
