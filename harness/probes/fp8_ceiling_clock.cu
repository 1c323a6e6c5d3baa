// Diagnostic (not part of the build): why the FP8 ceiling moved from run to run (issue 19: cuBLASLt FP8
// 8192^3 read 1318-1414 TFLOP/s over ten suite runs, with the SM clock after its samples between 1482 and
// 1992 MHz, while kv_a's 36 us kernel ran at 1965-1990 MHz; kernels/fp8/NOTES.md run 15). The FP8
// ceiling's GEMM (harness/ceiling_gemm.hpp: e4m3 x e4m3 -> bf16 cublasLtMatmul, TN, unit scales, the
// heuristic's first algorithm, 32 MiB workspace) is timed here at n = 4096, 6144 and 8192 in four
// schedules, with the SM clock (harness/sm_clock: clock64 over %globaltimer, no NVML) read after every
// timed GEMM:
//   harness : as the harness did it before its ceilings moved to idle-gap bursts (warm-up 3, 20 back
//             to back, each between two events, the median; the clock read once, after them)
//   spaced  : 20 single GEMMs, each after a 200 ms idle gap, the clock read right after each
//   heated  : 1 s of back-to-back GEMMs first, then the harness schedule
//   burst   : 20 bursts of 5 GEMMs after 200 ms idle gaps, the median of each burst's last 3 (the
//             harness's schedule now, there with 10 bursts: harness/ceilings.hpp burst_schedule)
// Per schedule: median and best TFLOP/s, the clocks seen, and TFLOP/s per GHz of the clock read after
// (the rate the clock explains). bf16 cublasGemmEx 8192^3 (the bf16 ceiling's GEMM) in the harness
// schedule beside it. What to read: whether a shorter GEMM or idle gaps keep the clock at its maximum,
// and whether TFLOP/s per GHz is steady (then the spread is the clock, and a ceiling at the judged
// kernels' clock is a matter of the schedule).
//   nvcc -O3 -std=c++20 -arch=sm_90 -I. harness/probes/fp8_ceiling_clock.cu <build>/libfusebench_harness.a \
//        -lcublas -lcublasLt -lcuda -o fp8_ceiling_clock && ./fp8_ceiling_clock
#include "harness/ceiling_gemm.hpp"
#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device.hpp"
#include "harness/sm_clock.hpp"
#include "harness/stats.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

void idle(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void report(const std::string& what, int n, const std::vector<double>& ms, const std::vector<double>& mhz) {
    const double flops = 2.0 * n * static_cast<double>(n) * n;
    std::vector<double> tf;
    for (double t : ms) tf.push_back(flops / (t * 1e-3) * 1e-12);
    const auto r = fusebench::summarize(tf), c = fusebench::summarize(mhz);
    std::printf(
        "%-22s n %5d: median %7.1f TFLOP/s, best %7.1f (%2zu samples); "
        "SM clock after %4.0f MHz (min %4.0f, max %4.0f); median TFLOP/s per GHz %6.1f\n",
        what.c_str(), n, r.median, r.max, r.n, c.median, c.min, c.max, r.median / (c.median * 1e-3));
}

// The harness's former schedule (3 warm-up launches, 20 timed back to back, the clock read once after), after
// `rest_ms` of idle time or, with heat_s > 0, right after that many seconds of back-to-back launches.
void harness_schedule(const std::string& what, int n, const std::function<void()>& op, cudaStream_t s, int rest_ms,
                      int heat_s) {
    idle(rest_ms);
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(heat_s)) {
        for (int i = 0; i < 10; ++i) op();
        CUDA_CHECK(cudaStreamSynchronize(s));
    }
    for (int i = 0; i < 3; ++i) op();
    CUDA_CHECK(cudaStreamSynchronize(s));
    report(what, n, fusebench::time_reps(op, 0, 20, s), {fusebench::measure_sm_clock_mhz(s)});
}

// 20 bursts of `burst` back-to-back launches, each after a 200 ms idle gap (the harness's
// time_idle_bursts); a burst's sample is the median of its last `keep` launches.
void idle_bursts(const std::string& what, int n, const std::function<void()>& op, cudaStream_t s, int burst, int keep) {
    const auto b = fusebench::time_idle_bursts(op, {20, burst, keep, 200}, s);
    report(what, n, b.ms, b.sm_clock_mhz);
}

// The four schedules for one GEMM (op), n for the FLOP count.
void schedules(const std::string& name, int n, const std::function<void()>& op, cudaStream_t s) {
    harness_schedule(name + " harness", n, op, s, 500, 0);
    idle_bursts(name + " spaced", n, op, s, 1, 1);
    harness_schedule(name + " heated", n, op, s, 0, 1);
    idle_bursts(name + " burst", n, op, s, 5, 3);
}

}  // namespace

int main() {
    try {
        CUDA_CHECK(cudaSetDevice(0));
        cudaStream_t s;
        CUDA_CHECK(cudaStreamCreate(&s));
        cudaDeviceProp p{};
        CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
        const auto maxclk = fusebench::query_max_sm_clock(0);
        (void)fusebench::measure_sm_clock_mhz(s);  // loads the clock kernel's module
        std::printf("%s, %d SMs, max SM clock %s MHz (%s)\n", p.name, p.multiProcessorCount,
                    maxclk.mhz ? std::to_string(static_cast<int>(*maxclk.mhz)).c_str() : "?", maxclk.source.c_str());
        for (int n : {4096, 6144, 8192}) {
            fusebench::ceiling_gemm g(fusebench::ceiling_gemm_kind::fp8, n, s);
            schedules(
                "fp8 cublasLt", n, [&] { g.run(); }, s);
        }
        {  // the bf16 ceiling's GEMM, the old harness schedule only
            fusebench::ceiling_gemm g(fusebench::ceiling_gemm_kind::bf16, 8192, s);
            harness_schedule("bf16 cublas harness", 8192, [&] { g.run(); }, s, 500, 0);
        }
        CUDA_CHECK(cudaStreamDestroy(s));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fp8_ceiling_clock: %s\n", e.what());
        return 1;
    }
}
