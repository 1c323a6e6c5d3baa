// Fused softmax + top-k, v5 `fused_stream`: one warp per row, built to stream at the DRAM limit.
//
// v4 (fused_warp.cu) showed that a warp per row keeps exactly one DRAM pass but spends too many
// instructions per element and spills. v5 keeps its shape and trims the per-element path to
// unpack, max, subtract, scale, ex2, add:
// - loads in batches of U 16-byte vectors per lane, all issued before any math;
// - one max per batch per lane, the running sum rescaled only when that max rises;
// - no per-element NaN/+inf test: exp(x - m) turns either into a NaN sum (NaN - m, +inf - +inf),
//   so the row statistics say it at the end;
// - one candidate vote per batch (batch max > threshold); the append path runs only for batches
//   that hold a candidate.
// Selection per warp: a shared-memory buffer of 64-bit (value, ~index) composites. Candidates
// above the running threshold are appended through ballots; when the buffer could overflow, a warp
// radix select (8-bit digits, stops once the K-th composite's bin is taken whole) keeps the exact
// top K and raises the threshold to the smallest kept value. Strict `>` is exact with ties: an
// element equal to the threshold arrives after the K kept ones of that value or above, so its index
// is higher and it ranks below all of them. For K <= 32 the first batch seeds the threshold with
// the K-th largest of the 32 lane maxima (K elements of the batch are at or above it), so a row
// appends ~K ln(V / 512) candidates instead of its first 512 elements.
// No block barrier anywhere: a warp that selects never stalls the other rows of its SM.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/softmax_topk/select.cuh"
#include "kernels/softmax_topk/softmax_topk.hpp"
#include "kernels/softmax_topk/warp_row.cuh"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {
namespace {

using topk_detail::composite;
using topk_detail::composite_value;
using topk_detail::fast_exp2;
using topk_detail::float_key;
using topk_detail::full_mask;
using topk_detail::hist_add;
using topk_detail::log2e;

constexpr int stream_warps = 4;          // rows per block
constexpr int stream_blocks_per_sm = 8;  // 64 registers: 32 rows per SM, 4096 rows in one wave on 132 SMs
constexpr int batch_vectors = 4;         // 16-byte loads per lane issued before the batch's math
// Shared memory per warp stays under this many keys where K allows, so 8 blocks fit an SM.
constexpr int keys_budget = 736;

template <class T> struct alignas(16) vec16 {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

struct warp_select_state {
    std::uint64_t* keys;  // cap composites
    unsigned* hist;       // 256 bins, zero between selects
    int cap;
    int count = 0;         // composites in keys (warp-uniform)
    float thr = -INFINITY; // candidates: x > thr (warp-uniform)
};

// Exact top-K of keys[0, n) (distinct composites, n >= K): returns T with exactly K keys >= T.
__device__ std::uint64_t warp_radix_select(const std::uint64_t* keys, int n, int K, unsigned* hist, int lane) {
    std::uint64_t prefix = 0, mask = 0;
    unsigned need = static_cast<unsigned>(K);
    for (int shift = 56;; shift -= 8) {
        for (int t0 = 0; t0 < n; t0 += 32) {
            const int t = t0 + lane;
            const bool valid = t < n;
            const std::uint64_t c = valid ? keys[t] : 0ull;
            hist_add(hist, static_cast<unsigned>(c >> shift) & 255u, valid && (c & mask) == prefix);
        }
        __syncwarp();
        unsigned digit = 0, above_bin = 0, in_bin = 0;
        const bool mine = topk_detail::scan_bins_desc(hist, need, lane, digit, above_bin, in_bin);
        const int src = __ffs(__ballot_sync(full_mask, mine)) - 1;
        digit = __shfl_sync(full_mask, digit, src);
        above_bin = __shfl_sync(full_mask, above_bin, src);
        in_bin = __shfl_sync(full_mask, in_bin, src);
        need -= above_bin;
        prefix |= static_cast<std::uint64_t>(digit) << shift;
        mask |= 0xFFull << shift;
        __syncwarp();  // bins cleared before the next pass adds
        if (in_bin == need || shift == 0) return prefix;
    }
}

// Keeps the exact top K of the buffer (count > K) and raises the threshold to the smallest kept value.
__device__ void compact(warp_select_state& w, int K, int lane) {
    __syncwarp();  // the appends' writes before the select's reads
    const std::uint64_t T = warp_radix_select(w.keys, w.count, K, w.hist, lane);
    std::uint64_t kmin = ~0ull;
    int out = 0;
    for (int t0 = 0; t0 < w.count; t0 += 32) {
        const int t = t0 + lane;
        const std::uint64_t c = t < w.count ? w.keys[t] : 0ull;
        const bool keep = t < w.count && c >= T;
        __syncwarp();  // every lane has read its composite before any lane writes (out <= t0)
        const unsigned m = __ballot_sync(full_mask, keep);
        if (keep) {
            w.keys[out + __popc(m & ((1u << lane) - 1u))] = c;
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
    w.count = out;  // == K
    w.thr = composite_value(kmin);
}

// Appends this lane's x (index idx) when it beats the threshold; room for 32 is made first.
__device__ __forceinline__ void append(warp_select_state& w, int K, int lane, float x, std::uint32_t idx) {
    if (w.count + 32 > w.cap) compact(w, K, lane);
    const bool pred = x > w.thr;
    const unsigned m = __ballot_sync(full_mask, pred);
    if (pred) w.keys[w.count + __popc(m & ((1u << lane) - 1u))] = composite(float_key(x), idx);
    w.count += __popc(m);
}

struct lane_stats {
    float m = -INFINITY;  // running max of the lane's logits (NaN never wins fmaxf)
    float s = 0.0f;       // sum of exp(x - m); NaN once a NaN or (+inf with m = +inf) was added
};

// The batch maximum first, one rescale when it rises, then the terms.
__device__ __forceinline__ void rescale_to(lane_stats& st, float batch_max) {
    if (batch_max > st.m) {
        st.s *= fast_exp2((st.m - batch_max) * log2e);  // m = -inf: exp2(-inf) = 0, and s was 0
        st.m = batch_max;
    }
}
__device__ __forceinline__ float exp_base(const lane_stats& st) {
    return st.m == -INFINITY ? 0.0f : st.m;  // every term so far was -inf: exp(-inf - 0) = 0
}

template <class T> __device__ __forceinline__ float elem_at(const vec16<T>& v, int e) { return to_f32(v.v[e]); }

// The append path of a batch whose candidates do not fit the buffer: reloads the batch (L1/L2 hits)
// and appends element by element, compacting whenever the next 32 might not fit.
template <class T>
__device__ __noinline__ void append_batch_slow(const vec16<T>* __restrict__ vrow, std::int64_t j0, std::int64_t nvec,
                                               std::int64_t head, int lane, warp_select_state& w, int K) {
    constexpr int W = vec16<T>::n;
#pragma unroll 1
    for (int u = 0; u < batch_vectors; ++u) {
        const std::int64_t j = j0 + u * 32 + lane;
        vec16<T> v;
        if (j < nvec) {
            v = vrow[j];
        } else {
#pragma unroll
            for (int e = 0; e < W; ++e) v.v[e] = from_f32<T>(-INFINITY);
        }
#pragma unroll 1
        for (int e = 0; e < W; ++e) append(w, K, lane, elem_at(v, e), static_cast<std::uint32_t>(head + j * W + e));
    }
}

// One batch: U vectors per lane (lane-strided), vector j of the row holds elements head + j*W ...
template <class T, bool Masked>
__device__ __forceinline__ void run_batch(const vec16<T>* __restrict__ vrow, std::int64_t j0, std::int64_t nvec,
                                          std::int64_t head, int lane, lane_stats& st, warp_select_state& w, int K,
                                          bool& seeded) {
    constexpr int W = vec16<T>::n;
    constexpr int U = batch_vectors;
    vec16<T> v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const std::int64_t j = j0 + u * 32 + lane;
        if (!Masked || j < nvec) {
            v[u] = vrow[j];
        } else {
#pragma unroll
            for (int e = 0; e < W; ++e) v[u].v[e] = from_f32<T>(-INFINITY);
        }
    }
    float bm = -INFINITY;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int e = 0; e < W; ++e) bm = fmaxf(bm, elem_at(v[u], e));
    rescale_to(st, bm);
    const float base = exp_base(st);
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int e = 0; e < W; ++e) st.s += fast_exp2((elem_at(v[u], e) - base) * log2e);

    if (!seeded) {
        seeded = true;
        if (K <= 32) {
            // The K-th largest lane maximum: K elements of this batch are at or above it, so
            // x >= it (x > the float just below it) loses no member of the top K.
            const std::uint64_t sorted =
                topk_detail::warp_bitonic_sort_desc(composite(float_key(bm), static_cast<std::uint32_t>(lane)));
            const float vk = composite_value(__shfl_sync(full_mask, sorted, K - 1));
            if (vk > -INFINITY) w.thr = nextafterf(vk, -INFINITY);
        }
    }
    if (!__any_sync(full_mask, bm > w.thr)) return;
    int mine = 0;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int e = 0; e < W; ++e) mine += elem_at(v[u], e) > w.thr;
    const int total = static_cast<int>(__reduce_add_sync(full_mask, static_cast<unsigned>(mine)));
    if (w.count + total > w.cap) {
        // Rare (the first batches of a large K, rows of ties): compactions between the appends,
        // in a call that reloads the batch, so the registers above are dead across it.
        append_batch_slow<T>(vrow, j0, nvec, head, lane, w, K);
        return;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const std::int64_t j = j0 + u * 32 + lane;
#pragma unroll
        for (int e = 0; e < W; ++e) {
            const float x = elem_at(v[u], e);
            const bool pred = x > w.thr;
            const unsigned m = __ballot_sync(full_mask, pred);
            if (pred) {
                w.keys[w.count + __popc(m & ((1u << lane) - 1u))] =
                    composite(float_key(x), static_cast<std::uint32_t>(head + j * W + e));
            }
            w.count += __popc(m);
        }
    }
}

