// The cuBLASLt handle the launchers share (the FP8 GEMM peer, the FP8 attention baseline): one per
// device, created on first use and kept for the process, as cublas_handle.hpp does for cuBLAS
// (destroying handles at exit races the driver's own teardown). Inline, so every translation unit
// shares the one table.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {

// Throws std::runtime_error "<prefix>: <what>: status N (NAME)" for a failed cuBLASLt call.
inline void check_cublaslt(cublasStatus_t st, const char* prefix, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS) {
        throw std::runtime_error(std::string(prefix) + ": " + what + ": status " + std::to_string(static_cast<int>(st)));
    }
}

inline cublasLtHandle_t cublaslt_handle_for_device(int dev) {
    static std::mutex mu;
    static std::map<int, cublasLtHandle_t> handles;
    std::lock_guard<std::mutex> lock(mu);
    auto it = handles.find(dev);
    if (it != handles.end()) return it->second;
    cublasLtHandle_t h = nullptr;
    check_cublaslt(cublasLtCreate(&h), "cuBLASLt", "cublasLtCreate");
    handles.emplace(dev, h);
    return h;
}

// A matmul planned once per shape and kept for the process (destroying it at exit races the
// driver's teardown, as the handle): descriptor, layouts, the heuristic's algorithm, or the
// reason cuBLASLt rejected the shape (why_not non-empty: unusable).
struct cublaslt_plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulAlgo_t algo{};
    std::string why_not;  // empty: usable
};

// Creates p.desc in the "TN" form cuBLASLt's FP8 kernels take: fp32 compute and scale type, A
// transposed, B not. Throws as check_cublaslt.
inline void cublaslt_create_tn_desc(cublaslt_plan& p, const char* prefix) {
    check_cublaslt(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), prefix, "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    check_cublaslt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), prefix, "TRANSA");
    check_cublaslt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), prefix, "TRANSB");
}

// Asks the heuristic for one algorithm for p's descriptor and layouts (C = D) within
// workspace_bytes; min_alignment > 0 tells it the operands' pointers are only that many bytes
// aligned (it assumes 256 otherwise). Sets p.algo, or p.why_not = "cuBLASLt <version> returns no
// <wanted> on this device (heuristic status ...)". Throws as check_cublaslt for a failed setup call.
inline void cublaslt_choose_algo(cublasLtHandle_t h, cublaslt_plan& p, std::size_t workspace_bytes, std::uint32_t min_alignment,
                                 const std::string& wanted, const char* prefix) {
    cublasLtMatmulPreference_t pref = nullptr;
    check_cublaslt(cublasLtMatmulPreferenceCreate(&pref), prefix, "cublasLtMatmulPreferenceCreate");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t hs = CUBLAS_STATUS_SUCCESS;
    try {
        check_cublaslt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                            sizeof workspace_bytes),
                       prefix, "MAX_WORKSPACE_BYTES");
        if (min_alignment > 0) {
            for (const auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
                check_cublaslt(cublasLtMatmulPreferenceSetAttribute(pref, attr, &min_alignment, sizeof min_alignment), prefix,
                               "MIN_ALIGNMENT");
            }
        }
        hs = cublasLtMatmulAlgoGetHeuristic(h, p.desc, p.la, p.lb, p.ld, p.ld, pref, 1, &result, &found);
    } catch (...) {
        cublasLtMatmulPreferenceDestroy(pref);
        throw;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
        p.why_not = "cuBLASLt " + std::to_string(cublasLtGetVersion()) + " returns no " + wanted + " on this device (heuristic status " +
                    std::to_string(static_cast<int>(hs)) + ", " + cublasGetStatusName(hs) + ", " + std::to_string(found) +
                    " algorithms)";
    } else {
        p.algo = result.algo;
    }
}

// For a domain check that asks cuBLASLt's heuristic: the current device's ordinal in `dev`, or the
// reason cuBLASLt cannot be asked (no device, or cudaGetDevice failed; the error is cleared).
inline const char* cublaslt_device_to_ask(int& dev) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return "no CUDA device to ask cuBLASLt whether it runs this shape";
    }
    if (cudaGetDevice(&dev) != cudaSuccess) {
        cudaGetLastError();
        return "cudaGetDevice failed: cuBLASLt was not asked";
    }
    return nullptr;
}

}  // namespace fusebench::kernels
