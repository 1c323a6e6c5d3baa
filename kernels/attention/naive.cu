// The unfused attention baseline (variant `naive`) and the shape validation every attention
// launcher shares.
//
// Per group, one (batch, kv head) with its g = heads_q / heads_kv query heads: the layout
// [batch, heads, seq, head_dim] makes the group's query heads one contiguous (g * seq_q) x head_dim
// matrix, so each step is one strided-batched cuBLAS call over the groups of a chunk:
//   1. S = scale * Q_group K^T, fp32, (g * seq_q) x seq_kv                 (cuBLAS, fp32 accumulate)
//   2. P = softmax(S + mask) in the input type, lse per row                (one block per row)
//   3. O_group = P V, input type                                           (cuBLAS, fp32 accumulate)
// The whole Sq x Skv square is computed and masked (the masked half is not skipped, as an unfused
// framework implementation does). Workspace: the fp32 scores and P of `chunk` groups; chunk is as
// many groups as fit in 2 GiB, at least one.
#include "kernels/attention/attention.hpp"
#include "kernels/common/cublas_handle.hpp"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/workspace.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {

void validate_attention_shape(const attention_shape& s, elem type) {
    auto fail = [](const std::string& why) { throw std::invalid_argument("attention: " + why); };
    if (s.batch <= 0 || s.heads_q <= 0 || s.heads_kv <= 0 || s.seq_q <= 0 || s.seq_kv <= 0 || s.head_dim <= 0) {
        fail("batch, heads_q, heads_kv, seq_q, seq_kv and head_dim must be positive");
    }
    if (s.heads_q % s.heads_kv != 0) fail("heads_q must be a multiple of heads_kv");
    if (s.causal && s.seq_q > s.seq_kv) fail("causal attention needs seq_q <= seq_kv (bottom-right aligned mask)");
    if (!std::isfinite(s.scale) || s.scale <= 0) fail("scale must be finite and positive");
    if (type != elem::bf16 && type != elem::f16) fail("attention kernels take bf16 or fp16");
    if (s.head_dim % 8 != 0) fail("head_dim must be a multiple of 8 (16-byte rows)");
}

namespace {

constexpr std::size_t chunk_limit = std::size_t{2} << 30;  // 2 GiB of scores + P at once


struct group_sizes {
    std::size_t rows;          // g * seq_q
    std::size_t score_bytes;   // fp32 scores of one group
    std::size_t p_bytes;       // P of one group
    std::size_t groups;        // batch * heads_kv
};

group_sizes sizes_of(const attention_shape& s) {
    const std::size_t g = static_cast<std::size_t>(s.heads_q / s.heads_kv);
    group_sizes z;
    z.rows = g * static_cast<std::size_t>(s.seq_q);
    z.score_bytes = z.rows * static_cast<std::size_t>(s.seq_kv) * 4;
    z.p_bytes = z.rows * static_cast<std::size_t>(s.seq_kv) * 2;
    z.groups = static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.heads_kv);
    return z;
}

// Workspace for `chunk` groups: scores, then P, each region 256-byte aligned.
std::size_t chunk_bytes(const group_sizes& z, std::size_t chunk) {
    return align256(z.score_bytes * chunk) + align256(z.p_bytes * chunk);
}

std::size_t default_chunk(const group_sizes& z) {
    const std::size_t per = z.score_bytes + z.p_bytes;
    std::size_t c = per > 0 ? chunk_limit / per : z.groups;
    if (c < 1) c = 1;
    if (c > z.groups) c = z.groups;
    if (c > 65535) c = 65535;  // the softmax grid's y dimension
    return c;
}

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
    return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
    return __float2half_rn(x);
}

constexpr int softmax_threads = 256;

// Block-wide reduction in a fixed order (warp shuffles, then the first warp over the warp
// results): deterministic.
template <bool is_max>
__device__ float block_reduce(float v, float* scratch) {
    for (int o = 16; o > 0; o /= 2) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read by a previous reduction
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < softmax_threads / 32 ? scratch[lane] : (is_max ? -INFINITY : 0.f);
        for (int o = 16; o > 0; o /= 2) {
            const float w = __shfl_xor_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, w) : v + w;
        }
        if (lane == 0) scratch[0] = v;
    }
    __syncthreads();
    return scratch[0];
}

// One block per score row. Row r of group (first group + blockIdx.y) is query row r % seq_q of
// the group's query head r / seq_q.
template <typename T>
__global__ void __launch_bounds__(softmax_threads) masked_softmax(const float* scores, T* probs, float* lse,
                                                                   int rows_per_group, int seq_q, int seq_kv,
                                                                   int causal, std::size_t first_lse_row) {
    __shared__ float scratch[32];
    const std::size_t row = static_cast<std::size_t>(blockIdx.y) * rows_per_group + blockIdx.x;
    const float* s = scores + row * seq_kv;
    T* p = probs + row * seq_kv;
    const int i = static_cast<int>(blockIdx.x) % seq_q;
    const int last = causal ? min(seq_kv - 1, i + (seq_kv - seq_q)) : seq_kv - 1;

    float mx = -INFINITY;
    for (int j = threadIdx.x; j <= last; j += softmax_threads) mx = fmaxf(mx, s[j]);
    mx = block_reduce<true>(mx, scratch);
    float sum = 0.f;
    for (int j = threadIdx.x; j <= last; j += softmax_threads) sum += expf(s[j] - mx);
    sum = block_reduce<false>(sum, scratch);
    const float inv = 1.0f / sum;
    for (int j = threadIdx.x; j < seq_kv; j += softmax_threads) {
        p[j] = j <= last ? from_float<T>(expf(s[j] - mx) * inv) : from_float<T>(0.f);
    }
    if (threadIdx.x == 0) lse[first_lse_row + row] = mx + logf(sum);
}

}  // namespace

