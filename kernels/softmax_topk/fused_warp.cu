// Fused softmax + top-k, v4: one warp per row. The block-per-row designs (v1-v3) pay per-row
// fixed costs (block barriers per tile, the final select and sort) that stall a whole block; with
// a warp per row every SM keeps ~30 rows in flight, so one row's selection overlaps the others'
// streaming, and nothing but warp-synchronous code runs (no block barrier at all).
//
// Per lane: 16-byte loads, 4 in flight; online max and sum of exp (rescaled once per vector, not
// per element); NaN / +inf flags. Per warp: a running threshold (the K-th largest logit kept so
// far) and a shared-memory buffer of 64-bit keys (orderable logit bits << 32 | ~index). An
// element strictly above the threshold is appended through a ballot; when the buffer could
// overflow, a warp bitonic sort keeps the exact top K and raises the threshold. Strict `>` is
// exact with ties: an element equal to the threshold has a higher index than the K kept elements
// of that value or above (they were seen in earlier steps), so it ranks below all of them.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/softmax_topk/softmax_topk.hpp"
#include "kernels/softmax_topk/warp_row.cuh"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {
namespace {

constexpr int warps_per_block = 4;
constexpr int loads_in_flight = 4;  // 16-byte vectors per lane issued before use
// 8 resident blocks per SM (64 registers) put all 4096 rows of the target shapes in one wave.
constexpr float log2e = 1.4426950408889634f;

__device__ __forceinline__ std::uint32_t orderable(float x) {
    const std::uint32_t u = __float_as_uint(x);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float from_orderable(std::uint32_t o) {
    return __uint_as_float((o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o);
}
__device__ __forceinline__ unsigned long long make_key(float x, std::uint32_t index) {
    return (static_cast<unsigned long long>(orderable(x)) << 32) | (0xFFFFFFFFu - index);
}

template <int B> struct warp_state {
    unsigned long long* buf;  // B keys of this warp
    int count = 0;            // keys in buf (warp-uniform)
    float thr = -INFINITY;    // candidates must exceed it (warp-uniform)
};

// Sorts the warp's buffer descending (padding beyond `count` with 0, below every real key), keeps
// the top K, and raises the threshold to the K-th value.
template <int B> __device__ void compact(warp_state<B>& w, int K, int lane) {
    for (int t = w.count + lane; t < B; t += 32) w.buf[t] = 0ull;
    topk_detail::warp_bitonic_sort_desc_smem(w.buf, B, lane);
    if (w.count >= K) {
        w.count = K;
        w.thr = from_orderable(static_cast<std::uint32_t>(w.buf[K - 1] >> 32));
    }
}

// One step of the warp: each lane offers `n` elements (values x[e], indices base + e, valid[e]).
template <int B, int N>
__device__ __forceinline__ void offer(warp_state<B>& w, int K, int lane, const float (&x)[N], std::int64_t base,
                                      int n_valid) {
    bool any = false;
#pragma unroll
    for (int e = 0; e < N; ++e) any |= (e < n_valid) && x[e] > w.thr;
    if (!__any_sync(0xFFFFFFFFu, any)) return;
    if (w.count + 32 * N > B) compact(w, K, lane);
#pragma unroll
    for (int e = 0; e < N; ++e) {
        const bool pred = (e < n_valid) && x[e] > w.thr;
        const unsigned mask = __ballot_sync(0xFFFFFFFFu, pred);
        if (pred) {
            const int pos = w.count + __popc(mask & ((1u << lane) - 1u));
            w.buf[pos] = make_key(x[e], static_cast<std::uint32_t>(base + e));
        }
        w.count += __popc(mask);
    }
    __syncwarp();
}

struct lane_stats {
    float m = -INFINITY;  // running max of the lane's finite-or-inf logits
    float s = 0.0f;       // sum of exp(x - m), with compensation k (select.cuh, kahan_add): the sum is s - k
    float k = 0.0f;
    bool bad = false;     // saw NaN or +inf: the row has no finite softmax
    __device__ float sum() const { return s - k; }
};

template <int N> __device__ __forceinline__ void accumulate(lane_stats& st, const float (&x)[N], int n_valid) {
    float mv = -INFINITY;
#pragma unroll
    for (int e = 0; e < N; ++e) {
        if (e < n_valid) {
            mv = fmaxf(mv, x[e]);
            st.bad |= (x[e] != x[e]) | (x[e] == INFINITY);
        }
    }
    if (mv > st.m) {
        const float f = exp2f((st.m - mv) * log2e);  // m = -inf: exp2(-inf) = 0 and s, k were 0
        st.s *= f;
        st.k *= f;
        st.m = mv;
    }
    const float base = st.m == -INFINITY ? 0.0f : st.m;  // all -inf so far: every term is 0
    // The vector's terms summed on their own, then one compensated add: a row of many equal terms (a
    // plateau of equal logits below the max) rounds every plain add the same way, and the drift grows
    // with the row (1.1e-5 at 4096 x 50257 bf16, H200 GPU-84b8f516, session m call 1).
    float vs = 0.0f;
#pragma unroll
    for (int e = 0; e < N; ++e) {
        if (e < n_valid) vs += exp2f((x[e] - base) * log2e);
    }
    topk_detail::kahan_add(st.s, st.k, vs);
}

template <class T> struct vec16 {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

template <class T, int B>
__global__ void __launch_bounds__(32 * warps_per_block, 8)
    softmax_topk_warp_kernel(const T* __restrict__ logits, float* __restrict__ probs, std::int32_t* __restrict__ indices,
                             std::int64_t rows, std::int64_t V, int K) {
    extern __shared__ unsigned long long smem_keys[];
    constexpr int W = vec16<T>::n;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp;
    if (r >= rows) return;  // warp-uniform; the kernel has no block barrier
    warp_state<B> w;
    w.buf = smem_keys + warp * B;
    const T* row = logits + r * V;
    lane_stats st;

    // Head: elements before the first 16-byte boundary, one per lane.
    const auto addr = reinterpret_cast<std::uintptr_t>(row);
    std::int64_t head = ((16 - static_cast<std::int64_t>(addr % 16)) % 16) / static_cast<std::int64_t>(sizeof(T));
    if (addr % sizeof(T) != 0) head = V;  // not even element aligned: scalar path for the row
    if (head > V) head = V;
    const std::int64_t nvec = (V - head) / W;
    const std::int64_t tail = head + nvec * W;
    auto scalar_range = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t b = begin; b < end; b += 32) {
            float x[1] = {-INFINITY};
            const int ok = b + lane < end;
            if (ok) x[0] = to_f32(row[b + lane]);
            accumulate(st, x, ok);
            offer(w, K, lane, x, b + lane, ok);
        }
    };
    scalar_range(0, head);

    const auto* vrow = reinterpret_cast<const vec16<T>*>(row + head);
    for (std::int64_t j0 = 0; j0 < nvec; j0 += 32 * loads_in_flight) {
        vec16<T> v[loads_in_flight];
#pragma unroll
        for (int u = 0; u < loads_in_flight; ++u) {
            const std::int64_t j = j0 + u * 32 + lane;
            if (j < nvec) v[u] = vrow[j];
        }
#pragma unroll
        for (int u = 0; u < loads_in_flight; ++u) {
            const std::int64_t j = j0 + u * 32 + lane;
            float x[W];
#pragma unroll
            for (int e = 0; e < W; ++e) x[e] = to_f32(v[u].v[e]);
            const int n = j < nvec ? W : 0;
            accumulate(st, x, n);
            offer(w, K, lane, x, head + j * W, n);
        }
    }
    scalar_range(tail, V);

    // Row statistics across the warp.
    float M = st.m;
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xFFFFFFFFu, M, o));
    float S = st.m == -INFINITY ? 0.0f : st.sum() * exp2f((st.m - M) * log2e);
    for (int o = 16; o > 0; o >>= 1) S += __shfl_xor_sync(0xFFFFFFFFu, S, o);
    const bool bad = __any_sync(0xFFFFFFFFu, st.bad) || M == -INFINITY;

