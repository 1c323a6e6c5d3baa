// The seed documents' three designs, built as described, flaws included (the suite declares the
// domain where each is exact and shows the failures outside it). float32 logits only, as in the
// seeds.
#include "kernels/softmax_topk/select.cuh"

namespace fusebench::kernels {
namespace {

using namespace topk_detail;

constexpr int local_k = static_cast<int>(seed_local_k);
constexpr int heap_cap = static_cast<int>(seed_heap_max_k);

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = fmaxf(v, __shfl_xor_sync(full_mask, v, d));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(full_mask, v, d);
    return v;
}

// Two-level block reduction through shared memory, as in the seed: shuffles, then warp 0.
template <bool IsMax>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
    v = IsMax ? warp_max(v) : warp_sum(v);
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        float w = threadIdx.x < warps_per_block ? scratch[threadIdx.x] : (IsMax ? -INFINITY : 0.0f);
        w = IsMax ? warp_max(w) : warp_sum(w);
        if (threadIdx.x == 0) scratch[warps_per_block] = w;
    }
    __syncthreads();
    const float r = scratch[warps_per_block];
    __syncthreads();
    return r;
}

// Sorted (descending) register list with compile-time indices only: insert at the end, bubble up.
// Strict '>' keeps the earlier element on ties; NaN never enters.
template <int N>
__device__ __forceinline__ void list_insert(float (&v)[N], int (&ix)[N], float p, int i) {
    if (!(p > v[N - 1])) return;
    v[N - 1] = p;
    ix[N - 1] = i;
#pragma unroll
    for (int j = N - 1; j > 0; --j) {
        if (v[j] > v[j - 1]) {
            const float tv = v[j];
            v[j] = v[j - 1];
            v[j - 1] = tv;
            const int ti = ix[j];
            ix[j] = ix[j - 1];
            ix[j - 1] = ti;
        }
    }
}

// Shared-memory min-heap of K (value, index): the root is the smallest kept value.
__device__ void heap_push(float* hv, int* hi, int K, float v, int i) {
    if (!(v > hv[0])) return;
    hv[0] = v;
    hi[0] = i;
    int c = 0;
    for (;;) {
        const int l = 2 * c + 1, r = l + 1;
        int s = c;
        if (l < K && hv[l] < hv[s]) s = l;
        if (r < K && hv[r] < hv[s]) s = r;
        if (s == c) break;
        const float tv = hv[c];
        hv[c] = hv[s];
        hv[s] = tv;
        const int ti = hi[c];
        hi[c] = hi[s];
        hi[s] = ti;
        c = s;
    }
}

// Thread 0's O(K^2) selection sort of the heap into the output row.
__device__ void heap_sort_write(float* hv, int* hi, int K, float* out_p, std::int32_t* out_i) {
    for (int k = 0; k < K; ++k) {
        int best = k;
        for (int j = k + 1; j < K; ++j)
            if (hv[j] > hv[best]) best = j;
        const float tv = hv[k];
        hv[k] = hv[best];
        hv[best] = tv;
        const int ti = hi[k];
        hi[k] = hi[best];
        hi[best] = ti;
        out_p[k] = hv[k];
        out_i[k] = hi[k];
    }
}