std::size_t attention_naive_workspace_bytes(const attention_shape& s, elem type) {
    validate_attention_shape(s, type);
    const group_sizes z = sizes_of(s);
    return chunk_bytes(z, default_chunk(z));
}

void launch_attention_naive(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                            float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
    validate_attention_shape(s, type);
    const group_sizes z = sizes_of(s);
    if (workspace == nullptr || workspace_bytes < chunk_bytes(z, 1)) {
        throw std::invalid_argument("attention naive: workspace of " + std::to_string(workspace_bytes) +
                                    " bytes, one group needs " + std::to_string(chunk_bytes(z, 1)));
    }
    std::size_t chunk = default_chunk(z);
    while (chunk > 1 && chunk_bytes(z, chunk) > workspace_bytes) --chunk;
    if (z.rows > 2147483647ull) throw std::invalid_argument("attention naive: more than 2^31 - 1 score rows per group");

    float* scores = static_cast<float*>(workspace);
    void* probs = static_cast<char*>(workspace) + align256(z.score_bytes * chunk);
    const cudaDataType_t dt = type == elem::bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const std::size_t el = 2;
    const long long d = s.head_dim, sq_rows = static_cast<long long>(z.rows), skv = s.seq_kv;
    const long long q_stride = sq_rows * d, kv_stride = skv * d, s_stride = sq_rows * skv;

    cublasHandle_t h = cublas_handle_for_current_device();
    check_cublas(cublasSetStream(h, stream), "cublasSetStream");
    const float alpha_s = s.scale, one = 1.0f, zero = 0.0f;

    for (std::size_t g0 = 0; g0 < z.groups; g0 += chunk) {
        const int n = static_cast<int>(std::min(chunk, z.groups - g0));
        const char* qg = static_cast<const char*>(q) + g0 * static_cast<std::size_t>(q_stride) * el;
        const char* kg = static_cast<const char*>(k) + g0 * static_cast<std::size_t>(kv_stride) * el;
        const char* vg = static_cast<const char*>(v) + g0 * static_cast<std::size_t>(kv_stride) * el;
        char* og = static_cast<char*>(o) + g0 * static_cast<std::size_t>(q_stride) * el;

        // Row-major S (rows x skv) is column-major S^T (skv x rows) = K Q^T with K, Q read as
        // column-major d x skv and d x rows matrices: C = op_T(A) * B, A = K (lda d), B = Q (ldb d).
        check_cublas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(skv), static_cast<int>(sq_rows),
                                                static_cast<int>(d), &alpha_s, kg, dt, static_cast<int>(d), kv_stride, qg,
                                                dt, static_cast<int>(d), q_stride, &zero, scores, CUDA_R_32F,
                                                static_cast<int>(skv), s_stride, n, CUBLAS_COMPUTE_32F,
                                                CUBLAS_GEMM_DEFAULT),
                     "cublasGemmStridedBatchedEx(scores)");

        const dim3 grid(static_cast<unsigned>(sq_rows), static_cast<unsigned>(n));
        const std::size_t first_lse_row = g0 * z.rows;
        if (type == elem::bf16) {
            masked_softmax<__nv_bfloat16><<<grid, softmax_threads, 0, stream>>>(
                scores, static_cast<__nv_bfloat16*>(probs), lse, static_cast<int>(sq_rows), s.seq_q, s.seq_kv,
                s.causal ? 1 : 0, first_lse_row);
        } else {
            masked_softmax<__half><<<grid, softmax_threads, 0, stream>>>(scores, static_cast<__half*>(probs), lse,
                                                                        static_cast<int>(sq_rows), s.seq_q, s.seq_kv,
                                                                        s.causal ? 1 : 0, first_lse_row);
        }
        check_launch("attention naive: masked softmax");

        // Row-major O (rows x d) is column-major O^T (d x rows) = V^T-as-stored * P^T-as-stored:
        // A = V (column-major d x skv, lda d), B = P (column-major skv x rows, ldb skv).
        check_cublas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d), static_cast<int>(sq_rows),
                                                static_cast<int>(skv), &one, vg, dt, static_cast<int>(d), kv_stride, probs,
                                                dt, static_cast<int>(skv), s_stride, &zero, og, dt, static_cast<int>(d),
                                                q_stride, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmStridedBatchedEx(P V)");
    }
}

}  // namespace fusebench::kernels
