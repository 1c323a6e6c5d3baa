// Naive unfused baseline: softmax to a [rows, V] float32 workspace, then a block-wide radix-select
// top-k over the stored probabilities, the way an unfused framework runs the two operators.
#include "kernels/common/elem_io.cuh"
#include "kernels/softmax_topk/select.cuh"

namespace fusebench::kernels {
namespace {

using namespace topk_detail;

// The textbook three-pass softmax. fmaxf skips NaN, but a NaN (or +inf - +inf, or -inf - -inf)
// reaches the sum and turns the whole row NaN: PyTorch's behaviour, by the same arithmetic.
template <class T>
__global__ void __launch_bounds__(block_threads)
    softmax_rows_kernel(const T* __restrict__ logits, float* __restrict__ probs, int V) {
    __shared__ float scratch[warps_per_block];
    const T* x = logits + static_cast<std::int64_t>(blockIdx.x) * V;
    float* p = probs + static_cast<std::int64_t>(blockIdx.x) * V;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < V; i += block_threads) m = fmaxf(m, to_f32(x[i]));
    m = block_reduce_max(m, scratch);
    float s = 0;
    for (int i = threadIdx.x; i < V; i += block_threads) s += expf(to_f32(x[i]) - m);
    s = block_reduce_sum(s, scratch);
    const float inv = 1.0f / s;
    for (int i = threadIdx.x; i < V; i += block_threads) p[i] = expf(to_f32(x[i]) - m) * inv;
}

// Top-k over stored probabilities: radix select of the K-th largest (value, -index) composite, one
// read of the row per 8-bit digit, then one more read gathers the K winners for a bitonic sort.
// NaN probabilities (rows without a finite softmax) rank above every number, as in torch.topk.
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
    const int P = 1 << (32 - __clz(K - 1 | 1));  // next power of two >= K (K = 1 gives 2)
    for (int i = K + threadIdx.x; i < P; i += block_threads) winners[i] = 0;
    __syncthreads();
    block_bitonic_sort_desc(winners, P);
    for (int k = threadIdx.x; k < K; k += block_threads) {
        const std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * K + k;
        out_probs[o] = composite_value(winners[k]);
        out_indices[o] = static_cast<std::int32_t>(composite_index(winners[k]));
    }
}

template <class T>
void launch_softmax(const softmax_topk_args& a, float* d_probs_full, cudaStream_t stream) {
    softmax_rows_kernel<T><<<static_cast<unsigned>(a.rows), block_threads, 0, stream>>>(
        static_cast<const T*>(a.d_logits), d_probs_full, static_cast<int>(a.V));
    check_launch("softmax_rows_kernel");
}

}  // namespace

std::size_t softmax_topk_naive_workspace_bytes(std::int64_t rows, std::int64_t V) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(V) * sizeof(float);
}

void launch_softmax_topk_naive(const softmax_topk_args& a, void* d_workspace,
                               std::size_t workspace_bytes, cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_naive");
    if (a.rows == 0) return;
    if (workspace_bytes < softmax_topk_naive_workspace_bytes(a.rows, a.V) || !d_workspace) {
        throw std::invalid_argument("launch_softmax_topk_naive: workspace smaller than rows * V floats");
    }
    auto* full = static_cast<float*>(d_workspace);
    switch (a.type) {
        case elem::f32: launch_softmax<float>(a, full, stream); break;
        case elem::f16: launch_softmax<__half>(a, full, stream); break;
        case elem::bf16: launch_softmax<__nv_bfloat16>(a, full, stream); break;
    }
    topk_rows_kernel<<<static_cast<unsigned>(a.rows), block_threads, 0, stream>>>(
        full, a.d_probs, a.d_indices, static_cast<int>(a.V), static_cast<int>(a.K));
    check_launch("topk_rows_kernel");
}

}  // namespace fusebench::kernels
