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
//
// naive_fp8 (naive_fp8.hpp, at the end) is the same path with step 1 on cuBLASLt's E4M3 GEMM.
#include "kernels/attention/attention.hpp"
#include "kernels/attention/naive_fp8.hpp"
#include "kernels/common/cublas_handle.hpp"
#include "kernels/common/cublaslt_handle.hpp"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/workspace.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

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
                                                                   int causal, std::size_t first_lse_row,
                                                                   int score_pitch) {
    __shared__ float scratch[32];
    const std::size_t row = static_cast<std::size_t>(blockIdx.y) * rows_per_group + blockIdx.x;
    const float* s = scores + row * static_cast<std::size_t>(score_pitch);
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

// Steps 2 and 3 for the groups [g0, g0 + n) of a chunk: the masked softmax of the fp32 scores
// (rows `score_pitch` floats apart) into P (rows seq_kv elements apart) and the lse, then
// O_group = P V. Shared by naive and naive_fp8, which differ only in step 1.
void softmax_and_pv(const attention_shape& s, elem type, const group_sizes& z, const float* scores, int score_pitch,
                    void* probs, float* lse, const void* v, void* o, std::size_t g0, int n, cudaStream_t stream) {
    const cudaDataType_t dt = type == elem::bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const std::size_t el = 2;
    const long long d = s.head_dim, sq_rows = static_cast<long long>(z.rows), skv = s.seq_kv;
    const long long q_stride = sq_rows * d, kv_stride = skv * d, s_stride = sq_rows * skv;
    const char* vg = static_cast<const char*>(v) + g0 * static_cast<std::size_t>(kv_stride) * el;
    char* og = static_cast<char*>(o) + g0 * static_cast<std::size_t>(q_stride) * el;

    const dim3 grid(static_cast<unsigned>(sq_rows), static_cast<unsigned>(n));
    const std::size_t first_lse_row = g0 * z.rows;
    if (type == elem::bf16) {
        masked_softmax<__nv_bfloat16><<<grid, softmax_threads, 0, stream>>>(
            scores, static_cast<__nv_bfloat16*>(probs), lse, static_cast<int>(sq_rows), s.seq_q, s.seq_kv,
            s.causal ? 1 : 0, first_lse_row, score_pitch);
    } else {
        masked_softmax<__half><<<grid, softmax_threads, 0, stream>>>(scores, static_cast<__half*>(probs), lse,
                                                                    static_cast<int>(sq_rows), s.seq_q, s.seq_kv,
                                                                    s.causal ? 1 : 0, first_lse_row, score_pitch);
    }
    check_launch("attention naive: masked softmax");

    // Row-major O (rows x d) is column-major O^T (d x rows) = V^T-as-stored * P^T-as-stored:
    // A = V (column-major d x skv, lda d), B = P (column-major skv x rows, ldb skv).
    cublasHandle_t h = cublas_handle_for_current_device();
    check_cublas(cublasSetStream(h, stream), "cublasSetStream");
    const float one = 1.0f, zero = 0.0f;
    check_cublas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d), static_cast<int>(sq_rows),
                                            static_cast<int>(skv), &one, vg, dt, static_cast<int>(d), kv_stride, probs,
                                            dt, static_cast<int>(skv), s_stride, &zero, og, dt, static_cast<int>(d),
                                            q_stride, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx(P V)");
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
    const float alpha_s = s.scale, zero = 0.0f;

    for (std::size_t g0 = 0; g0 < z.groups; g0 += chunk) {
        const int n = static_cast<int>(std::min(chunk, z.groups - g0));
        const char* qg = static_cast<const char*>(q) + g0 * static_cast<std::size_t>(q_stride) * el;
        const char* kg = static_cast<const char*>(k) + g0 * static_cast<std::size_t>(kv_stride) * el;

        // Row-major S (rows x skv) is column-major S^T (skv x rows) = K Q^T with K, Q read as
        // column-major d x skv and d x rows matrices: C = op_T(A) * B, A = K (lda d), B = Q (ldb d).
        check_cublas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(skv), static_cast<int>(sq_rows),
                                                static_cast<int>(d), &alpha_s, kg, dt, static_cast<int>(d), kv_stride, qg,
                                                dt, static_cast<int>(d), q_stride, &zero, scores, CUDA_R_32F,
                                                static_cast<int>(skv), s_stride, n, CUBLAS_COMPUTE_32F,
                                                CUBLAS_GEMM_DEFAULT),
                     "cublasGemmStridedBatchedEx(scores)");

        softmax_and_pv(s, type, z, scores, static_cast<int>(skv), probs, lse, v, o, g0, n, stream);
    }
}

}  // namespace fusebench::kernels

