// The cuBLAS handle the launchers share: one per device, created on first use and kept for the
// process (cuBLAS handles are expensive to create; destroying them at exit races the driver's own
// teardown). Inline, so every translation unit shares the one table.
#pragma once

#include "kernels/common/launch_check.hpp"

#include <cublas_v2.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {

inline void check_cublas(cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS) {
        throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(st)));
    }
}

inline cublasHandle_t cublas_handle_for_current_device() {
    static std::mutex mu;
    static std::map<int, cublasHandle_t> handles;
    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    std::lock_guard<std::mutex> lock(mu);
    auto it = handles.find(dev);
    if (it != handles.end()) return it->second;
    cublasHandle_t h = nullptr;
    check_cublas(cublasCreate(&h), "cublasCreate");
    handles.emplace(dev, h);
    return h;
}

}  // namespace fusebench::kernels
