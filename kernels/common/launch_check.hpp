// The check every launcher makes after its launch. kernels/ does not use the harness's
// CUDA_CHECK (a kernel must lift out without the harness), so it throws a plain runtime_error
// carrying the error's name and text.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
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

// The SM count of device `dev`, asked once per ordinal (persistent launchers size their grid from
// it on every call; racing first callers write the same value). Throws as check_call.
inline int cached_sm_count(int dev) {
    constexpr int max_devices = 64;
    static std::atomic<int> cache[max_devices];
    if (dev >= 0 && dev < max_devices) {
        const int known = cache[dev].load();
        if (known > 0) return known;
    }
    int sms = 0;
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
    if (dev >= 0 && dev < max_devices) cache[dev].store(sms);
    return sms;
}

}  // namespace fusebench::kernels
