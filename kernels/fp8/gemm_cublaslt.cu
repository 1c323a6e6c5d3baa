// The cuBLASLt FP8 peer of the fp8_gemm suite (see gemm.hpp): E4M3 x E4M3 -> bf16 with cuBLASLt's
// block scaling, 128 x 128 tiles for the weights and 1 x 128 runs for the activations, fp32 scales.
//
// cuBLASLt is column-major and its FP8 kernels take the "TN" form only (A transposed, B not), which
// is the stored layout here: row-major D (m x n) is column-major D^T (n x m) = B A^T with
// cuBLASLt's A = our B (k x n column-major, transposed; its scales BLK128x128_32F) and cuBLASLt's
// B = our A (k x m column-major; its scales VEC128_32F).
// Scale tables as cuBLASLt reads them (the layouts PyTorch's _scaled_mm passes for the same modes):
//   VEC128_32F on a k x m operand: [ceil(k / 128)] rows of m scales, m contiguous (outer-dim-major);
//     ours is [m][ceil(k / 128)], so it is transposed into the workspace;
//   BLK128x128_32F on a k x n operand: per 128-column tile of n, its ceil(k / 128) scales contiguous,
//     the pitch rounded up to 4 floats (16 bytes); ours has pitch ceil(k / 128), so it is copied
//     with the padded pitch (pad entries 0).
// Both rewrites are one small kernel, part of every launch (and of its time): the cost of feeding
// the DeepSeek-V3 layout to cuBLASLt.
#include "kernels/common/cublaslt_handle.hpp"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/workspace.hpp"
#include "kernels/fp8/gemm.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

namespace fusebench::kernels {

namespace {

constexpr std::size_t lt_workspace_bytes = std::size_t{32} << 20;  // cuBLASLt's own scratch [bytes]

std::size_t blocks_of(std::size_t x) { return (x + fp8_gemm_block - 1) / fp8_gemm_block; }
std::size_t padded_pitch(std::size_t kb) { return (kb + 3) / 4 * 4; }

constexpr const char* lt_prefix = "cuBLASLt fp8";
void check_lt(cublasStatus_t st, const char* what) { check_cublaslt(st, lt_prefix, what); }

// One plan per (device, shape), created on first use and kept for the process (as the handle:
// destroying them at exit races the driver's teardown). A plan that cuBLASLt rejected keeps the reason.
using plan = cublaslt_plan;

struct state {
    std::mutex mu;
    std::map<int, void*> placeholders;  // per device: stands in for the scale tables while planning
    std::map<std::tuple<int, std::size_t, std::size_t, std::size_t>, plan> plans;  // (device, m, n, k)
};

state& global_state() {
    static state s;
    return s;
}

// The handle is the one kernels/common/cublaslt_handle.hpp keeps per device.
cublasLtHandle_t handle_locked(state&, int dev) { return cublaslt_handle_for_device(dev); }

// cuBLASLt's heuristic rejects block-scaled FP8 (status 7, invalid value) unless the scale
// pointers are set on the descriptor (measured on an H100 with cuBLASLt 13.1: with them set it
// returns algorithms for m >= 16 and status 15, not supported, for m = 1). It does not read them;
// each launch sets the real tables. The caller holds st.mu.
void* placeholder_locked(state& st, int dev) {
    auto it = st.placeholders.find(dev);
    if (it != st.placeholders.end()) return it->second;
    void* p = nullptr;
    if (cudaMalloc(&p, 256) != cudaSuccess) {
        cudaGetLastError();
        throw std::runtime_error("cuBLASLt fp8: cudaMalloc of 256 bytes for the planning scale pointers failed");
    }
    st.placeholders[dev] = p;
    return p;
}

// Builds (once) the plan of a shape on device `dev`; the caller holds st.mu.
plan& plan_locked(state& st, int dev, const fp8_gemm_shape& s) {
    const auto key = std::make_tuple(dev, s.m, s.n, s.k);
    auto it = st.plans.find(key);
    if (it != st.plans.end()) return it->second;
    plan& p = st.plans[key];
    try {
        cublasLtHandle_t h = handle_locked(st, dev);
        cublaslt_create_tn_desc(p, lt_prefix);
        const std::int32_t mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        check_lt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof mode_a), "A_SCALE_MODE");
        check_lt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof mode_b), "B_SCALE_MODE");
        const void* placeholder = placeholder_locked(st, dev);
        check_lt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &placeholder, sizeof placeholder),
                 "A_SCALE_POINTER (planning)");
        check_lt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &placeholder, sizeof placeholder),
                 "B_SCALE_POINTER (planning)");
        const auto m = static_cast<std::uint64_t>(s.m), n = static_cast<std::uint64_t>(s.n), k = static_cast<std::uint64_t>(s.k);
        check_lt(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_8F_E4M3, k, n, static_cast<std::int64_t>(k)), "layout A (weights)");
        check_lt(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_8F_E4M3, k, m, static_cast<std::int64_t>(k)), "layout B (activations)");
        check_lt(cublasLtMatrixLayoutCreate(&p.ld, CUDA_R_16BF, n, m, static_cast<std::int64_t>(n)), "layout D");
        cublaslt_choose_algo(h, p, lt_workspace_bytes, 0,
                             "E4M3 x E4M3 -> bf16 algorithm with 128x128 / 1x128 block scales for m=" + std::to_string(s.m) +
                                 " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k),
                             lt_prefix);
    } catch (const std::exception& e) {
        p.why_not = e.what();
    }
    return p;
}

