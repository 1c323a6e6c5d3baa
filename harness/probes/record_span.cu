// Diagnostic (not part of the build): what each of the harness's timers counts for a short cold
// kernel. A 16-byte copy kernel (one vector per thread, 256 threads per block, the conv1d probe's
// copy) stamps %globaltimer at every block's start and end (atomicMin / atomicMax, one thread per
// block), so each launch has its own execution span: first block start -> last block end. The same
// launch is timed by CUPTI KIND_KERNEL records (the harness's default, serial), CONCURRENT_KERNEL
// records (--concurrent-kernel-timing) and CUDA events; cold L2 by the harness's own l2_flusher and
// the suite's sequence (flush, device synchronize, begin, [gate], events and launch, [gate opened],
// end): with the gate (harness/stream_gate.hpp, as harness/timing.cpp) the launch is queued before
// the stream may start it; without, the launch call runs against an idle stream. Medians of `reps`.
//   nvcc -O3 -std=c++20 -arch=sm_90 -I. harness/probes/record_span.cu <build>/libfusebench_harness.a \
//        <build>/libfusebench_kernels.a -lcupti -lcuda -lcublas -lcublasLt -o record_span && ./record_span [reps]
#include "harness/cuda_check.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/stats.hpp"
#include "harness/stream_gate.hpp"
#include "harness/timing.hpp"
#include "kernels/conv1d/conv1d.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace fusebench;

namespace {

__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// stamps[0] = min block start, stamps[1] = max block end (ns, %globaltimer).
__global__ void copy_stamped(const uint4* __restrict__ x, uint4* __restrict__ y, std::size_t n, unsigned long long* stamps) {
    if (threadIdx.x == 0) atomicMin(stamps, gtimer());
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = __ldg(x + i);
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(stamps + 1, gtimer());
}

__global__ void copy_plain(const uint4* __restrict__ x, uint4* __restrict__ y, std::size_t n) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = __ldg(x + i);
}

