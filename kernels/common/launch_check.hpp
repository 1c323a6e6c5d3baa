// The check every launcher makes after its launch. kernels/ does not use the harness's
// CUDA_CHECK (a kernel must lift out without the harness), so it throws a plain runtime_error
// carrying the error's name and text.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace fusebench::kernels {

// Throws for a failed runtime call a launcher makes (device queries, attributes, the launch).
inline void check_call(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
    }
}

inline void check_launch(const char* what) { check_call(cudaGetLastError(), what); }

}  // namespace fusebench::kernels
