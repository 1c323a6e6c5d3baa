// The timing loop: warm-up, then samples of one launch each, cold (L2 flushed outside the timed
// window, the default) or hot (back-to-back), until the noise target or the time budget is met.
#pragma once

#include "harness/device.hpp"
#include "harness/stats.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fusebench {

enum class cache_mode { cold, hot };
const char* to_string(cache_mode m) noexcept;

// Evicts L2 and leaves it clean, as Nsight Compute's cache control does: writing a buffer of
// twice the L2 size (alternating byte values, so no write is elided) evicts whatever the last
// launch left, then reading a second buffer of that size evicts the memset's own dirty lines, so
// the timed kernel pays no write-back of someone else's data. Persisting-L2 lines are reset.
// Move-only: it owns the device buffers.
class l2_flusher {
public:
    l2_flusher(std::size_t l2_bytes, int sm_count);
    void flush(cudaStream_t stream);
    std::size_t bytes() const noexcept { return m_dirty.size() + m_clean.size(); }

private:
    device_buffer m_dirty, m_clean, m_sink;
    int m_sm_count;
    int m_flip = 0;
};

struct timing_request {
    std::function<void(cudaStream_t)> launch;   // enqueues one invocation of the variant
    std::function<void(cudaStream_t)> prepare;  // optional, outside the timed window (restores in-place buffers)
    cache_mode mode = cache_mode::cold;
    sampling_policy policy;
    // CUPTI timing: KERNEL records (serialized, not instrumented) instead of CONCURRENT_KERNEL
    // (instrumented: slows kernels of many short blocks; see activity_tracer::set_serial).
    bool serial_kernel_records = true;
};

struct timed_run {
    std::string method;         // "cuda_events" or "cupti_activity"
    std::string method_reason;  // why this method
    cache_mode mode = cache_mode::cold;
    sample_stats stats;         // [us] by `method`: for CUPTI the span first start -> last end
    std::vector<double> samples_us;
    stop_reason stopped = stop_reason::keep_going;
    double sampling_s = 0;      // wall time of the sampling loop [s]

    // CUPTI only: the sum of activity durations per sample (equals the span for one kernel; less
    // when kernels leave gaps, more when they overlap on several streams), events around the same
    // launches as a cross-check (in cold mode queued behind the same stream gate; hot: they include
    // launch latency), and what ran in each sample.
    std::optional<sample_stats> sum_stats;
    std::optional<sample_stats> event_stats;
    std::vector<std::string> kernel_names;  // of the first sample, in start order
    std::string kernel_records;             // CUPTI only: "serial" (KIND_KERNEL) or "concurrent"
    std::size_t kernels_per_sample = 0;
    bool kernel_set_consistent = true;
    std::string inconsistency;              // the first sample that differed, and how
    std::uint64_t dropped_records = 0;
    std::uint64_t untimed_records = 0;
    // Cold samples are launched behind a stream gate (harness/stream_gate.hpp): samples whose
    // launch call outlasted the gate's 250 ms (a launcher that synchronizes) and so include host time.
    std::size_t gate_timeouts = 0;

    // SM clock after each sample [MHz] (clock64 over %globaltimer on the device); samples below
    // 75% of the maximum clock are counted and listed, never dropped.
    std::vector<double> sm_clock_mhz;
    std::optional<sample_stats> clock_stats;
    std::optional<double> max_clock_mhz;
    std::vector<std::size_t> low_clock_samples;

    // The same timer's reading of a kernel that does nothing (detail::launch_empty_kernel: one
    // block of 32 threads), timed in the same process, mode and kind of records before the first
    // variant: the launch and completion every sample carries besides the kernel's execution. The
    // default KIND_KERNEL records read a kernel's execution span plus 2.7-2.9 us on H100s
    // (harness/probes/record_span.cu), so a kernel of 10-20 us is judged against its floor with
    // that much it cannot remove. Null (reason below) when it could not be timed.
    std::optional<sample_stats> empty_kernel_stats;
    std::string empty_kernel_null_reason;

    // End to end (the runner, after the kernel timing): host time from the launcher call to the
    // return of cudaStreamSynchronize, launch latency and host-side setup included [us].
    std::optional<sample_stats> e2e_stats;
};

class activity_tracer;

// CUPTI Activity timing: each sample's kernels are recorded on every stream, so work a variant
// hides on a side stream is timed too. Cold mode: one launch per sample, L2 flushed before.
// Hot mode: batches of back-to-back launches, each launch's kernels grouped in start order.
timed_run time_with_tracer(const timing_request& req, cudaStream_t stream, l2_flusher& flusher,
                           activity_tracer& tracer, std::optional<double> max_clock_mhz);

// Events around each launch: the fallback timer. In cold mode the flush is enqueued before the
// start event, so the host has queued the launch long before the GPU reaches it and launch
// latency stays out of the window.
timed_run time_with_events(const timing_request& req, cudaStream_t stream, l2_flusher& flusher);

}  // namespace fusebench