// ------------------------------------------------------------------ naive_fp8 (naive_fp8.hpp)
namespace fusebench::kernels {

namespace {

constexpr std::size_t fp8_lt_workspace_bytes = std::size_t{32} << 20;  // cuBLASLt's own scratch [bytes]

// The scores GEMM runs on seq_kv rounded up to 16 keys (cuBLASLt's m; PyTorch's _scaled_mm asks
// the same dimension to be a multiple of 16 of cuBLASLt's FP8 path): where seq_kv is not a multiple,
// the group's K codes are copied into a staging buffer whose extra rows are zero (scores of 0 that
// the masked softmax never reads, as it reads keys < seq_kv only). Score rows are that many floats
// apart, so each head's block of the fp32 scores (cuBLASLt's D) starts 64-byte aligned and its
// leading dimension is a multiple of 16 bytes.
std::size_t fp8_keys_padded(const attention_shape& s) { return (static_cast<std::size_t>(s.seq_kv) + 15) / 16 * 16; }
std::size_t fp8_score_pitch(const attention_shape& s) { return fp8_keys_padded(s); }
bool fp8_needs_staging(const attention_shape& s) { return fp8_keys_padded(s) != static_cast<std::size_t>(s.seq_kv); }
std::size_t fp8_staging_bytes(const attention_shape& s) {
    return fp8_needs_staging(s) ? align256(fp8_keys_padded(s) * static_cast<std::size_t>(s.head_dim)) : 0;
}

std::size_t fp8_chunk_bytes(const attention_shape& s, const group_sizes& z, std::size_t chunk) {
    return align256(z.rows * fp8_score_pitch(s) * 4 * chunk) + align256(z.p_bytes * chunk) + fp8_staging_bytes(s) +
           fp8_lt_workspace_bytes;
}

std::size_t fp8_default_chunk(const attention_shape& s, const group_sizes& z) {
    const std::size_t per = z.rows * fp8_score_pitch(s) * 4 + z.p_bytes;
    std::size_t c = per > 0 ? chunk_limit / per : z.groups;
    if (c < 1) c = 1;
    if (c > z.groups) c = z.groups;
    if (c > 65535) c = 65535;  // the softmax grid's y dimension
    return c;
}

// One cuBLASLt plan per (device, seq_kv, seq_q, head_dim): column-major D (padded keys x seq_q, ld
// the score pitch) = A^T B in code units (alpha 1, no scales: see fp8_scale_scores), A = the K codes
// (head_dim x padded keys), B = the Q
// codes (head_dim x seq_q), the "TN" form cuBLASLt's FP8 kernels take. Kept for the process; a
// plan cuBLASLt rejected keeps the reason.
using fp8_plan = cublaslt_plan;

struct fp8_state {
    std::mutex mu;
    std::map<std::tuple<int, int, int, int>, fp8_plan> plans;
};

fp8_state& fp8_global() {
    static fp8_state st;
    return st;
}

constexpr const char* fp8_lt_prefix = "attention naive_fp8: cuBLASLt";
void check_lt(cublasStatus_t st, const char* what) { check_cublaslt(st, fp8_lt_prefix, what); }

fp8_plan& fp8_plan_locked(fp8_state& st, int dev, const attention_shape& s) {
    const auto key = std::make_tuple(dev, s.seq_kv, s.seq_q, s.head_dim);
    auto it = st.plans.find(key);
    if (it != st.plans.end()) return it->second;
    fp8_plan& p = st.plans[key];
    try {
        cublasLtHandle_t h = cublaslt_handle_for_device(dev);
        cublaslt_create_tn_desc(p, fp8_lt_prefix);
        const std::int8_t fast = 1;
        check_lt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "FAST_ACCUM");
        const auto d = static_cast<std::uint64_t>(s.head_dim), skv = static_cast<std::uint64_t>(fp8_keys_padded(s)),
                   sq = static_cast<std::uint64_t>(s.seq_q);
        check_lt(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_8F_E4M3, d, skv, static_cast<std::int64_t>(d)), "layout A (K codes)");
        check_lt(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_8F_E4M3, d, sq, static_cast<std::int64_t>(d)), "layout B (Q codes)");
        check_lt(cublasLtMatrixLayoutCreate(&p.ld, CUDA_R_32F, skv, sq, static_cast<std::int64_t>(fp8_score_pitch(s))),
                 "layout D (fp32 scores)");
        // The per-head pointers are only 16-byte aligned (Q heads of seq_q * head_dim bytes, score
        // blocks of seq_q * pitch floats); an algorithm picked for 256 may reject (status 15) or not
        // serve a less aligned pointer.
        cublaslt_choose_algo(h, p, fp8_lt_workspace_bytes, 16,
                             "E4M3 x E4M3 -> fp32 fast-accumulation algorithm for the per-head scores GEMM (m=" +
                                 std::to_string(fp8_keys_padded(s)) + " n=" + std::to_string(s.seq_q) +
                                 " k=" + std::to_string(s.head_dim) + ")",
                             fp8_lt_prefix);
    } catch (const std::exception& e) {
        p.why_not = e.what();
    }
    return p;
}

