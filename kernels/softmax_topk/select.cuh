// Device building blocks shared by the softmax + top-k kernels: order-preserving keys, 64-bit
// (value, -index) composites, a block-wide radix select, a block bitonic sort, and host-side
// argument and launch checks.
#pragma once

#include "kernels/common/launch_check.hpp"
#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusebench::kernels::topk_detail {

constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / 32;
constexpr unsigned full_mask = 0xFFFFFFFFu;
constexpr float log2e = 1.4426950408889634f;

// Order-preserving map: a > b as IEEE floats iff key(a) > key(b). -0 is folded onto +0 first
// because equal logits must tie (and then order by index); positive NaN lands above +inf.
__device__ __forceinline__ std::uint32_t float_key(float x) {
    const std::uint32_t b = __float_as_uint(x + 0.0f);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ float key_float(std::uint32_t k) {
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
}

// Unique per element: larger value first, then lower index first (the index is stored inverted).
__device__ __forceinline__ std::uint64_t composite(std::uint32_t key, std::uint32_t index) {
    return (static_cast<std::uint64_t>(key) << 32) | static_cast<std::uint32_t>(~index);
}

__device__ __forceinline__ std::uint32_t composite_index(std::uint64_t c) {
    return ~static_cast<std::uint32_t>(c);
}

__device__ __forceinline__ float composite_value(std::uint64_t c) {
    return key_float(static_cast<std::uint32_t>(c >> 32));
}

// 2^x on the special-function unit; fp32 accuracy (about 2 ulp) is all the sum needs.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// A lane's running sum of many terms, compensated (Kahan): s carries the sum, k what the last adds lost (the
// sum is s - k). A plain float sum of n equal terms drifts by up to ~n 2^-24 of itself, one rounding each add
// in the same direction: rows of 50256 bf16 logits with a plateau of equal values below the max (about 1570
// adds a lane) gave probabilities 1.1e-5 off their fp64 value in fused_stream and fused_bound (H100, session l,
// the test "fused_bound: rising, plateaued, ..."), beyond the suite's 1e-5. With the compensation the error no
// longer grows with the count (A/B against the plain sum: NOTES "Session l"; the probe knob of that A/B,
// FUSEBENCH_STREAM_KAHAN, is at 1faa3d8).
__device__ __forceinline__ void kahan_add(float& s, float& k, float v) {
    const float y = v - k;
    const float t = s + y;
    k = (t - s) - y;
    s = t;
}

// The warp's inclusive prefix sum of v (lane order).
__device__ __forceinline__ unsigned warp_inclusive_sum(unsigned v, int lane) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned t = __shfl_up_sync(full_mask, v, o);
        if (lane >= o) v += t;
    }
    return v;
}

// Block-wide max and sum over block_threads threads (warp shuffles, then the warp partials through
// `scratch`, warps_per_block floats); every thread gets the result.
__device__ __forceinline__ float block_reduce_max(float v, float* scratch) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = fmaxf(v, __shfl_xor_sync(full_mask, v, d));
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = scratch[0];
#pragma unroll
    for (int w = 1; w < warps_per_block; ++w) r = fmaxf(r, scratch[w]);
    __syncthreads();
    return r;
}

__device__ __forceinline__ float block_reduce_sum(float v, float* scratch) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(full_mask, v, d);
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = 0;
#pragma unroll
    for (int w = 0; w < warps_per_block; ++w) r += scratch[w];
    __syncthreads();
    return r;
}

// Online softmax state (running max m, sum of exp(x - m)) merged pairwise. A state with s == 0
// contributes nothing (this also avoids exp(-inf - -inf) = NaN); a NaN sum stays NaN.
__device__ __forceinline__ void merge_max_sum(float& m, float& s, float m2, float s2) {
    const float M = fmaxf(m, m2);
    const float a = s == 0.0f ? 0.0f : s * fast_exp2((m - M) * log2e);
    const float b = s2 == 0.0f ? 0.0f : s2 * fast_exp2((m2 - M) * log2e);
    m = M;
    s = a + b;
}

// The histogram must be all zero between selects (the scan warp clears each bin it reads).
struct select_smem {
    unsigned hist[256];
    unsigned digit, above, in_bin;
};

__device__ __forceinline__ void clear_select_smem(select_smem& sm) {
    for (int b = threadIdx.x; b < 256; b += block_threads) sm.hist[b] = 0;
}