// Seed 000 v1. Pass 3 recomputes the probability of every element and keeps a per-thread top-16;
// thread 0 then pushes the 256 x 16 entries, staged warp by warp, into the heap.
__global__ void __launch_bounds__(block_threads)
    seed_block_kernel(const float* __restrict__ logits, float* __restrict__ out_p,
                      std::int32_t* __restrict__ out_i, int V, int K) {
    __shared__ float scratch[warps_per_block + 1];
    __shared__ float heap_v[heap_cap];
    __shared__ int heap_i[heap_cap];
    __shared__ float stage_v[32 * local_k];
    __shared__ int stage_i[32 * local_k];
    const float* x = logits + static_cast<std::int64_t>(blockIdx.x) * V;

    float m = -INFINITY;
    for (int i = threadIdx.x; i < V; i += block_threads) m = fmaxf(m, x[i]);
    m = block_reduce<true>(m, scratch);
    float s = 0;
    for (int i = threadIdx.x; i < V; i += block_threads) s += expf(x[i] - m);
    s = block_reduce<false>(s, scratch);

    float lv[local_k];
    int li[local_k];
#pragma unroll
    for (int j = 0; j < local_k; ++j) {
        lv[j] = -INFINITY;
        li[j] = -1;
    }
    for (int i = threadIdx.x; i < V; i += block_threads) list_insert(lv, li, expf(x[i] - m) / s, i);

    for (int j = threadIdx.x; j < K; j += block_threads) {
        heap_v[j] = -INFINITY;
        heap_i[j] = -1;
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int w = 0; w < warps_per_block; ++w) {
        if (warp == w) {
#pragma unroll
            for (int j = 0; j < local_k; ++j) {
                stage_v[lane * local_k + j] = lv[j];
                stage_i[lane * local_k + j] = li[j];
            }
        }
        __syncthreads();
        if (threadIdx.x == 0)
            for (int e = 0; e < 32 * local_k; ++e) heap_push(heap_v, heap_i, K, stage_v[e], stage_i[e]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * K;
        heap_sort_write(heap_v, heap_i, K, out_p + o, out_i + o);
    }
}

// Seed 000 v2: float4 loads (row starts 16-byte aligned: V % 4 == 0), and each warp merges its
// 32 lane lists by K rounds of warp arg-max before thread 0 pushes 8 x K entries into the heap.
__global__ void __launch_bounds__(block_threads)
    seed_block_vec_kernel(const float* __restrict__ logits, float* __restrict__ out_p,
                          std::int32_t* __restrict__ out_i, int V, int K) {
    __shared__ float scratch[warps_per_block + 1];
    __shared__ float heap_v[heap_cap];
    __shared__ int heap_i[heap_cap];
    __shared__ float stage_v[warps_per_block][heap_cap];
    __shared__ int stage_i[warps_per_block][heap_cap];
    const float4* x4 = reinterpret_cast<const float4*>(logits + static_cast<std::int64_t>(blockIdx.x) * V);
    const int n4 = V / 4;

    float m = -INFINITY;
    for (int i = threadIdx.x; i < n4; i += block_threads) {
        const float4 v = x4[i];
        m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    }
    m = block_reduce<true>(m, scratch);
    float s = 0;
    for (int i = threadIdx.x; i < n4; i += block_threads) {
        const float4 v = x4[i];
        s += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
    }
    s = block_reduce<false>(s, scratch);

    float lv[local_k];
    int li[local_k];
#pragma unroll
    for (int j = 0; j < local_k; ++j) {
        lv[j] = -INFINITY;
        li[j] = -1;
    }
    for (int i = threadIdx.x; i < n4; i += block_threads) {
        const float4 v = x4[i];
        list_insert(lv, li, expf(v.x - m) / s, 4 * i);
        list_insert(lv, li, expf(v.y - m) / s, 4 * i + 1);
        list_insert(lv, li, expf(v.z - m) / s, 4 * i + 2);
        list_insert(lv, li, expf(v.w - m) / s, 4 * i + 3);
    }

    // Warp merge: each round the lane with the largest list head (lowest lane on ties) pops it.
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int r = 0; r < K; ++r) {
        float best = lv[0];
        int best_lane = lane;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
            const float ov = __shfl_xor_sync(full_mask, best, d);
            const int ol = __shfl_xor_sync(full_mask, best_lane, d);
            if (ov > best || (ov == best && ol < best_lane)) {
                best = ov;
                best_lane = ol;
            }
        }
        const int best_index = __shfl_sync(full_mask, li[0], best_lane);
        if (lane == 0) {
            stage_v[warp][r] = best;
            stage_i[warp][r] = best_index;
        }
        if (lane == best_lane) {
#pragma unroll
            for (int j = 0; j < local_k - 1; ++j) {
                lv[j] = lv[j + 1];
                li[j] = li[j + 1];
            }
            lv[local_k - 1] = -INFINITY;
            li[local_k - 1] = -1;
        }
    }
    for (int j = threadIdx.x; j < K; j += block_threads) {
        heap_v[j] = -INFINITY;
        heap_i[j] = -1;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 0; w < warps_per_block; ++w)
            for (int r = 0; r < K; ++r) heap_push(heap_v, heap_i, K, stage_v[w][r], stage_i[w][r]);
        const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * K;
        heap_sort_write(heap_v, heap_i, K, out_p + o, out_i + o);
    }
}

