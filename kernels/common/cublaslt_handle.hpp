// The cuBLASLt handle the launchers share (the FP8 GEMM peer, the FP8 attention baseline): one per
// device, created on first use and kept for the process, as cublas_handle.hpp does for cuBLAS
// (destroying handles at exit races the driver's own teardown). Inline, so every translation unit
// shares the one table.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

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