// Adds one to bin `bin` for each active lane; lanes of a warp that hit the same bin share one
// atomic (float keys crowd into a few sign/exponent bins: per-lane atomics would serialize).
// Packed16: 256 16-bit bins, two per 32-bit word (bin b in word b / 2, high half when b is odd),
// half the shared memory; counts must stay below 65536.
// Session s, prepared, NOT measured (off in the library): FUSEBENCH_HIST_PLAIN = 1: one shared atomic per active
// lane, no ballot and no match. fused_bound's list kernel gained 2-14% on every input from dropping its own warp
// vote, all-equal rows (every lane one bin) included (H200, kernels/softmax_topk/NOTES.md "Session s"); whether
// the float keys' crowded bins here behave the same is what an A/B of fused_stream's K <= 32 kernel (its only
// hist_add) says: VARIANTS="base=;plain=-DFUSEBENCH_HIST_PLAIN=1" probes/knob_ab.sh.
#ifndef FUSEBENCH_HIST_PLAIN
#define FUSEBENCH_HIST_PLAIN 0
#endif
template <bool Packed16 = false>
__device__ __forceinline__ void hist_add(unsigned* hist, unsigned bin, bool active) {
    if constexpr (FUSEBENCH_HIST_PLAIN != 0) {
        if (active) {
            if constexpr (Packed16) atomicAdd(&hist[bin >> 1], 1u << ((bin & 1u) * 16u));
            else atomicAdd(&hist[bin], 1u);
        }
        return;
    }
    const unsigned act = __ballot_sync(full_mask, active);
    if (!active) return;
    const unsigned peers = __match_any_sync(act, bin);
    if ((threadIdx.x & 31) == __ffs(peers) - 1) {
        const auto n = static_cast<unsigned>(__popc(peers));
        if constexpr (Packed16) {
            atomicAdd(&hist[bin >> 1], n << ((bin & 1u) * 16u));
        } else {
            atomicAdd(&hist[bin], n);
        }
    }
}

// Lane l's share of a 256-bin histogram: bins 255 - 8l down to 248 - 8l (the largest first) into
// cnt, cleared when Clear; lane_total is their sum, and the return value the inclusive prefix of
// the lanes' totals (the count in bins at or above this lane's lowest).
template <bool Packed16, bool Clear>
__device__ __forceinline__ unsigned read_lane_bins(unsigned* hist, int lane, unsigned (&cnt)[8], unsigned& lane_total) {
    if constexpr (Packed16) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {  // bins 255 - 8l - 2q (high half) and 254 - 8l - 2q (low half)
            const unsigned word = hist[127 - 4 * lane - q];
            if (Clear) hist[127 - 4 * lane - q] = 0;
            cnt[2 * q] = word >> 16;
            cnt[2 * q + 1] = word & 0xFFFFu;
        }
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            cnt[i] = hist[255 - 8 * lane - i];
            if (Clear) hist[255 - 8 * lane - i] = 0;
        }
    }
    lane_total = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) lane_total += cnt[i];
    unsigned incl = lane_total;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned n = __shfl_up_sync(full_mask, incl, d);
        if (lane >= d) incl += n;
    }
    return incl;
}

// One warp scans a 256-bin histogram from the top: lane l reads (and clears) bins 255 - 8l down to
// 248 - 8l, and the lane owning the bin in which the count of larger items first reaches `need`
// returns true with that bin's digit, the count above it and its own count.
template <bool Packed16 = false>
__device__ __forceinline__ bool scan_bins_desc(unsigned* hist, unsigned need, int lane, unsigned& digit,
                                               unsigned& above_bin, unsigned& in_bin) {
    unsigned cnt[8], lane_total;
    const unsigned incl = read_lane_bins<Packed16, true>(hist, lane, cnt, lane_total);
    unsigned above = incl - lane_total;
    const bool mine = above < need && incl >= need;
    if (mine) {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            if (above < need && above + cnt[i] >= need) {
                digit = 255u - 8u * lane - i;
                above_bin = above;
                in_bin = cnt[i];
            }
            above += cnt[i];
        }
    }
    return mine;
}

