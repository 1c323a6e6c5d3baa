// Broken copies of the naive softmax + top-k baseline (kernels/softmax_topk/naive.cu): the
// softmax kernel, the radix-select top-k kernel, and a selection by repeated arg-max. See
// mutants.hpp.
#include "kernels/common/elem_io.cuh"
#include "kernels/mutants/mutants.hpp"
#include "kernels/softmax_topk/select.cuh"

namespace fusebench::kernels::mutants {
namespace {

using namespace topk_detail;

// The naive three-pass softmax; SubtractMax = false is mutant 8.
template <class T, bool SubtractMax>
__global__ void __launch_bounds__(block_threads)
    softmax_rows_kernel(const T* __restrict__ logits, float* __restrict__ probs, int V) {
    __shared__ float scratch[warps_per_block];
    const T* x = logits + static_cast<std::int64_t>(blockIdx.x) * V;
    float* p = probs + static_cast<std::int64_t>(blockIdx.x) * V;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < V; i += block_threads) m = fmaxf(m, to_f32(x[i]));
    m = block_reduce_max(m, scratch);
    if constexpr (!SubtractMax) m = 0.0f;  // the bug: "softmax is shift-invariant, skip the max"
    float s = 0;
    for (int i = threadIdx.x; i < V; i += block_threads) s += expf(to_f32(x[i]) - m);
    s = block_reduce_sum(s, scratch);
    const float inv = 1.0f / s;
    for (int i = threadIdx.x; i < V; i += block_threads) p[i] = expf(to_f32(x[i]) - m) * inv;
}

// The naive radix-select top-k; StridedWrite = false is mutant 4 (the final write loop lost its
// stride, so k >= block_threads is never written).
template <bool StridedWrite>
__global__ void __launch_bounds__(block_threads)
    topk_rows_kernel(const float* __restrict__ probs, float* __restrict__ out_probs,
                     std::int32_t* __restrict__ out_indices, int V, int K) {
    __shared__ select_smem sm;
    __shared__ std::uint64_t winners[softmax_topk_max_k];
    __shared__ unsigned count;
    const float* p = probs + static_cast<std::int64_t>(blockIdx.x) * V;
    const auto comp = [p](int i) { return composite(float_key(p[i]), static_cast<std::uint32_t>(i)); };
    clear_select_smem(sm);
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    std::uint64_t prefix = 0, mask = 0;
    block_radix_select(K, make_strided(V, comp), sm, prefix, mask);
    for (int i = threadIdx.x; i < V; i += block_threads) {
        const std::uint64_t c = comp(i);
        if ((c & mask) >= prefix) winners[atomicAdd(&count, 1u)] = c;
    }
    const int P = 1 << (32 - __clz(K - 1 | 1));
    for (int i = K + threadIdx.x; i < P; i += block_threads) winners[i] = 0;
    __syncthreads();
    block_bitonic_sort_desc(winners, P);
    const auto write = [&](int k) {
        const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * K + k;
        out_probs[o] = composite_value(winners[k]);
        out_indices[o] = static_cast<std::int32_t>(composite_index(winners[k]));
    };
    if constexpr (StridedWrite) {
        for (int k = threadIdx.x; k < K; k += block_threads) write(k);
    } else {
        if (static_cast<int>(threadIdx.x) < K) write(static_cast<int>(threadIdx.x));  // the bug
    }
}

// Mutant 10: K rounds of block arg-max over the stored probabilities. A round considers items no
// larger than the previous winner's value, excluding the previous winner's index only (the bug:
// every earlier winner should be excluded, which the composite order does by itself: the next
// winner is the largest composite below the previous one). On ties two indices alternate.
__global__ void __launch_bounds__(block_threads)
    topk_argmax_rounds_kernel(const float* __restrict__ probs, float* __restrict__ out_probs,
                              std::int32_t* __restrict__ out_indices, int V, int K) {
    __shared__ std::uint64_t warp_best[warps_per_block];
    __shared__ std::uint64_t winner;
    const float* p = probs + static_cast<std::int64_t>(blockIdx.x) * V;
    std::uint32_t last_key = 0xFFFFFFFFu, last_index = 0xFFFFFFFFu;
    for (int k = 0; k < K; ++k) {
        std::uint64_t best = 0;
        for (int i = threadIdx.x; i < V; i += block_threads) {
            const std::uint32_t key = float_key(p[i]);
            if (key <= last_key && static_cast<std::uint32_t>(i) != last_index) {
                const std::uint64_t c = composite(key, static_cast<std::uint32_t>(i));
                best = c > best ? c : best;
            }
        }
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
            const std::uint64_t o = __shfl_xor_sync(full_mask, best, d);
            best = o > best ? o : best;
        }
        if ((threadIdx.x & 31) == 0) warp_best[threadIdx.x >> 5] = best;
        __syncthreads();
        if (threadIdx.x == 0) {
            std::uint64_t b = warp_best[0];
            for (int w = 1; w < warps_per_block; ++w) b = warp_best[w] > b ? warp_best[w] : b;
            winner = b;
            const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * K + k;
            out_probs[o] = composite_value(b);
            out_indices[o] = static_cast<std::int32_t>(composite_index(b));
        }
        __syncthreads();
        last_key = static_cast<std::uint32_t>(winner >> 32);
        last_index = composite_index(winner);
        __syncthreads();  // `winner` is rewritten next round
    }
}

