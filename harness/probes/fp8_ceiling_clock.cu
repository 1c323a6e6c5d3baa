// Diagnostic (not part of the build): why the FP8 ceiling moves from run to run (issue 19: cuBLASLt FP8
// 8192^3 read 1318-1414 TFLOP/s over ten suite runs, with the SM clock after its samples between 1482 and
// 1992 MHz, while kv_a's 36 us kernel ran at 1965-1990 MHz; kernels/fp8/NOTES.md run 15). The harness's
// FP8 ceiling GEMM (harness/ceilings.cpp: e4m3 x e4m3 -> bf16 cublasLtMatmul, TN, unit scales, the
// heuristic's first algorithm, 32 MiB workspace; 3 warm-up launches, then 20 back to back, each between
// two events, the median) is timed here at n = 4096, 6144 and 8192 in four schedules, with the SM clock
// (harness/sm_clock: clock64 over %globaltimer, no NVML) read after every timed GEMM:
//   harness : as the harness does it (warm-up 3, 20 back to back; the clock read once, after them)
//   spaced  : 20 single GEMMs, each after a 200 ms idle gap, the clock read right after each
//   heated  : 1 s of back-to-back GEMMs first, then the harness schedule
//   burst   : 20 bursts of 5 GEMMs after 200 ms idle gaps, the median of each burst's last 3
// Per schedule: median and best TFLOP/s, the clocks seen, and TFLOP/s per GHz of the clock read after
// (the rate the clock explains). bf16 cublasGemmEx 8192^3 (the bf16 ceiling's GEMM) in the harness
// schedule beside it. What to read: whether a shorter GEMM or idle gaps keep the clock at its maximum,
// and whether TFLOP/s per GHz is steady (then the spread is the clock, and a ceiling at the judged
// kernels' clock is a matter of the schedule).
//   nvcc -O3 -std=c++20 -arch=sm_90 -I. harness/probes/fp8_ceiling_clock.cu <build>/libfusebench_harness.a \
//        -lcublas -lcublasLt -lcuda -o fp8_ceiling_clock && ./fp8_ceiling_clock
#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device.hpp"
#include "harness/sm_clock.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using fusebench::device_buffer;

void lt_check(cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(st));
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One timed launch of op between two events (ms).
double time_one(const std::function<void()>& op, cudaStream_t s) {
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaEventRecord(a, s));
    op();
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    return ms;
}

// Back-to-back launches, each between its own events (the harness's time_reps).
std::vector<double> time_back_to_back(const std::function<void()>& op, int reps, cudaStream_t s) {
    std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(reps));
    for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
    for (int i = 0; i < reps; ++i) {
        CUDA_CHECK(cudaEventRecord(ev[2 * i], s));
        op();
        CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], s));
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
        ms.push_back(t);
    }
    for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
    return ms;
}

void idle(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void report(const char* what, int n, const std::vector<double>& ms, const std::vector<double>& mhz) {
    const double flops = 2.0 * n * static_cast<double>(n) * n;
    std::vector<double> tf;
    for (double t : ms) tf.push_back(flops / (t * 1e-3) * 1e-12);
    const double med = median(tf), best = *std::max_element(tf.begin(), tf.end());
    const double cmed = median(mhz), cmin = *std::min_element(mhz.begin(), mhz.end()),
                 cmax = *std::max_element(mhz.begin(), mhz.end());
    std::printf("%-22s n %5d: median %7.1f TFLOP/s, best %7.1f (%2zu samples); SM clock after %4.0f MHz (min %4.0f, max %4.0f); "
                "median TFLOP/s per GHz %6.1f\n",
                what, n, med, best, tf.size(), cmed, cmin, cmax, med / (cmed * 1e-3));
}

struct fp8_gemm {
    int n;
    device_buffer a, b, d, ws;
    cublasLtHandle_t h = nullptr;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t result{};
    explicit fp8_gemm(int n_, cudaStream_t s)
        : n(n_),
          a(static_cast<std::size_t>(n_) * n_),
          b(static_cast<std::size_t>(n_) * n_),
          d(static_cast<std::size_t>(n_) * n_ * 2),
          ws(std::size_t{32} << 20) {
        const std::size_t elems = static_cast<std::size_t>(n) * n;
        fusebench::detail::launch_fill_random_fp8(a.get(), elems, 0x9abc, s);
        fusebench::detail::launch_fill_random_fp8(b.get(), elems, 0xdef0, s);
        lt_check(cublasLtCreate(&h), "cublasLtCreate");
        lt_check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
        const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        lt_check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
        lt_check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
        lt_check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n), "layout A");
        lt_check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n), "layout B");
        lt_check(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n), "layout D");
        lt_check(cublasLtMatmulPreferenceCreate(&pref), "preference");
        const std::size_t ws_bytes = ws.size();
        lt_check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                      sizeof ws_bytes),
                 "workspace");
        int found = 0;
        lt_check(cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, 1, &result, &found), "heuristic");
        if (found == 0) throw std::runtime_error("no cuBLASLt fp8 algorithm");
    }
    ~fp8_gemm() {
        cublasLtMatmulPreferenceDestroy(pref);
        cublasLtMatrixLayoutDestroy(ld);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatmulDescDestroy(desc);
        cublasLtDestroy(h);
    }
    fp8_gemm(const fp8_gemm&) = delete;
    fp8_gemm& operator=(const fp8_gemm&) = delete;
    void run(cudaStream_t s) {
        const float alpha = 1.0f, beta = 0.0f;
        lt_check(cublasLtMatmul(h, desc, &alpha, a.get(), la, b.get(), lb, &beta, d.get(), ld, d.get(), ld, &result.algo,
                                ws.get(), ws.size(), s),
                 "cublasLtMatmul");
    }
};

