// Hardware counters with the CUPTI Range Profiler + Profiler Host APIs (CUDA >= 12.6; the
// cupti_profiler_target.h session API is deprecated in 13.0), AutoRange + KernelReplay: one range
// per kernel, CUPTI replays each kernel as many passes as the metrics need and saves/restores the
// memory it touches. A pass of its own: never the timing pass (replayed kernels have no activity
// timestamps), never on buffers used for correctness.
#pragma once

#include <cuda_runtime_api.h>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fusebench {

struct counter_result {
    std::string status;  // "ok" | "unavailable" | "error"
    // Machine-readable: "no_device", "cupti_multiple_subscribers", "insufficient_privileges",
    // "unsupported_device", "unsupported_metric:<name>", "counters_busy", "cupti_not_initialized",
    // "profiler_already_active", "no_kernels_profiled", "ranges_dropped", "cupti_error:<NAME>",
    // "cuda_error:<NAME>". Empty when status is "ok" and every metric has a value.
    std::string reason;
    std::string detail;                // human text with the CUPTI call, its error name and a hint
    std::vector<std::string> metrics;  // requested, in order
    std::map<std::string, std::optional<double>> values;  // null (nullopt) when unknown, never 0
    std::map<std::string, std::string> units;             // "byte", "nanosecond", "percent", ...
    std::map<std::string, std::string> metric_reasons;    // why a value is null
    int ranges = 0;  // kernels profiled (one range per kernel, values summed over ranges)
    std::vector<std::string> range_names;
    std::vector<std::map<std::string, double>> range_values;  // per range, evaluated metrics
    int passes = 0;
    // True when L2 was cleaned (dirty lines written back, outside the ranges) before the first
    // kernel, as Nsight Compute's --cache-control all does: otherwise write-backs of lines dirtied
    // by earlier work (up to the L2 size) are counted as this variant's DRAM writes.
    bool l2_cleaned = false;
    std::string chip;        // "GH100"
    int cupti_result = 0;    // the failing CUptiResult, 0 when none
    std::string cupti_call;  // the CUPTI function that failed
};

// Default, one pass on GH100: dram__bytes_read.sum, dram__bytes_write.sum, lts__t_bytes.sum,
// gpu__time_duration.sum.
std::vector<std::string> memory_metric_set();
// Optional (behind a flag): sm__throughput (8 passes on GH100 by itself) and pipe utilizations,
// plus gpu__time_duration.sum to weight them across kernels.
std::vector<std::string> compute_metric_set();

// ---- degradation paths as values: pure, tested on the CPU with simulated CUPTI results.

// status "unavailable" (or "error" for `status`), every requested metric null with `reason`.
counter_result counters_unavailable(const std::vector<std::string>& metrics, std::string reason,
                                    std::string detail, std::string status = "unavailable");
// A failed CUPTI call: environmental results (39, 35, 40, 26, unsupported device, ...) give status
// "unavailable", faults in the sequence give "error"; all values null.
counter_result counter_failure(const std::string& call, int cupti_result,
                               const std::vector<std::string>& metrics);

// The fields of CUpti_Profiler_DeviceSupported_Params, as CUpti_Profiler_Support_Level values
// (0 unknown, 1 unsupported, 2 disabled, 3 supported).
struct device_support {
    int is_supported = 0, architecture = 0, sli = 0, vgpu = 0, confidential_compute = 0, cmp = 0,
        wsl = 0;
};
// nullopt when range profiling is supported, else the offending fields, e.g. "vgpu_disabled".
std::optional<std::string> unsupported_config(const device_support& s);

// How one metric combines over the ranges (kernels) of a multi-kernel variant.
enum class range_combine { sum, max, min, time_weighted_mean };
// From the name: "x.sum" -> sum, "x.max" -> max, "x.min" -> min; averages, ratios, percentages
// and rates -> mean weighted by each kernel's gpu__time_duration.sum (equal weights without it).
range_combine combine_rule(const std::string& metric);
// Combines per-range values; a metric missing (or NaN) in any range gives nullopt.
std::map<std::string, std::optional<double>> combine_ranges(
    const std::vector<std::string>& metrics,
    const std::vector<std::map<std::string, double>>& ranges);

// ---- host-only metric planning: works without a GPU (the host API needs only the chip name).
struct metric_plan {
    std::string chip;
    std::vector<std::string> supported;           // in request order
    std::map<std::string, std::string> rejected;  // metric -> reason ("unsupported_metric")
    std::map<std::string, std::string> units;     // metric -> dimension unit
    int passes = 0;
    int cupti_result = 0;  // non-zero when planning itself failed
    std::string cupti_call;
};
// Validates `metrics` for `chip` ("GH100") and counts the passes. `availability` is the device's
// counter-availability image, or empty offline.
metric_plan plan_metrics(const std::string& chip, const std::vector<std::string>& metrics,
                         const std::vector<std::uint8_t>& availability = {});

// One range-profiler session on one device. CUPTI's profiler initialization is process-wide, so
// at most one counter_profiler lives at a time (create() says "profiler_already_active"). It owns
// CUPTI objects that must be released exactly once and a counter-data image CUPTI holds a
// pointer to, so it never moves: create() returns it in the move-only std::unique_ptr.
class counter_profiler {
public:
    // nullptr + filled `failure` (status unavailable, reason, all values null) when counters
    // cannot be used. `max_ranges`: most kernels one invocation may launch.
    static std::unique_ptr<counter_profiler> create(int device,
                                                    const std::vector<std::string>& metrics,
                                                    counter_result& failure, int max_ranges = 64);
    ~counter_profiler();
    counter_profiler(const counter_profiler&) = delete;
    counter_profiler& operator=(const counter_profiler&) = delete;
    counter_profiler(counter_profiler&&) = delete;
    counter_profiler& operator=(counter_profiler&&) = delete;

    // Runs `launch_all` (which enqueues every kernel of one invocation of the variant on `stream`)
    // under auto range + kernel replay and returns per-metric sums over all kernels. Errors become
    // status "error" with a reason; it does not throw for CUPTI errors. A CUDA error raised by
    // launch_all propagates (after the profiler is stopped). Kernel launches serialize: CUPTI
    // synchronizes after each kernel, so kernels that wait on each other would hang.
    counter_result measure(const std::function<void(cudaStream_t)>& launch_all,
                           cudaStream_t stream);

    // Default on: before each measurement, read a buffer of 3x the L2 size so that L2 holds only
    // clean lines. Values then match Nsight Compute's (which flushes caches before each pass).
    // Lines the variant leaves dirty at its end are not written back inside its ranges, so DRAM
    // writes can read up to one L2 size below the bytes written (also as in Nsight Compute).
    void set_clean_l2(bool on) noexcept { m_clean_l2 = on; }

    const metric_plan& plan() const noexcept { return m_plan; }

private:
    struct impl;
    explicit counter_profiler(std::unique_ptr<impl> p);
    counter_result base_result() const;
    std::unique_ptr<impl> m_impl;
    metric_plan m_plan;
    std::vector<std::string> m_requested;
    bool m_clean_l2 = true;
};

nlohmann::json to_json(const counter_result& r);

}  // namespace fusebench