// The harness's median (linear interpolation between the two middle samples; the outputs under
// reports/examples/h100-session-966ded7/record-span-* were taken with the upper middle sample).
double median(const std::vector<double>& v) { return summarize(v).median; }

}  // namespace

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    const device_info di = query_device(dev);
    const int sms = di.sm_count;
    std::printf("device %s (%s), %d SMs, L2 %zu B, reps %d\n", di.name.c_str(), di.uuid.c_str(), sms, di.l2_bytes, reps);
    l2_flusher flusher(di.l2_bytes, sms);
    const std::size_t max_bytes = std::size_t{256} << 20;
    device_buffer x(max_bytes), y(max_bytes), stamps(2 * sizeof(unsigned long long));
    CUDA_CHECK(cudaMemset(x.get(), 1, max_bytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    const unsigned long long init[2] = {~0ull, 0ull};

    // Unstamped kernels at the conv1d target case's bytes (x 16.78 MB): the plain 16-byte copy and
    // the library's depthwise conv1d (bf16 b1 c2048 L4096 w4, zero weights).
    const fusebench::kernels::conv1d_depthwise_shape dws{1, 2048, 4096, 4};
    device_buffer dw_w(2048 * 4 * 2), dw_b(2048 * 2);
    CUDA_CHECK(cudaMemset(dw_w.get(), 0, 2048 * 4 * 2));
    CUDA_CHECK(cudaMemset(dw_b.get(), 0, 2048 * 2));
    const std::size_t nv16 = std::size_t{16777216} / 16;
    struct plain_kernel {
        const char* name;
        std::function<void(cudaStream_t)> launch;
    };
    const std::vector<plain_kernel> plain{
        {"copy_plain 16.78 MB", [&](cudaStream_t st) {
             copy_plain<<<static_cast<unsigned>((nv16 + 255) / 256), 256, 0, st>>>(static_cast<const uint4*>(x.get()), static_cast<uint4*>(y.get()), nv16);
         }},
        {"depthwise bf16 c2048 L4096", [&](cudaStream_t st) {
             fusebench::kernels::launch_conv1d_depthwise_fused(fusebench::kernels::elem::bf16, x.get(), dw_w.get(), dw_b.get(), y.get(), dws, st);
         }},
    };
    // Phase 1: events, no CUPTI client yet (the flush, a synchronize, then events around the launch).
    for (const auto& k : plain) {
        std::vector<double> v;
        for (int r = 0; r < reps + 2; ++r) {
            flusher.flush(s);
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaEventRecord(e0, s));
            k.launch(s);
            CUDA_CHECK(cudaEventRecord(e1, s));
            CUDA_CHECK(cudaEventSynchronize(e1));
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 2) v.push_back(ms * 1e3);
        }
        std::printf("RES %-28s events, no CUPTI %8.2f us\n", k.name, median(v));
    }
    std::fflush(stdout);

    std::string reason;
    auto tracer = activity_tracer::create(reason);
    if (!tracer) {
        std::fprintf(stderr, "no CUPTI tracer: %s\n", reason.c_str());
        return 1;
    }
    // Phase 2: the same kernels by serial and concurrent records (the suite's gated sequence).
    for (int serial = 1; serial >= 0; --serial) {
        tracer->set_serial(serial == 1);
        for (const auto& k : plain) {
            std::vector<double> v;
            for (int r = 0; r < reps + 2; ++r) {
                flusher.flush(s);
                CUDA_CHECK(cudaDeviceSynchronize());
                tracer->begin();
                stream_gate gate(s, std::chrono::microseconds(0));
                k.launch(s);
                gate.open();
                const traced_sample ts = tracer->end();
                if (ts.kernels.size() != 1) {
                    std::fprintf(stderr, "expected one kernel record, got %zu\n", ts.kernels.size());
                    return 1;
                }
                if (r >= 2) v.push_back(ts.kernels[0].duration_us());
            }
            std::printf("RES %-28s %-10s record %8.2f us\n", k.name, serial ? "serial" : "concurrent", median(v));
        }
    }
    std::fflush(stdout);

    // Phase 3: the stamped copy at several sizes: records, its own span, events (under CUPTI).
    for (std::size_t xb : {std::size_t{1} << 20, std::size_t{16777216}, std::size_t{128} << 20}) {
        const std::size_t nv = xb / 16;
        const unsigned blocks = static_cast<unsigned>((nv + 255) / 256);
        for (int mode = 3; mode >= 0; --mode) {
            const bool serial = mode & 1, gated = mode & 2;
            tracer->set_serial(serial);
            std::vector<double> rec, inside, ev;
            for (int r = 0; r < reps + 2; ++r) {
                CUDA_CHECK(cudaMemcpyAsync(stamps.get(), init, sizeof init, cudaMemcpyHostToDevice, s));
                flusher.flush(s);
                CUDA_CHECK(cudaDeviceSynchronize());
                tracer->begin();
                std::unique_ptr<stream_gate> gate;
                if (gated) gate = std::make_unique<stream_gate>(s, std::chrono::microseconds(0));
                CUDA_CHECK(cudaEventRecord(e0, s));
                copy_stamped<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(x.get()), static_cast<uint4*>(y.get()), nv,
                                                    static_cast<unsigned long long*>(stamps.get()));
                CUDA_CHECK(cudaEventRecord(e1, s));
                if (gate) gate->open();
                const traced_sample ts = tracer->end();
                unsigned long long st[2];
                CUDA_CHECK(cudaMemcpy(st, stamps.get(), sizeof st, cudaMemcpyDeviceToHost));
                float ms = 0;
                CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
                if (r < 2) continue;  // warm-up
                if (ts.kernels.size() != 1) {
                    std::fprintf(stderr, "expected one kernel record, got %zu\n", ts.kernels.size());
                    return 1;
                }
                rec.push_back(ts.kernels[0].duration_us());
                inside.push_back((st[1] - st[0]) / 1e3);
                ev.push_back(ms * 1e3);
            }
            std::printf("RES x %7.2f MB blocks %6u %-10s %-7s record %8.2f us  in-kernel span %8.2f us  events %8.2f us  record - span %6.2f us\n",
                        xb / 1e6, blocks, serial ? "serial" : "concurrent", gated ? "gated" : "direct", median(rec), median(inside),
                        median(ev), median(rec) - median(inside));
            std::fflush(stdout);
        }
    }
    tracer->set_serial(false);
    return 0;
}