// Seed 003: warp per row, one pass. Each element rescales the lane's running sum
// (s *= exp(old_max - new_max)) and enters the lane's top-KCAP list of logits; lane 0 merges the
// 32 lane lists (received by shuffle) into the warp's sorted list of K in shared memory.
template <int KCAP>
__global__ void __launch_bounds__(block_threads)
    seed_warp_kernel(const float* __restrict__ logits, float* __restrict__ out_p,
                     std::int32_t* __restrict__ out_i, int rows, int V, int K) {
    __shared__ float heap_buf[warps_per_block][KCAP];
    __shared__ int idx_buf[warps_per_block][KCAP];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int row = blockIdx.x * warps_per_block + warp;
    if (row >= rows) return;  // whole warps leave; no block-wide barrier follows
    const float* x = logits + static_cast<std::int64_t>(row) * V;

    float m = -INFINITY, s = 0;
    float lv[KCAP];
    int li[KCAP];
#pragma unroll
    for (int j = 0; j < KCAP; ++j) {
        lv[j] = -INFINITY;
        li[j] = -1;
    }
    for (int i = lane; i < V; i += 32) {
        const float v = x[i];
        const float old = m;
        m = fmaxf(m, v);
        s *= expf(old - m);
        s += expf(v - m);
        list_insert(lv, li, v, i);
    }
    const float M = warp_max(m);
    const float S = warp_sum(s * expf(m - M));

    float* hv = heap_buf[warp];
    int* hi = idx_buf[warp];
    if (lane == 0)
        for (int j = 0; j < K; ++j) {
            hv[j] = -INFINITY;
            hi[j] = -1;
        }
    for (int l = 0; l < 32; ++l) {
#pragma unroll
        for (int j = 0; j < KCAP; ++j) {
            const float v = __shfl_sync(full_mask, lv[j], l);
            const int i = __shfl_sync(full_mask, li[j], l);
            if (lane == 0 && j < K && v > hv[K - 1]) {
                int p = K - 1;
                while (p > 0 && v > hv[p - 1]) {
                    hv[p] = hv[p - 1];
                    hi[p] = hi[p - 1];
                    --p;
                }
                hv[p] = v;
                hi[p] = i;
            }
        }
    }
    __syncwarp();
    for (int k = lane; k < K; k += 32) {
        const std::int64_t o = static_cast<std::int64_t>(row) * K + k;
        out_p[o] = expf(hv[k] - M) / S;
        out_i[o] = hi[k];
    }
}

void require_f32(const softmax_topk_args& a, const char* who) {
    if (a.type != elem::f32)
        throw std::invalid_argument(std::string(who) + ": the seed design reads float32 logits only");
}

}  // namespace

void launch_softmax_topk_seed_block(const softmax_topk_args& a, cudaStream_t stream) {
    validate(a, seed_heap_max_k, "launch_softmax_topk_seed_block");
    require_f32(a, "launch_softmax_topk_seed_block");
    if (a.rows == 0) return;
    seed_block_kernel<<<static_cast<unsigned>(a.rows), block_threads, 0, stream>>>(
        static_cast<const float*>(a.d_logits), a.d_probs, a.d_indices, static_cast<int>(a.V),
        static_cast<int>(a.K));
    check_launch("seed_block_kernel");
}

void launch_softmax_topk_seed_block_vec(const softmax_topk_args& a, cudaStream_t stream) {
    validate(a, seed_heap_max_k, "launch_softmax_topk_seed_block_vec");
    require_f32(a, "launch_softmax_topk_seed_block_vec");
    if (a.V % 4 != 0 || reinterpret_cast<std::uintptr_t>(a.d_logits) % 16 != 0)
        throw std::invalid_argument(
            "launch_softmax_topk_seed_block_vec: float4 loads need V % 4 == 0 and 16-byte aligned logits");
    if (a.rows == 0) return;
    seed_block_vec_kernel<<<static_cast<unsigned>(a.rows), block_threads, 0, stream>>>(
        static_cast<const float*>(a.d_logits), a.d_probs, a.d_indices, static_cast<int>(a.V),
        static_cast<int>(a.K));
    check_launch("seed_block_vec_kernel");
}

void launch_softmax_topk_seed_warp(const softmax_topk_args& a, cudaStream_t stream) {
    validate(a, seed_warp_max_k, "launch_softmax_topk_seed_warp");
    require_f32(a, "launch_softmax_topk_seed_warp");
    if (a.rows == 0) return;
    const unsigned grid = static_cast<unsigned>((a.rows + warps_per_block - 1) / warps_per_block);
    const auto* x = static_cast<const float*>(a.d_logits);
    if (a.K <= 16) {
        seed_warp_kernel<16><<<grid, block_threads, 0, stream>>>(
            x, a.d_probs, a.d_indices, static_cast<int>(a.rows), static_cast<int>(a.V), static_cast<int>(a.K));
    } else {
        seed_warp_kernel<32><<<grid, block_threads, 0, stream>>>(
            x, a.d_probs, a.d_indices, static_cast<int>(a.rows), static_cast<int>(a.V), static_cast<int>(a.K));
    }
    check_launch("seed_warp_kernel");
}

}  // namespace fusebench::kernels