    float* p_out = probs + r * K;
    std::int32_t* i_out = indices + r * K;
    if (bad) {
        topk_detail::warp_write_no_softmax(p_out, i_out, K, lane);
        return;
    }
    compact(w, K, lane);
    topk_detail::warp_write_topk(w.buf, w.count, row, V, K, M, S, p_out, i_out, lane);
}

template <class T> void launch_typed(const softmax_topk_args& a, cudaStream_t stream) {
    constexpr int W = 16 / sizeof(T);
    const std::int64_t need = a.K + 32 * W;  // kept keys + one step's worth of appends
    const unsigned blocks = static_cast<unsigned>((a.rows + warps_per_block - 1) / warps_per_block);
    const auto* logits = static_cast<const T*>(a.d_logits);
    if (need <= 256) {
        softmax_topk_warp_kernel<T, 256><<<blocks, 32 * warps_per_block, warps_per_block * 256 * 8, stream>>>(
            logits, a.d_probs, a.d_indices, a.rows, a.V, static_cast<int>(a.K));
    } else {
        softmax_topk_warp_kernel<T, 512><<<blocks, 32 * warps_per_block, warps_per_block * 512 * 8, stream>>>(
            logits, a.d_probs, a.d_indices, a.rows, a.V, static_cast<int>(a.K));
    }
    check_launch("softmax_topk_warp_kernel");
}

}  // namespace

void launch_softmax_topk_fused_warp(const softmax_topk_args& a, cudaStream_t stream) {
    if (a.K < 1 || a.V < 1 || a.K > a.V) {
        throw std::invalid_argument("softmax_topk fused_warp: need 1 <= K <= V (K = " + std::to_string(a.K) +
                                    ", V = " + std::to_string(a.V) + ")");
    }
    if (a.K > softmax_topk_warp_max_k) {
        throw std::invalid_argument("softmax_topk fused_warp: K = " + std::to_string(a.K) + " > " +
                                    std::to_string(softmax_topk_warp_max_k));
    }
    if (a.V > 0x7FFFFFFF) throw std::invalid_argument("softmax_topk fused_warp: V must fit int32 indices");
    if (a.rows == 0) return;
    switch (a.type) {
        case elem::f32: launch_typed<float>(a, stream); break;
        case elem::f16: launch_typed<__half>(a, stream); break;
        case elem::bf16: launch_typed<__nv_bfloat16>(a, stream); break;
    }
}

}  // namespace fusebench::kernels
