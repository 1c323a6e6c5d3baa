#include "harness/timing.hpp"
#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device.hpp"
#include "harness/stream_gate.hpp"
#include "tests/support/gpu.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cstddef>
#include <thread>

using namespace fusebench;

namespace {

// A launch call of two short kernels with the host busy in between, the way a pipeline of short
// kernels runs when the host thread is slowed (another thread's load, CUPTI's per-launch work):
// without the gate the span grows by the host's pause, with it the kernels run back to back.
struct two_kernel_launch {
    device_buffer src, dst;
    std::size_t bytes;
    std::chrono::microseconds host_pause;
    two_kernel_launch(std::size_t b, std::chrono::microseconds pause) : src(b), dst(b), bytes(b), host_pause(pause) {
        CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
    }
    void operator()(cudaStream_t s) const {
        detail::launch_stream_copy(src.get(), dst.get(), bytes, s);
        std::this_thread::sleep_for(host_pause);
        detail::launch_stream_copy(dst.get(), src.get(), bytes, s);
    }
};

timing_request cold_request(const two_kernel_launch& launch) {
    timing_request req;
    req.launch = [&launch](cudaStream_t s) { launch(s); };
    req.mode = cache_mode::cold;
    req.policy.warmup = 1;
    req.policy.min_samples = 10;
    req.policy.max_samples = 10;
    req.policy.budget_s = 5.0;
    return req;
}

}  // namespace

TEST_CASE("a stream gate holds the stream until opened, and says when its 250 ms ran out", "[gpu][timing]") {
    FUSEBENCH_REQUIRE_GPU();
    cuda_stream s;
    device_buffer flag(sizeof(int));
    CUDA_CHECK(cudaMemset(flag.get(), 0, sizeof(int)));
    {
        stream_gate gate(s.get(), std::chrono::microseconds(0));
        CUDA_CHECK(cudaMemsetAsync(flag.get(), 1, sizeof(int), s.get()));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CHECK(cudaStreamQuery(s.get()) == cudaErrorNotReady);  // still held 20 ms later
        gate.open();
        CUDA_CHECK(cudaStreamSynchronize(s.get()));
        CHECK_FALSE(gate.timed_out());
    }
    int v = 0;
    CUDA_CHECK(cudaMemcpy(&v, flag.get(), sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(v == 0x01010101);
    {
        stream_gate gate(s.get(), std::chrono::microseconds(0));
        const auto t0 = std::chrono::steady_clock::now();
        CUDA_CHECK(cudaStreamSynchronize(s.get()));  // a launcher that waits for its stream
        const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        CHECK(gate.timed_out());
        CHECK(waited_ms >= 240.0);
    }
}

TEST_CASE("cold timing spans the variant's kernels, not the host's pauses between its launch calls", "[gpu][timing]") {
    FUSEBENCH_REQUIRE_GPU();
    const device_info dev = query_device(0);
    l2_flusher flusher(dev.l2_bytes, dev.sm_count);
    cuda_stream s;
    // Two copies of 8 MiB (a few us each on an H100 / H200) with 2 ms of host time between them.
    const two_kernel_launch launch(std::size_t{8} << 20, std::chrono::microseconds(2000));
    const timing_request req = cold_request(launch);

    const timed_run ev = time_with_events(req, s.get(), flusher);
    INFO("events: median " << ev.stats.median << " us");
    CHECK(ev.gate_timeouts == 0);
    CHECK(ev.stats.median < 500.0);  // without the gate: >= 2000 us

    std::string why;
    auto tracer = activity_tracer::create(why);
    if (!tracer) SKIP("CUPTI tracing unavailable: " + why);
    const timed_run tr = time_with_tracer(req, s.get(), flusher, *tracer, std::nullopt);
    INFO("CUPTI: median span " << tr.stats.median << " us, kernels per sample " << tr.kernels_per_sample);
    CHECK(tr.kernels_per_sample == 2);
    CHECK(tr.gate_timeouts == 0);
    CHECK(tr.stats.median < 500.0);
    REQUIRE(tr.sum_stats.has_value());
    CHECK(tr.stats.median <= tr.sum_stats->median + 100.0);  // back to back: the span is the kernels
}
