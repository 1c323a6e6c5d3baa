#include "harness/ceiling_gemm.hpp"

#include "harness/ceilings.hpp"
#include "harness/device.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <stdexcept>

namespace fusebench {

namespace {

void cublas_check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
        throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")");
    }
}

void lt_check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string("cuBLASLt fp8 ceiling: ") + what + ": " + cublasGetStatusName(s));
}

const char* kind_name(ceiling_gemm_kind k) {
    switch (k) {
    case ceiling_gemm_kind::bf16: return "bf16";
    case ceiling_gemm_kind::fp16: return "fp16";
    case ceiling_gemm_kind::fp8: return "fp8";
    }
    return "?";
}

}  // namespace

struct ceiling_gemm::impl {
    device_buffer a, b, d, ws;
    cublasHandle_t blas = nullptr;
    cublasLtHandle_t lt = nullptr;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulAlgo_t algo{};

    impl(std::size_t a_bytes, std::size_t d_bytes, std::size_t ws_bytes) : a(a_bytes), b(a_bytes), d(d_bytes), ws(ws_bytes) {}
    ~impl() {
        if (ld) cublasLtMatrixLayoutDestroy(ld);
        if (lb) cublasLtMatrixLayoutDestroy(lb);
        if (la) cublasLtMatrixLayoutDestroy(la);
        if (desc) cublasLtMatmulDescDestroy(desc);
        if (lt) cublasLtDestroy(lt);
        if (blas) (void)cublasDestroy(blas);
    }
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
};

ceiling_gemm::ceiling_gemm(ceiling_gemm_kind kind, int n, cudaStream_t stream) : m_kind(kind), m_n(n), m_stream(stream) {
    const std::size_t elems = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    const bool fp8 = kind == ceiling_gemm_kind::fp8;
    m_impl = std::make_unique<impl>(elems * (fp8 ? 1 : 2), elems * 2, fp8 ? std::size_t{32} << 20 : 0);
    impl& p = *m_impl;
    if (fp8) {
        detail::launch_fill_random_fp8(p.a.get(), elems, 0x9abc, stream);
        detail::launch_fill_random_fp8(p.b.get(), elems, 0xdef0, stream);
        lt_check(cublasLtCreate(&p.lt), "cublasLtCreate");
        lt_check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
        const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        lt_check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
        lt_check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
        lt_check(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_8F_E4M3, n, n, n), "layout A");
        lt_check(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_8F_E4M3, n, n, n), "layout B");
        lt_check(cublasLtMatrixLayoutCreate(&p.ld, CUDA_R_16BF, n, n, n), "layout D");
        cublasLtMatmulPreference_t pref = nullptr;
        lt_check(cublasLtMatmulPreferenceCreate(&pref), "preference");
        cublasLtMatmulHeuristicResult_t result{};
        int found = 0;
        const std::size_t ws_bytes = p.ws.size();
        cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                                 sizeof ws_bytes);
        if (st == CUBLAS_STATUS_SUCCESS) {
            st = cublasLtMatmulAlgoGetHeuristic(p.lt, p.desc, p.la, p.lb, p.ld, p.ld, pref, 1, &result, &found);
        }
        cublasLtMatmulPreferenceDestroy(pref);
        lt_check(st, "heuristic");
        if (found == 0) throw std::runtime_error("cuBLASLt fp8 ceiling: no algorithm for e4m3 x e4m3 -> bf16 on this device");
        p.algo = result.algo;
    } else {
        const bool bf16 = kind == ceiling_gemm_kind::bf16;
        detail::launch_fill_random_16bit(p.a.get(), elems, bf16, 0x1234 + (bf16 ? 0 : 7), stream);
        detail::launch_fill_random_16bit(p.b.get(), elems, bf16, 0x5678 + (bf16 ? 0 : 7), stream);
        cublas_check(cublasCreate(&p.blas), "cublasCreate");
        cublas_check(cublasSetStream(p.blas, stream), "cublasSetStream");
    }
}

ceiling_gemm::~ceiling_gemm() = default;

void ceiling_gemm::run() {
    impl& p = *m_impl;
    const float alpha = 1.0f, beta = 0.0f;
    if (m_kind == ceiling_gemm_kind::fp8) {
        lt_check(cublasLtMatmul(p.lt, p.desc, &alpha, p.a.get(), p.la, p.b.get(), p.lb, &beta, p.d.get(), p.ld, p.d.get(), p.ld,
                                &p.algo, p.ws.get(), p.ws.size(), m_stream),
                 "cublasLtMatmul");
        return;
    }
    const cudaDataType_t t = m_kind == ceiling_gemm_kind::bf16 ? CUDA_R_16BF : CUDA_R_16F;
    cublas_check(cublasGemmEx(p.blas, CUBLAS_OP_N, CUBLAS_OP_N, m_n, m_n, m_n, &alpha, p.a.get(), t, m_n, p.b.get(), t, m_n, &beta,
                              p.d.get(), t, m_n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
}

std::string ceiling_gemm::describe(ceiling_gemm_kind kind, int n) {
    const std::string n3 = std::to_string(n) + "^3";
    if (kind == ceiling_gemm_kind::fp8) {
        return "fp8 e4m3 x e4m3 -> bf16 cublasLtMatmul " + n3 +
               " (TN, unit scales, the heuristic's first algorithm, 32 MiB workspace), fp32 accumulate, random finite codes";
    }
    return std::string(kind_name(kind)) + " cublasGemmEx " + n3 + ", fp32 accumulate, random inputs";
}

}  // namespace fusebench