template <class T>
__global__ void __launch_bounds__(32 * stream_warps, stream_blocks_per_sm)
    softmax_topk_stream_kernel(const T* __restrict__ logits, float* __restrict__ probs,
                               std::int32_t* __restrict__ indices, std::int64_t rows, std::int64_t V, int K, int cap) {
    extern __shared__ __align__(16) unsigned char stream_smem[];
    constexpr int W = vec16<T>::n;
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * stream_warps + warp;
    if (r >= rows) return;  // warp-uniform; no block barrier follows

    warp_select_state w;
    w.keys = reinterpret_cast<std::uint64_t*>(stream_smem) + static_cast<std::size_t>(warp) * cap;
    w.hist = reinterpret_cast<unsigned*>(reinterpret_cast<std::uint64_t*>(stream_smem) + stream_warps * cap) + warp * 256;
    w.cap = cap;
    for (int b = lane; b < 256; b += 32) w.hist[b] = 0;
    __syncwarp();

    const T* row = logits + r * V;
    lane_stats st;
    bool seeded = false;

    // Scalar head (up to the first 16-byte boundary) and tail: one element per lane per step.
    const auto addr = reinterpret_cast<std::uintptr_t>(row);
    std::int64_t head = ((16 - static_cast<std::int64_t>(addr % 16)) % 16) / static_cast<std::int64_t>(sizeof(T));
    if (addr % sizeof(T) != 0) head = V;  // not element aligned: the whole row goes the scalar way
    if (head > V) head = V;
    const std::int64_t nvec = (V - head) / W;
    const std::int64_t tail = head + nvec * W;
    const auto scalar_range = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t b = begin; b < end; b += 32) {
            const bool ok = b + lane < end;
            const float x = ok ? to_f32(row[b + lane]) : -INFINITY;
            rescale_to(st, x);
            st.s += fast_exp2((x - exp_base(st)) * log2e);
            if (__any_sync(full_mask, x > w.thr)) append(w, K, lane, x, static_cast<std::uint32_t>(b + lane));
        }
    };
    scalar_range(0, head);

    const auto* vrow = reinterpret_cast<const vec16<T>*>(row + head);
    constexpr int per_batch = 32 * batch_vectors;
    const std::int64_t full = nvec / per_batch * per_batch;
    for (std::int64_t j0 = 0; j0 < full; j0 += per_batch) run_batch<T, false>(vrow, j0, nvec, head, lane, st, w, K, seeded);
    if (full < nvec) run_batch<T, true>(vrow, full, nvec, head, lane, st, w, K, seeded);
    scalar_range(tail, V);

    // Row statistics across the warp.
    float M = st.m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(full_mask, M, o));
    float S = st.s == 0.0f ? 0.0f : st.s * fast_exp2((st.m - M) * log2e);  // s == 0 covers m = -inf
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) S += __shfl_xor_sync(full_mask, S, o);
    // A NaN anywhere, or +inf (inf - inf), made S NaN; an all -inf row has M = -inf.
    const bool bad = S != S || M == INFINITY || M == -INFINITY;

    float* p_out = probs + r * K;
    std::int32_t* i_out = indices + r * K;
    if (bad) {
        topk_detail::warp_write_no_softmax(p_out, i_out, K, lane);
        return;
    }
    __syncwarp();  // the last appends' writes before the reads below
    if (w.count > K) compact(w, K, lane);
    // Sort the kept composites descending.
    const int n = w.count;
    if (K <= 32) {
        std::uint64_t c = lane < n ? w.keys[lane] : 0ull;  // 0 sorts below every real composite
        c = topk_detail::warp_bitonic_sort_desc(c);
        __syncwarp();
        if (lane < n) w.keys[lane] = c;
    } else {
        int P = 32;
        while (P < n) P <<= 1;  // <= cap: cap >= the next power of two of K
        for (int t = n + lane; t < P; t += 32) w.keys[t] = 0ull;  // below every real composite
        topk_detail::warp_bitonic_sort_desc_smem(w.keys, P, lane);
    }
    __syncwarp();
    topk_detail::warp_write_topk(w.keys, n, row, V, K, M, S, p_out, i_out, lane);
}

