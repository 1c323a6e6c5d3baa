// The SM clock the GPU actually ran at: a throttled or idle-clocked GPU gives slow samples that
// look like a slow kernel. Read on the device (clock64 cycles over a %globaltimer window), so it
// needs no NVML and no privileges.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace fusebench {

// SM clock in MHz over a short window (clock64 cycles / %globaltimer ns from a one-thread
// kernel): 10 us of GPU time plus one launch and a synchronize of `stream`, about 40 us in all
// (the first call also loads the module: ~10 ms, so call it once at start-up). Throws cuda_error
// on CUDA errors. Call it outside a traced sample: its kernel is a real kernel.
double measure_sm_clock_mhz(cudaStream_t stream);

// The same with an explicit window [ns]; longer windows average more, shorter ones cost less.
double measure_sm_clock_mhz(cudaStream_t stream, unsigned window_ns);

struct max_sm_clock {
    std::optional<double> mhz;  // null when neither source answers
    std::string source;         // "nvml" | "cuda_attribute"
    std::string reason;         // why mhz is null
};

// The device's maximum SM clock: NVML's max SM clock when libnvidia-ml is present (loaded at
// run time, matched to the CUDA device by PCI bus id), else cudaDevAttrClockRate. Never throws.
max_sm_clock query_max_sm_clock(int device);

// A sample taken below `fraction` (default 75 %) of the maximum clock is flagged (never dropped).
bool clock_below(double measured_mhz, double max_mhz, double fraction = 0.75) noexcept;

}  // namespace fusebench