// scores[row] *= scale * q_scale[head] * k_scale[kv head] over the first `cols` entries of each
// score row of groups [g0, g0 + gridDim.y) (grid: rows per group x groups). Why a pass of its own:
// cuBLASLt 13.1 on an H100 returned CUBLAS_STATUS_NOT_SUPPORTED from cublasLtMatmul (while its
// heuristic returned algorithms) for every E4M3 "TN" matmul with the per-tensor A / B scale
// pointers set: fp32 and bf16 D, fast accumulation on and off, each of 8 heuristic algorithms,
// minimum alignment 16 or 256 (a standalone probe, kernels/attention/probes/cublaslt_fp8_scales.cu); without them it runs. So the
// GEMM writes code-unit scores (exact E4M3 products summed in the tensor cores' accumulator, as the
// E4M3 wgmma does) and scale_eff, exact (a power of two times the softmax scale), is applied here
// with one fp32 multiply per score, as wgmma_fp8qk folds it into its softmax.
__global__ void fp8_scale_scores(float* scores, std::size_t pitch, int cols, int rows_per_group, int seq_q, int group,
                                 std::size_t g0, const float* __restrict__ q_scale, const float* __restrict__ k_scale,
                                 float scale) {
    const std::size_t gi = g0 + blockIdx.y;  // batch * heads_kv + kv head
    const std::size_t head = gi * static_cast<std::size_t>(group) + blockIdx.x / static_cast<unsigned>(seq_q);
    const float scale_eff = scale * (q_scale[head] * k_scale[gi]);
    float* row = scores + (static_cast<std::size_t>(blockIdx.y) * rows_per_group + blockIdx.x) * pitch;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) row[j] *= scale_eff;
}

const char* fp8_layout_rule(const attention_shape& s, elem type) {
    if (type != elem::bf16) return "naive_fp8 takes bf16 V and O only";
    if (s.head_dim % 16 != 0) return "cuBLASLt FP8 needs head_dim a multiple of 16 (16-byte leading dimensions of Q and K)";
    return nullptr;
}

}  // namespace

const char* attention_naive_fp8_unsupported(const attention_shape& s, elem type) {
    try {
        validate_attention_shape(s, type);
    } catch (const std::invalid_argument&) {
        return "a shape the attention launchers reject (validate_attention_shape)";
    }
    if (const char* why = fp8_layout_rule(s, type)) return why;
    int dev = 0;
    if (const char* why = cublaslt_device_to_ask(dev)) return why;
    fp8_state& st = fp8_global();
    std::lock_guard<std::mutex> lock(st.mu);
    const fp8_plan& p = fp8_plan_locked(st, dev, s);
    return p.why_not.empty() ? nullptr : p.why_not.c_str();
}

std::size_t attention_naive_fp8_workspace_bytes(const attention_shape& s, elem type) {
    validate_attention_shape(s, type);
    const group_sizes z = sizes_of(s);
    return fp8_chunk_bytes(s, z, fp8_default_chunk(s, z));
}

