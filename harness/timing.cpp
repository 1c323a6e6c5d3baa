#include "harness/timing.hpp"

#include "harness/ceilings.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/sm_clock.hpp"
#include "harness/stream_gate.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

namespace fusebench {

const char* to_string(cache_mode m) noexcept { return m == cache_mode::cold ? "cold" : "hot"; }

namespace {
std::size_t flush_bytes(std::size_t l2_bytes) {
    const std::size_t b = std::max<std::size_t>(2 * l2_bytes, 8u << 20);
    return (b + 15) / 16 * 16;  // the read kernel takes whole 16-byte vectors
}
}  // namespace

l2_flusher::l2_flusher(std::size_t l2_bytes, int sm_count)
    : m_dirty(flush_bytes(l2_bytes)), m_clean(flush_bytes(l2_bytes)), m_sink(sizeof(unsigned)), m_sm_count(sm_count) {
    CUDA_CHECK(cudaMemset(m_clean.get(), 0x3C, m_clean.size()));
}

void l2_flusher::flush(cudaStream_t stream) {
    m_flip ^= 1;
    CUDA_CHECK(cudaMemsetAsync(m_dirty.get(), m_flip ? 0x5A : 0xA5, m_dirty.size(), stream));
    detail::launch_stream_read(m_clean.get(), m_clean.size(), static_cast<unsigned*>(m_sink.get()), m_sm_count, stream);
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

namespace {
// After each sample (or batch): refreshes the statistics and applies the stopping rule.
bool sample_done(timed_run& out, double sampling_s, const sampling_policy& policy) {
    out.sampling_s = sampling_s;
    out.stats = summarize(out.samples_us);
    out.stopped = should_stop(out.stats, out.sampling_s, policy);
    return out.stopped != stop_reason::keep_going;
}
}  // namespace

timed_run time_with_events(const timing_request& req, cudaStream_t stream, l2_flusher& flusher) {
    timed_run out;
    out.method = "cuda_events";
    out.mode = req.mode;
    for (int i = 0; i < req.policy.warmup; ++i) {
        if (req.prepare) req.prepare(stream);
        req.launch(stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));

    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    if (req.mode == cache_mode::cold) {
        cuda_event start, stop;
        for (;;) {
            if (req.prepare) req.prepare(stream);
            flusher.flush(stream);
            {
                // The flush and the sample in one queue, the sample behind a gate: the window
                // holds the variant's kernels back to back, not the host's launch calls.
                stream_gate gate(stream, std::chrono::microseconds(0));
                start.record(stream);
                req.launch(stream);
                stop.record(stream);
                gate.open();
                CUDA_CHECK(cudaEventSynchronize(stop.get()));
                if (gate.timed_out()) ++out.gate_timeouts;
            }
            out.samples_us.push_back(1000.0 * stop.elapsed_ms_since(start));
            if (sample_done(out, elapsed(), req.policy)) break;
        }
    } else {
        // Hot: batches of back-to-back launches separated by events, synchronized once a batch, so
        // the GPU never waits for the host between samples and L2 keeps what the last launch left.
        constexpr int batch = 32;
        std::vector<cuda_event> marks(batch + 1);
        for (;;) {
            marks[0].record(stream);
            // `prepare` would land inside the window here: in-place variants run on their own
            // previous output, which changes values but not the work done.
            for (int i = 0; i < batch; ++i) {
                req.launch(stream);
                marks[i + 1].record(stream);
            }
            CUDA_CHECK(cudaEventSynchronize(marks[batch].get()));
            for (int i = 0; i < batch; ++i) {
                out.samples_us.push_back(1000.0 * marks[i + 1].elapsed_ms_since(marks[i]));
            }
            if (sample_done(out, elapsed(), req.policy)) break;
        }
    }
    return out;
}

namespace {

std::vector<std::string> names_of(const std::vector<kernel_record>& ks) {
    std::vector<std::string> out;
    for (const auto& k : ks) out.push_back(k.kind == "kernel" ? k.name : "[" + k.kind + "]");
    return out;
}

// Records the first sample's kernel list; flags the first later sample that differs.
void check_kernel_set(timed_run& out, const std::vector<std::string>& names, std::size_t index) {
    if (index == 0) {
        out.kernel_names = names;
        out.kernels_per_sample = names.size();
        return;
    }
    if (out.kernel_set_consistent && names != out.kernel_names) {
        out.kernel_set_consistent = false;
        out.inconsistency = "sample " + std::to_string(index) + " ran " + std::to_string(names.size()) +
                            " kernel(s), sample 0 ran " + std::to_string(out.kernel_names.size());
        for (std::size_t i = 0; i < std::min(names.size(), out.kernel_names.size()); ++i) {
            if (names[i] != out.kernel_names[i]) {
                out.inconsistency += "; first difference at position " + std::to_string(i) + ": " + names[i] +
                                     " instead of " + out.kernel_names[i];
                break;
            }
        }
    }
}

void record_clock(timed_run& out, double mhz) {
    if (out.max_clock_mhz && clock_below(mhz, *out.max_clock_mhz)) out.low_clock_samples.push_back(out.sm_clock_mhz.size());
    out.sm_clock_mhz.push_back(mhz);
}

}  // namespace

timed_run time_with_tracer(const timing_request& req, cudaStream_t stream, l2_flusher& flusher,
                           activity_tracer& tracer, std::optional<double> max_clock_mhz) {
    timed_run out;
    out.method = "cupti_activity";
    out.mode = req.mode;
    out.max_clock_mhz = max_clock_mhz;
    // Serial kernel records for the samples only; the verification's stream-order check needs
    // kernels to stay concurrent, so the tracer goes back to CONCURRENT_KERNEL afterwards.
    struct kind_scope {
        activity_tracer& t;
        ~kind_scope() {
            try {
                t.set_serial(false);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "fusebench: %s (kernel records stay serial)\n", e.what());
            }
        }
    } restore{tracer};
    tracer.set_serial(req.serial_kernel_records);
    out.kernel_records = tracer.serial() ? "serial" : "concurrent";
    for (int i = 0; i < req.policy.warmup; ++i) {
        if (req.prepare) req.prepare(stream);
        req.launch(stream);
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<double> sums, events;
    cuda_event start, stop;
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    const std::uint64_t dropped_before = tracer.dropped_records();

    if (req.mode == cache_mode::cold) {
        for (std::size_t i = 0;; ++i) {
            if (req.prepare) req.prepare(stream);
            flusher.flush(stream);
            CUDA_CHECK(cudaDeviceSynchronize());
            tracer.begin();
            // The whole launch call is enqueued behind the gate before its first kernel starts:
            // the span then holds the variant's kernels back to back, not the host's launch calls
            // between them (for a pipeline of short kernels those gaps follow the host's load and
            // made an unchanged naive baseline read 12% slower on another board).
            stream_gate gate(stream, std::chrono::microseconds(0));
            start.record(stream);
            req.launch(stream);
            stop.record(stream);
            gate.open();
            const traced_sample ts = tracer.end();  // synchronizes the device
            if (gate.timed_out()) ++out.gate_timeouts;
            out.untimed_records += ts.untimed_records;
            if (ts.kernels.empty()) throw std::runtime_error("CUPTI recorded no kernel for a launch of the variant");
            check_kernel_set(out, names_of(ts.kernels), i);
            out.samples_us.push_back(ts.span_us);
            sums.push_back(ts.sum_us);
            events.push_back(1000.0 * stop.elapsed_ms_since(start));
            record_clock(out, measure_sm_clock_mhz(stream));
            if (sample_done(out, elapsed(), req.policy)) break;
        }
        out.event_stats = summarize(events);
    } else {
        // One probe launch tells how many activities a launch makes; batches are then split in
        // start order into groups of that size.
        tracer.begin();
        req.launch(stream);
        const traced_sample probe = tracer.end();
        if (probe.kernels.empty()) throw std::runtime_error("CUPTI recorded no kernel for a launch of the variant");
        const std::size_t per_launch = probe.kernels.size();
        check_kernel_set(out, names_of(probe.kernels), 0);
        constexpr int batch = 32;
        for (std::size_t sample = 1;;) {
            tracer.begin();
            for (int i = 0; i < batch; ++i) req.launch(stream);
            const traced_sample ts = tracer.end();
            out.untimed_records += ts.untimed_records;
            if (ts.kernels.size() != per_launch * batch) {
                out.kernel_set_consistent = false;
                if (out.inconsistency.empty()) {
                    out.inconsistency = std::to_string(ts.kernels.size()) + " activities for " + std::to_string(batch) +
                                        " launches of " + std::to_string(per_launch);
                }
            }
            const std::size_t groups = ts.kernels.size() / per_launch;
            for (std::size_t g = 0; g < groups; ++g, ++sample) {
                std::vector<kernel_record> part(ts.kernels.begin() + static_cast<std::ptrdiff_t>(g * per_launch),
                                                ts.kernels.begin() + static_cast<std::ptrdiff_t>((g + 1) * per_launch));
                check_kernel_set(out, names_of(part), sample);
                const traced_sample one = summarize_records(std::move(part));
                out.samples_us.push_back(one.span_us);
                sums.push_back(one.sum_us);
            }
            record_clock(out, measure_sm_clock_mhz(stream));
            if (sample_done(out, elapsed(), req.policy)) break;
        }
    }
    out.sum_stats = summarize(sums);
    out.clock_stats = summarize(out.sm_clock_mhz);
    out.dropped_records = tracer.dropped_records() - dropped_before;
    return out;
}

}  // namespace fusebench
