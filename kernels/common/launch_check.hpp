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

// A per-device value asked once per ordinal (launchers use them on every call; racing first callers
// compute and write the same value). `compute` returns the value (>= 0); `Tag` gives each quantity
// its own cache. Ordinals past the cache are computed every time.
template <class Tag, class Compute> int cached_per_device(int dev, Compute compute) {
    constexpr int max_devices = 64;
    static std::atomic<int> cache[max_devices];  // value + 1; 0: not asked yet
    if (dev >= 0 && dev < max_devices) {
        const int known = cache[dev].load();
        if (known > 0) return known - 1;
    }
    const int v = compute();
    if (dev >= 0 && dev < max_devices) cache[dev].store(v + 1);
    return v;
}

// The SM count of device `dev` (persistent launchers size their grid from it). Throws as check_call.
inline int cached_sm_count(int dev) {
    struct tag;
    return cached_per_device<tag>(dev, [dev] {
        int sms = 0;
        check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
        return sms;
    });
}

// The most dynamic shared memory a block of device `dev` may opt in to (cudaFuncSetAttribute's
// MaxDynamicSharedMemorySize limit), in bytes. Throws as check_call.
inline int cached_max_smem_optin(int dev) {
    struct tag;
    return cached_per_device<tag>(dev, [dev] {
        int bytes = 0;
        check_call(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
                   "cudaDeviceGetAttribute(max shared memory per block, opt-in)");
        return bytes;
    });
}

// The peak DRAM bandwidth of device `dev` from its attributes (2 x memory clock x bus width) in GB/s,
// 0 when the device reports neither. Cached: the memory clock query costs ~600 us of host time a call
// on the H200's driver (softmax_topk's fused_stream asked it at every launch at c94de34: e2e 778.5 us
// for a 154.0 us kernel).
inline int cached_peak_dram_gbps(int dev) {
    struct tag;
    return cached_per_device<tag>(dev, [dev] {
        int khz = 0, bits = 0;
        if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess || khz <= 0 || bits <= 0) {
            (void)cudaGetLastError();
            return 0;
        }
        return static_cast<int>(2.0 * khz * 1e3 * bits / 8.0 / 1e9);  // double data rate
    });
}

}  // namespace fusebench::kernels
