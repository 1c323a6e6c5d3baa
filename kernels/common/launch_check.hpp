// The check every launcher makes after its launch. kernels/ does not use the harness's
// CUDA_CHECK (a kernel must lift out without the harness), so it throws a plain runtime_error
// carrying the error's name and text.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace fusebench::kernels {

inline void check_launch(const char* what) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
    }
}

}  // namespace fusebench::kernels