int kpad_of(std::int64_t K) {
    int p = 32;
    while (p < K) p <<= 1;
    return p;
}

template <class T> void launch_typed(const softmax_topk_args& a, cudaStream_t stream) {
    constexpr int step = 32 * vec16<T>::n;  // one vector step of appends
    const int kpad = kpad_of(a.K);
    // Room for the kept K (rounded up to a power of two for the final sort) plus at least one step
    // of appends; more steps where the budget allows (fewer compactions), except for K <= 32,
    // where the seeded threshold keeps appends rare.
    int extra = step;
    if (a.K > 32 && kpad + 2 * step <= keys_budget) extra = (keys_budget - kpad) / step * step;
    const int cap = kpad + extra;
    const std::size_t smem = static_cast<std::size_t>(stream_warps) * (static_cast<std::size_t>(cap) * 8 + 256 * 4);
    static const bool configured = [] {
        // Shared memory before L1: the stream has no reuse, the buffers are what limits residency.
        return cudaFuncSetAttribute(softmax_topk_stream_kernel<T>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared) == cudaSuccess;
    }();
    (void)configured;  // a hint; the launch below reports real failures
    if (smem > 48 * 1024) {
        const cudaError_t e = cudaFuncSetAttribute(softmax_topk_stream_kernel<T>,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        if (e != cudaSuccess) {
            throw std::runtime_error(std::string("cudaFuncSetAttribute(softmax_topk_stream_kernel): ") +
                                     cudaGetErrorName(e));
        }
    }
    const auto blocks = static_cast<unsigned>((a.rows + stream_warps - 1) / stream_warps);
    softmax_topk_stream_kernel<T><<<blocks, 32 * stream_warps, smem, stream>>>(
        static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices, a.rows, a.V, static_cast<int>(a.K), cap);
    check_launch("softmax_topk_stream_kernel");
}

}  // namespace

void launch_softmax_topk_fused_stream(const softmax_topk_args& a, cudaStream_t stream) {
    topk_detail::validate(a, softmax_topk_max_k, "softmax_topk fused_stream");
    if (a.rows == 0) return;
    switch (a.type) {
        case elem::f32: launch_typed<float>(a, stream); break;
        case elem::f16: launch_typed<__half>(a, stream); break;
        case elem::bf16: launch_typed<__nv_bfloat16>(a, stream); break;
    }
}

}  // namespace fusebench::kernels
