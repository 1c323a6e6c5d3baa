// Kernel timing with the CUPTI Activity API (CONCURRENT_KERNEL records, CUpti_ActivityKernel10 on
// CUDA 13.0), plus the CUPTI error plumbing shared with the counter profiler. Events include launch
// latency (a 0.7 us kernel reads as 10 us); activity records carry the GPU's own start and end of
// every kernel, memcpy and memset, on every stream.
#pragma once

#include "harness/cuda_check.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusebench {

// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" for 35, "CUPTI_ERROR_<code>" for codes this CUPTI does not
// name. Never touches the device, so it is safe without a driver.
std::string cupti_result_name(int result);

// Machine-readable reason for a failed CUPTI call: the environment problems get stable names
// ("cupti_multiple_subscribers", "insufficient_privileges", "cupti_not_initialized",
// "counters_busy", "unsupported_device", "unsupported_metric"), everything else
// "cupti_error:<NAME>".
std::string cupti_reason(int result);

// True when `result` says CUPTI cannot be used in this environment (another tool holds it, no
// privileges, unsupported device, ...), as opposed to a fault in the call sequence.
bool cupti_result_is_environmental(int result);

// One line of advice for the report's detail text, empty when there is none.
std::string cupti_hint(int result);

}  // namespace fusebench

// Throws fusebench::cuda_error with the CUPTI result name, file:line and the expression.
#define CUPTI_CHECK(expr)                                                                      \
    do {                                                                                       \
        const int fusebench_cupti_res_ = static_cast<int>(expr);                               \
        if (fusebench_cupti_res_ != 0) {                                                       \
            ::fusebench::throw_cupti_error(                                                    \
                fusebench_cupti_res_,                                                          \
                ::fusebench::cupti_result_name(fusebench_cupti_res_).c_str(), #expr, __FILE__, \
                __LINE__);                                                                     \
        }                                                                                      \
    } while (0)

namespace fusebench {

// One GPU activity of a sample. Kernels are the common case; memcpy and memset activities are
// recorded too, because a variant that clears an accumulator with cudaMemsetAsync pays for it.
struct kernel_record {
    std::string name;  // demangled kernel name, or "[memcpy DtoD]" / "[memset]"
    std::uint64_t start_ns = 0, end_ns = 0;  // CUPTI clock [ns]
    std::uint32_t device_id = 0, stream_id = 0;
    std::uint32_t correlation_id = 0;
    std::string kind = "kernel";  // "kernel" | "memcpy" | "memset"
    double duration_us() const noexcept { return static_cast<double>(end_ns - start_ns) * 1e-3; }
};

struct traced_sample {
    std::vector<kernel_record> kernels;  // sorted by start; demangled names
    double sum_us = 0;                   // sum of activity durations
    double span_us = 0;                  // first start -> last end, across all streams
    // Records whose timestamps are 0: CUPTI could not time them (kernel replay of the counter
    // pass does this). They are excluded from `kernels` and counted here as a data-quality flag.
    std::uint64_t untimed_records = 0;
};

// Sorts `records` by start and computes the sum and span. Records with start == end == 0 or
// end < start go to `untimed_records`. Pure: tested on the CPU.
traced_sample summarize_records(std::vector<kernel_record> records);

// abi::__cxa_demangle, or the input unchanged when it is not a mangled C++ name.
std::string demangle_kernel_name(const char* mangled);

// Activity tracing session. CUPTI's buffer callbacks carry no user pointer, so the live tracer is
// reached through one guarded static pointer, and at most one tracer exists per process (CUPTI on
// 13.0 allows one subscriber anyway). The object therefore never moves: it is created on the heap
// and owned by the move-only std::unique_ptr that create() returns; copying or moving it would
// leave CUPTI pointing at a dead object.
//
// Use: create() once, before the modules whose kernels are timed are loaded if possible (CUPTI
// instruments kernels at module load); then per sample: synchronize, begin(), launch, end().
// Anything launched between end() and the next begin() (L2 flush, clock probe) is discarded.
class activity_tracer {
public:
    // nullptr and `reason` (machine-readable: "no_device", "cupti_multiple_subscribers",
    // "cupti_not_initialized", "cupti_too_old", "tracer_already_active",
    // "cupti_error:<NAME>") when tracing cannot be used; never throws for those.
    static std::unique_ptr<activity_tracer> create(std::string& reason);
    ~activity_tracer();
    activity_tracer(const activity_tracer&) = delete;
    activity_tracer& operator=(const activity_tracer&) = delete;
    activity_tracer(activity_tracer&&) = delete;
    activity_tracer& operator=(activity_tracer&&) = delete;

    // Start of a sample: synchronizes the device, delivers and drops every record of earlier work.
    void begin();
    // Synchronizes the device, flushes, and returns the activities since begin(). The forced flush
    // here makes CUPTI's next launch call slow (~0.2 ms on H200): that launch is whatever the
    // caller runs between samples (L2 flush, clock probe), never inside the next sample.
    traced_sample end();

    // For the counter pass (notes §3.3): records delivered while paused are discarded, because
    // kernel replay gives them start == end == 0 and they belong to no timing sample. Tracing
    // stays enabled, so resuming costs no re-instrumentation.
    void pause();
    void resume();
    bool paused() const;

    // Kernel records from CUPTI_ACTIVITY_KIND_KERNEL (serial) or CONCURRENT_KERNEL (the default).
    // CONCURRENT_KERNEL keeps kernels concurrent but instruments each kernel for its timestamps;
    // on an H200 that added 8-10% to kernels of many short blocks (GLU naive and fused_scalar,
    // 4096x14336 bf16, against CUDA events without CUPTI and against Nsight Compute), nothing to
    // kernels of few long blocks. KERNEL is not instrumented but serializes kernels across
    // streams. Synchronizes the device; records of earlier work are delivered (and dropped) first.
    // Throws std::runtime_error when CUPTI refuses the switch (the previous kind stays enabled).
    void set_serial(bool serial);
    bool serial() const noexcept { return m_serial; }

    std::uint64_t dropped_records() const;    // lost by CUPTI (buffer full): a data-quality flag
    std::uint64_t discarded_records() const;  // delivered outside begin()/end() or while paused
    std::uint32_t cupti_version() const noexcept { return m_cupti_version; }

    // Called from the CUPTI buffer callbacks (public only for them).
    void accept_buffer(std::uint8_t* buffer, std::size_t valid_size, std::uint64_t dropped);
    std::uint8_t* take_buffer(std::size_t& size);
    void return_buffer(std::uint8_t* buffer, std::size_t used);

private:
    activity_tracer() = default;
    void flush_all(bool forced);
    void shut_down() noexcept;

    void* m_subscriber = nullptr;  // CUpti_SubscriberHandle
    bool m_serial = false;         // KERNEL instead of CONCURRENT_KERNEL records
    std::uint32_t m_cupti_version = 0;
    std::vector<int> m_enabled_kinds;  // CUpti_ActivityKind values enabled by this tracer

    mutable std::mutex m_mutex;  // guards everything below: CUPTI delivers on its own thread
    bool m_in_sample = false;
    std::uint64_t m_begin_ns = 0;  // CUPTI timestamp taken in begin() [ns]
    bool m_paused = false;
    std::vector<kernel_record> m_records;
    std::unordered_map<std::string, std::string> m_demangled;  // mangled -> demangled cache
    std::vector<std::uint8_t*> m_free_buffers;
    std::uint64_t m_dropped = 0;
    std::uint64_t m_discarded = 0;
};

}  // namespace fusebench