template <bool SubtractMax>
void launch_softmax(const softmax_topk_args& a, float* full, cudaStream_t stream) {
    const unsigned rows = static_cast<unsigned>(a.rows);
    const int V = static_cast<int>(a.V);
    switch (a.type) {
        case elem::f32:
            softmax_rows_kernel<float, SubtractMax><<<rows, block_threads, 0, stream>>>(
                static_cast<const float*>(a.d_logits), full, V);
            break;
        case elem::f16:
            softmax_rows_kernel<__half, SubtractMax><<<rows, block_threads, 0, stream>>>(
                static_cast<const __half*>(a.d_logits), full, V);
            break;
        case elem::bf16:
            softmax_rows_kernel<__nv_bfloat16, SubtractMax><<<rows, block_threads, 0, stream>>>(
                static_cast<const __nv_bfloat16*>(a.d_logits), full, V);
            break;
    }
    check_launch("softmax_rows_kernel (mutant)");
}

float* checked_workspace(const softmax_topk_args& a, void* d_workspace, std::size_t workspace_bytes, const char* who) {
    if (workspace_bytes < softmax_topk_mutant_workspace_bytes(a.rows, a.V) || !d_workspace) {
        throw std::invalid_argument(std::string(who) + ": workspace smaller than rows * V floats");
    }
    return static_cast<float*>(d_workspace);
}

}  // namespace

std::size_t softmax_topk_mutant_workspace_bytes(std::int64_t rows, std::int64_t V) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(V) * sizeof(float);
}

void launch_softmax_topk_partial_write(const softmax_topk_args& a, void* d_workspace, std::size_t workspace_bytes,
                                       cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_partial_write");
    if (a.rows == 0) return;
    float* full = checked_workspace(a, d_workspace, workspace_bytes, "launch_softmax_topk_partial_write");
    launch_softmax<true>(a, full, stream);
    topk_rows_kernel<false><<<static_cast<unsigned>(a.rows), block_threads, 0, stream>>>(
        full, a.d_probs, a.d_indices, static_cast<int>(a.V), static_cast<int>(a.K));
    check_launch("topk_rows_kernel (mutant: partial write)");
}

void launch_softmax_topk_no_max(const softmax_topk_args& a, void* d_workspace, std::size_t workspace_bytes,
                                cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_no_max");
    if (a.rows == 0) return;
    float* full = checked_workspace(a, d_workspace, workspace_bytes, "launch_softmax_topk_no_max");
    launch_softmax<false>(a, full, stream);
    topk_rows_kernel<true><<<static_cast<unsigned>(a.rows), block_threads, 0, stream>>>(
        full, a.d_probs, a.d_indices, static_cast<int>(a.V), static_cast<int>(a.K));
    check_launch("topk_rows_kernel (mutant)");
}

void launch_softmax_topk_argmax_rounds(const softmax_topk_args& a, void* d_workspace, std::size_t workspace_bytes,
                                       cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_argmax_rounds");
    if (a.rows == 0) return;
    float* full = checked_workspace(a, d_workspace, workspace_bytes, "launch_softmax_topk_argmax_rounds");
    launch_softmax<true>(a, full, stream);
    topk_argmax_rounds_kernel<<<static_cast<unsigned>(a.rows), block_threads, 0, stream>>>(
        full, a.d_probs, a.d_indices, static_cast<int>(a.V), static_cast<int>(a.K));
    check_launch("topk_argmax_rounds_kernel (mutant)");
}

}  // namespace fusebench::kernels::mutants