// The four schedules for one GEMM (op), n for the FLOP count.
void schedules(const char* name, int n, const std::function<void()>& op, cudaStream_t s) {
    const std::string nm(name);
    {  // harness
        idle(500);
        for (int i = 0; i < 3; ++i) op();
        CUDA_CHECK(cudaStreamSynchronize(s));
        const auto ms = time_back_to_back(op, 20, s);
        report((nm + " harness").c_str(), n, ms, {fusebench::measure_sm_clock_mhz(s)});
    }
    {  // spaced
        std::vector<double> ms, mhz;
        for (int i = 0; i < 20; ++i) {
            idle(200);
            ms.push_back(time_one(op, s));
            mhz.push_back(fusebench::measure_sm_clock_mhz(s));
        }
        report((nm + " spaced").c_str(), n, ms, mhz);
    }
    {  // heated
        const auto t0 = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1)) {
            for (int i = 0; i < 10; ++i) op();
            CUDA_CHECK(cudaStreamSynchronize(s));
        }
        const auto ms = time_back_to_back(op, 20, s);
        report((nm + " heated").c_str(), n, ms, {fusebench::measure_sm_clock_mhz(s)});
    }
    {  // burst
        std::vector<double> ms, mhz;
        for (int i = 0; i < 20; ++i) {
            idle(200);
            const auto b = time_back_to_back(op, 5, s);
            ms.push_back(median({b[2], b[3], b[4]}));
            mhz.push_back(fusebench::measure_sm_clock_mhz(s));
        }
        report((nm + " burst").c_str(), n, ms, mhz);
    }
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
            fp8_gemm g(n, s);
            schedules("fp8 cublasLt", n, [&] { g.run(s); }, s);
        }
        {  // the bf16 ceiling's GEMM, harness schedule only
            constexpr int n = 8192;
            const std::size_t elems = static_cast<std::size_t>(n) * n;
            device_buffer a(elems * 2), b(elems * 2), out(elems * 2);
            fusebench::detail::launch_fill_random_16bit(a.get(), elems, true, 0x1234, s);  // as the harness: random
            fusebench::detail::launch_fill_random_16bit(b.get(), elems, true, 0x5678, s);
            cublasHandle_t h;
            lt_check(cublasCreate(&h), "cublasCreate");
            lt_check(cublasSetStream(h, s), "cublasSetStream");
            const float alpha = 1.0f, beta = 0.0f;
            auto op = [&] {
                lt_check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.get(), CUDA_R_16BF, n, b.get(),
                                      CUDA_R_16BF, n, &beta, out.get(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT),
                         "cublasGemmEx");
            };
            idle(500);
            for (int i = 0; i < 3; ++i) op();
            CUDA_CHECK(cudaStreamSynchronize(s));
            const auto ms = time_back_to_back(op, 20, s);
            report("bf16 cublas harness", n, ms, {fusebench::measure_sm_clock_mhz(s)});
            cublasDestroy(h);
        }
        CUDA_CHECK(cudaStreamDestroy(s));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fp8_ceiling_clock: %s\n", e.what());
        return 1;
    }
}