void launch_attention_naive_fp8(const attention_shape& s, elem type, const std::uint8_t* q, const float* q_scale,
                                const std::uint8_t* k, const float* k_scale, const void* v, void* o, float* lse,
                                void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
    validate_attention_shape(s, type);
    if (const char* why = fp8_layout_rule(s, type)) throw std::invalid_argument(std::string("attention naive_fp8: ") + why);
    const group_sizes z = sizes_of(s);
    if (workspace == nullptr || workspace_bytes < fp8_chunk_bytes(s, z, 1)) {
        throw std::invalid_argument("attention naive_fp8: workspace of " + std::to_string(workspace_bytes) +
                                    " bytes, one group needs " + std::to_string(fp8_chunk_bytes(s, z, 1)));
    }
    std::size_t chunk = fp8_default_chunk(s, z);
    while (chunk > 1 && fp8_chunk_bytes(s, z, chunk) > workspace_bytes) --chunk;
    if (z.rows > 2147483647ull) throw std::invalid_argument("attention naive_fp8: more than 2^31 - 1 score rows per group");

    const std::size_t pitch = fp8_score_pitch(s);
    float* scores = static_cast<float*>(workspace);
    void* probs = static_cast<char*>(workspace) + align256(z.rows * pitch * 4 * chunk);
    auto* staging = reinterpret_cast<std::uint8_t*>(static_cast<char*>(probs) + align256(z.p_bytes * chunk));
    void* lt_ws = reinterpret_cast<char*>(staging) + fp8_staging_bytes(s);
    const std::size_t kpad = fp8_keys_padded(s);
    const std::size_t g = static_cast<std::size_t>(s.heads_q / s.heads_kv);
    const std::size_t d = static_cast<std::size_t>(s.head_dim), sq = static_cast<std::size_t>(s.seq_q),
                      skv = static_cast<std::size_t>(s.seq_kv);

    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    fp8_state& st = fp8_global();
    std::lock_guard<std::mutex> lock(st.mu);
    fp8_plan& p = fp8_plan_locked(st, dev, s);
    if (!p.why_not.empty()) throw std::runtime_error("attention naive_fp8: " + p.why_not);
    cublasLtHandle_t h = cublaslt_handle_for_device(dev);
    const float alpha = 1.0f, beta = 0.0f;  // code units: scale_eff is applied by fp8_scale_scores

    for (std::size_t g0 = 0; g0 < z.groups; g0 += chunk) {
        const int n = static_cast<int>(std::min(chunk, z.groups - g0));
        // Step 1, one matmul per query head: group gi is (batch, kv head) = (gi / heads_kv,
        // gi % heads_kv); its query heads are g consecutive heads, the j-th at global head index
        // gi * g + j (so K head = q head / g), whose rows are score rows [j * sq, (j + 1) * sq)
        // of the group.
        for (int c = 0; c < n; ++c) {
            const std::size_t gi = g0 + static_cast<std::size_t>(c);
            const std::uint8_t* kg = k + gi * skv * d;
            if (fp8_needs_staging(s)) {
                check_call(cudaMemcpyAsync(staging, kg, skv * d, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync (K staging)");
                check_call(cudaMemsetAsync(staging + skv * d, 0, (kpad - skv) * d, stream), "cudaMemsetAsync (K staging)");
                kg = staging;
            }
            for (std::size_t j = 0; j < g; ++j) {
                const std::size_t qh = gi * g + j;  // batch * heads_q + head
                const std::uint8_t* qh_codes = q + qh * sq * d;
                float* sh = scores + (static_cast<std::size_t>(c) * z.rows + j * sq) * pitch;
                check_lt(cublasLtMatmul(h, p.desc, &alpha, kg, p.la, qh_codes, p.lb, &beta, sh, p.ld, sh, p.ld, &p.algo, lt_ws,
                                        fp8_lt_workspace_bytes, stream),
                         "cublasLtMatmul(scores)");
            }
        }
        check_launch("attention naive_fp8: cublasLtMatmul(scores)");
        fp8_scale_scores<<<dim3(static_cast<unsigned>(z.rows), static_cast<unsigned>(n)), softmax_threads, 0, stream>>>(
            scores, pitch, s.seq_kv, static_cast<int>(z.rows), s.seq_q, static_cast<int>(g), g0, q_scale, k_scale, s.scale);
        check_launch("attention naive_fp8: scale scores");
        softmax_and_pv(s, type, z, scores, static_cast<int>(pitch), probs, lse, v, o, g0, n, stream);
    }
}

}  // namespace fusebench::kernels
