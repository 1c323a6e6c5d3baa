#include "harness/timing.hpp"

#include <algorithm>
#include <chrono>

namespace fusebench {

const char* to_string(cache_mode m) noexcept { return m == cache_mode::cold ? "cold" : "hot"; }

l2_flusher::l2_flusher(std::size_t l2_bytes) : m_buffer(std::max<std::size_t>(2 * l2_bytes, 8u << 20)) {}

void l2_flusher::flush(cudaStream_t stream) {
    m_flip ^= 1;
    CUDA_CHECK(cudaMemsetAsync(m_buffer.get(), m_flip ? 0x5A : 0xA5, m_buffer.size(), stream));
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

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
            start.record(stream);
            req.launch(stream);
            stop.record(stream);
            CUDA_CHECK(cudaEventSynchronize(stop.get()));
            out.samples_us.push_back(1000.0 * stop.elapsed_ms_since(start));
            out.sampling_s = elapsed();
            out.stats = summarize(out.samples_us);
            out.stopped = should_stop(out.stats, out.sampling_s, req.policy);
            if (out.stopped != stop_reason::keep_going) break;
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
            out.sampling_s = elapsed();
            out.stats = summarize(out.samples_us);
            out.stopped = should_stop(out.stats, out.sampling_s, req.policy);
            if (out.stopped != stop_reason::keep_going) break;
        }
    }
    return out;
}

}  // namespace fusebench