// a_t[j * m + r] = a_scale[r * kb + j]; b_p[t * pitch + j] = b_scale[t * kb + j] (0 for j >= kb).
__global__ void prepare_scales(const float* __restrict__ a_scale, std::size_t m, std::size_t kb, float* __restrict__ a_t,
                               const float* __restrict__ b_scale, std::size_t nb, std::size_t pitch,
                               float* __restrict__ b_p) {
    const std::size_t total_a = m * kb, total = total_a + nb * pitch;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        if (i < total_a) {
            const std::size_t j = i / m, r = i % m;
            a_t[i] = a_scale[r * kb + j];
        } else {
            const std::size_t t = (i - total_a) / pitch, j = (i - total_a) % pitch;
            b_p[i - total_a] = j < kb ? b_scale[t * kb + j] : 0.0f;
        }
    }
}

const char* layout_rule(const fp8_gemm_shape& s) {
    if (s.m == 0 || s.n == 0 || s.k == 0) return "empty shape";
    if (s.k % 16 != 0) return "cuBLASLt FP8 needs k a multiple of 16 (16-byte leading dimensions of A and B)";
    if (s.n % 16 != 0) return "cuBLASLt FP8 needs n a multiple of 16";
    if (s.m > 2147483647u || s.n > 2147483647u || s.k > 2147483647u) return "a dimension over 2^31 - 1";
    return nullptr;
}

}  // namespace

std::size_t fp8_gemm_cublaslt_workspace_bytes(const fp8_gemm_shape& s) {
    const std::size_t kb = blocks_of(s.k), nb = blocks_of(s.n);
    return align256(s.m * kb * 4) + align256(nb * padded_pitch(kb) * 4) + lt_workspace_bytes;
}

std::string fp8_gemm_cublaslt_describe() {
    return "cuBLASLt " + std::to_string(cublasLtGetVersion()) + " (runtime), built against " + std::to_string(CUBLAS_VERSION);
}

const char* fp8_gemm_cublaslt_unsupported(const fp8_gemm_shape& s) {
    if (const char* why = layout_rule(s)) return why;
    int dev = 0;
    if (const char* why = cublaslt_device_to_ask(dev)) return why;
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    const plan& p = plan_locked(st, dev, s);
    return p.why_not.empty() ? nullptr : p.why_not.c_str();
}

void launch_fp8_gemm_cublaslt(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale, const std::uint8_t* b,
                              const float* b_scale, void* d, void* workspace, std::size_t workspace_bytes,
                              cudaStream_t stream) {
    if (const char* why = layout_rule(s)) throw std::invalid_argument(std::string("cuBLASLt fp8: ") + why);
    if (workspace_bytes < fp8_gemm_cublaslt_workspace_bytes(s)) throw std::invalid_argument("cuBLASLt fp8: workspace too small");
    const std::size_t kb = blocks_of(s.k), nb = blocks_of(s.n), pitch = padded_pitch(kb);
    auto* a_t = static_cast<float*>(workspace);
    auto* b_p = reinterpret_cast<float*>(static_cast<char*>(workspace) + align256(s.m * kb * 4));
    void* lt_ws = static_cast<char*>(workspace) + align256(s.m * kb * 4) + align256(nb * pitch * 4);

    const std::size_t total = s.m * kb + nb * pitch;
    const std::size_t blocks = (total + 255) / 256;
    prepare_scales<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(a_scale, s.m, kb, a_t, b_scale, nb,
                                                                                              pitch, b_p);
    check_launch("cuBLASLt fp8: scale layout kernel");

    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    plan& p = plan_locked(st, dev, s);
    if (!p.why_not.empty()) throw std::runtime_error(p.why_not);
    // The scale pointers are attributes of the (cached) descriptor: set for this launch, under the lock.
    const void* scale_a_lt = b_p;  // cuBLASLt's A is our B
    const void* scale_b_lt = a_t;
    check_lt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a_lt, sizeof scale_a_lt),
             "A_SCALE_POINTER");
    check_lt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b_lt, sizeof scale_b_lt),
             "B_SCALE_POINTER");
    const float alpha = 1.0f, beta = 0.0f;
    check_lt(cublasLtMatmul(handle_locked(st, dev), p.desc, &alpha, b, p.la, a, p.lb, &beta, d, p.ld, d, p.ld, &p.algo, lt_ws,
                            lt_workspace_bytes, stream),
             "cublasLtMatmul");
    check_launch("cuBLASLt fp8: cublasLtMatmul");
}

}  // namespace fusebench::kernels