// Exact selection of the K largest among distinct 64-bit composites. MSB-first radix select, 8
// bits per pass, stopping once the digit bin holding the K-th largest is taken whole. `prefix` and
// `mask` come in holding bits every item shares (0 and 0 when nothing is known) and `shift` is the
// lowest bit of the first digit to examine (56 from scratch; lower when the items' common prefix is
// known, which spreads the first histogram instead of piling it into one bin). On return
// (identical in every thread), exactly K items satisfy (c & mask) >= prefix.
// for_each(f) must call f(composite, valid) for each of the thread's items, the same number of
// times in every lane of a warp (ballots inside); items with valid == false do not count.
// All block_threads threads call it; the items must not change during the call.
template <class ForEach>
__device__ void block_radix_select(int K, ForEach for_each, select_smem& sm, std::uint64_t& prefix,
                                   std::uint64_t& mask, int shift = 56) {
    static_assert(block_threads == 256, "scan layout assumes 256 threads");
    unsigned need = static_cast<unsigned>(K);
    for (;;) {
        for_each([&](std::uint64_t c, bool valid) {
            hist_add(sm.hist, static_cast<unsigned>(c >> shift) & 255u, valid && (c & mask) == prefix);
        });
        __syncthreads();
        if (threadIdx.x < 32) {
            unsigned digit = 0, above = 0, in_bin = 0;
            if (scan_bins_desc(sm.hist, need, static_cast<int>(threadIdx.x), digit, above, in_bin)) {
                sm.digit = digit;
                sm.above = above;
                sm.in_bin = in_bin;
            }
        }
        __syncthreads();
        const unsigned d = sm.digit;
        need -= sm.above;
        const bool whole_bin = sm.in_bin == need;
        // Digit bits that overlap known bits agree with them (the items matched the prefix).
        prefix |= static_cast<std::uint64_t>(d) << shift;
        mask |= static_cast<std::uint64_t>(255u) << shift;
        if (whole_bin || shift == 0) break;
        shift = shift > 8 ? shift - 8 : 0;
        // sm.digit/above/in_bin are rewritten only after the next pass's first barrier.
    }
}

// For_each over items i = threadIdx.x + j * block_threads < n of an indexable source.
template <class Comp> struct strided_items {
    int n;
    Comp comp;
    template <class F> __device__ __forceinline__ void operator()(F&& f) const {
        for (int base = 0; base < n; base += block_threads) {
            const int i = base + static_cast<int>(threadIdx.x);
            const bool valid = i < n;
            f(valid ? comp(i) : 0ull, valid);
        }
    }
};
template <class Comp> __device__ __forceinline__ strided_items<Comp> make_strided(int n, Comp comp) {
    return {n, comp};
}

// Lower bound of the values of every selected item, as a float threshold x >= t (bits of the
// key below the mask are zero). Keys at or below the key of -inf give -inf: every number passes.
__device__ __forceinline__ float threshold_from(std::uint64_t prefix) {
    const std::uint32_t key = static_cast<std::uint32_t>(prefix >> 32);
    return key <= 0x007FFFFFu ? -INFINITY : key_float(key);
}

// Sorts s[0, P) descending in place (P a power of two, all block threads call it).
__device__ __forceinline__ void block_bitonic_sort_desc(std::uint64_t* s, int P) {
    for (int k = 2; k <= P; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < P; i += block_threads) {
                const int l = i ^ j;
                if (l > i) {
                    const std::uint64_t a = s[i], b = s[l];
                    const bool desc = (i & k) == 0;
                    if (desc ? (a < b) : (a > b)) {
                        s[i] = b;
                        s[l] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
}

// Sorts one value per lane descending across the warp (lane 0 gets the largest).
__device__ __forceinline__ std::uint64_t warp_bitonic_sort_desc(std::uint64_t v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int k = 2; k <= 32; k <<= 1) {
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1) {
            const std::uint64_t o = __shfl_xor_sync(full_mask, v, j);
            // The lower lane of a pair keeps the larger value in descending runs.
            const bool desc = (lane & k) == 0;
            const bool lower = (lane & j) == 0;
            const bool take_max = desc == lower;
            v = take_max ? (o > v ? o : v) : (o < v ? o : v);
        }
    }
    return v;
}

// Usage errors are std::invalid_argument with the numbers in the message.
inline void validate(const softmax_topk_args& a, std::int64_t k_cap, const char* who) {
    const auto fail = [&](const std::string& why) {
        throw std::invalid_argument(std::string(who) + ": " + why + " (rows " +
                                    std::to_string(a.rows) + ", V " + std::to_string(a.V) +
                                    ", K " + std::to_string(a.K) + ")");
    };
    if (a.rows < 0) fail("rows < 0");
    if (a.V < 1) fail("V < 1");
    if (a.V > 0x7FFFFFFF) fail("V > 2^31 - 1");
    if (a.K < 1) fail("K < 1");
    if (a.K > a.V) fail("K > V");
    if (a.K > k_cap) fail("K > " + std::to_string(k_cap) + " is not supported");
    if (a.rows > 0x7FFFFFFF) fail("rows > 2^31 - 1");
}

}  // namespace fusebench::kernels::topk_detail
