#include "harness/sm_clock.hpp"

#include "harness/cuda_check.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace fusebench {

namespace {

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One thread: both ends of the window sit on a %globaltimer tick (the timer may advance in steps
// of up to 1 us), so the window is exact and the cycle count is read right at each tick.
__global__ void sm_clock_kernel(unsigned window_ns, unsigned long long* out) {
    constexpr long long give_up_cycles = 10'000'000'000LL;  // ~5 s: never hang on a stuck timer
    const long long c_start = clock64();
    const unsigned long long t_prev = global_timer_ns();
    unsigned long long t0 = t_prev;
    while (t0 == t_prev && clock64() - c_start < give_up_cycles) t0 = global_timer_ns();
    const long long c0 = clock64();
    const unsigned long long target = t0 + window_ns;
    unsigned long long t1 = t0;
    while (t1 < target && clock64() - c0 < give_up_cycles) t1 = global_timer_ns();
    const long long c1 = clock64();
    out[0] = t1 - t0;
    out[1] = static_cast<unsigned long long>(c1 - c0);
}

}  // namespace

double measure_sm_clock_mhz(cudaStream_t stream) {
    return measure_sm_clock_mhz(stream, 10'000);
}

double measure_sm_clock_mhz(cudaStream_t stream, unsigned window_ns) {
    unsigned long long* d_out = nullptr;
    // Stream-ordered allocation from the pool: microseconds, unlike cudaMalloc.
    bool pooled = true;
    cudaError_t e =
        cudaMallocAsync(reinterpret_cast<void**>(&d_out), 2 * sizeof(unsigned long long), stream);
    if (e == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        pooled = false;
        e = cudaMalloc(reinterpret_cast<void**>(&d_out), 2 * sizeof(unsigned long long));
    }
    CUDA_CHECK(e);
    sm_clock_kernel<<<1, 1, 0, stream>>>(window_ns, d_out);
    e = cudaGetLastError();
    unsigned long long h[2] = {0, 0};
    if (e == cudaSuccess) e = cudaMemcpyAsync(h, d_out, sizeof h, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (pooled) {
        CUDA_CHECK_NOEXCEPT(cudaFreeAsync(d_out, stream));
    } else {
        CUDA_CHECK_NOEXCEPT(cudaFree(d_out));
    }
    CUDA_CHECK(e);
    if (h[0] == 0) throw std::runtime_error("measure_sm_clock_mhz: %globaltimer did not advance");
    return static_cast<double>(h[1]) / static_cast<double>(h[0]) * 1e3;  // cycles/ns -> MHz
}

namespace {

// The few NVML entry points used, declared here so that nothing needs nvml.h or links
// libnvidia-ml (absent on build machines; loaded at run time when present).
using nvml_device = void*;
using nvml_init_fn = int (*)();
using nvml_shutdown_fn = int (*)();
using nvml_by_pci_fn = int (*)(const char*, nvml_device*);
using nvml_max_clock_fn = int (*)(nvml_device, int, unsigned*);
constexpr int nvml_clock_sm = 1;  // NVML_CLOCK_SM

std::optional<double> nvml_max_sm_clock_mhz(int device, std::string& why) {
    char bus_id[64] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
        (void)cudaGetLastError();
        why = "no PCI bus id";
        return std::nullopt;
    }
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        why = "libnvidia-ml.so.1 not found";
        return std::nullopt;
    }
    std::optional<double> mhz;
    auto init = reinterpret_cast<nvml_init_fn>(dlsym(lib, "nvmlInit_v2"));
    auto shutdown = reinterpret_cast<nvml_shutdown_fn>(dlsym(lib, "nvmlShutdown"));
    auto by_pci = reinterpret_cast<nvml_by_pci_fn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    auto max_clock = reinterpret_cast<nvml_max_clock_fn>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    if (init && shutdown && by_pci && max_clock && init() == 0) {
        nvml_device dev = nullptr;
        unsigned v = 0;
        if (by_pci(bus_id, &dev) == 0 && max_clock(dev, nvml_clock_sm, &v) == 0 && v > 0) {
            mhz = static_cast<double>(v);
        } else {
            why = "NVML gave no max SM clock";
        }
        (void)shutdown();
    } else {
        why = "NVML did not initialize";
    }
    dlclose(lib);
    return mhz;
}

}  // namespace

max_sm_clock query_max_sm_clock(int device) {
    max_sm_clock out;
    std::string nvml_why;
    if (auto mhz = nvml_max_sm_clock_mhz(device, nvml_why)) {
        out.mhz = mhz;
        out.source = "nvml";
        return out;
    }
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess && khz > 0) {
        out.mhz = khz * 1e-3;
        out.source = "cuda_attribute";
        return out;
    }
    (void)cudaGetLastError();
    out.reason = "NVML: " + nvml_why + "; cudaDevAttrClockRate unavailable";
    return out;
}

bool clock_below(double measured_mhz, double max_mhz, double fraction) noexcept {
    return max_mhz > 0 && measured_mhz < fraction * max_mhz;
}

}  // namespace fusebench
