// GLU activations at 16 bits: the fused kernel's structure (two 16-byte vectors of gate and up a
// thread, 256 threads a block) with the library's form of act against a short one, same board, same
// buffers. erf (default): erfcf (gelu_erf_exact) against gelu_erf_16, as measured on 2026-11-27.
// tanh, silu: the library's expf and IEEE division against ex2.approx and rcp.approx (candidates, in
// this probe only; not measured yet). Usage: gelu_ab [erf] [tanh] [silu]
// Cold L2 (256 MiB written, then another 256 MiB read, between launches), CUDA events, median of 31 launches a round,
// rounds alternating the two forms. Also counts outputs that differ between the two and their largest
// relative difference, and checks both against an fp64 host evaluation of act(gate) * up on a sample.
// Build: nvcc -O3 -std=c++20 -arch=sm_90 -I. kernels/glu/probes/gelu_ab.cu -o /tmp/gelu_ab
#include "kernels/common/elem_io.cuh"
#include "kernels/common/fast_math.cuh"
#include "kernels/common/gelu.cuh"
#include "kernels/glu/activation.cuh"
#include "kernels/common/probe_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace fusebench::kernels;
using fusebench::kernels::from_f32;
using fusebench::kernels::to_f32;

template <class T> struct alignas(16) vec_t {
    T v[16 / sizeof(T)];
};

// The activations: lib the library's (kernels/glu/activation.cuh; for erf its fp32 form, erfcf, the
// 16-bit one's predecessor), fast the short form, ref in fp64 (the suite's semantics).
struct act_erf {
    static constexpr const char* name = "erf";
    static constexpr const char* lib_name = "erfcf";
    __device__ static float lib(float x) { return glu_activate<glu_act::gelu_erf, float>(x); }  // erfcf
    __device__ static float fast(float x) { return gelu_erf_16(x); }
    static double ref(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
};
// x / (1 + exp(-2u)): exp(-2u) = 2^(-2u log2 e); below x = -88 the reciprocal flushes to 0 (ftz)
// where the library's quotient is a tiny normal: both far under the check's absolute term.
struct act_tanh {
    static constexpr const char* name = "tanh";
    static constexpr const char* lib_name = "expf-div";
    __device__ static float lib(float x) { return glu_activate<glu_act::gelu_tanh, __nv_bfloat16>(x); }
    __device__ static float fast(float x) {
        const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return x * rcp_ftz(1.0f + ex2_ftz(u * -2.8853900817779268f));
    }
    static double ref(double x) {
        const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        return x / (1.0 + std::exp(-2.0 * u));
    }
};
struct act_silu {
    static constexpr const char* name = "silu";
    static constexpr const char* lib_name = "expf-div";
    __device__ static float lib(float x) { return glu_activate<glu_act::silu, __nv_bfloat16>(x); }
    __device__ static float fast(float x) { return x * rcp_ftz(1.0f + ex2_ftz(x * -1.4426950408889634f)); }
    static double ref(double x) { return x / (1.0 + std::exp(-x)); }
};

template <bool Fast, class Act, class T>
__global__ void __launch_bounds__(256) geglu_vec(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ y, std::size_t nvec) {
    constexpr int W = 16 / sizeof(T);
    const auto* g = reinterpret_cast<const vec_t<T>*>(gate);
    const auto* u = reinterpret_cast<const vec_t<T>*>(up);
    auto* o = reinterpret_cast<vec_t<T>*>(y);
    const std::size_t base = blockIdx.x * std::size_t(512) + threadIdx.x;
    vec_t<T> gv[2], uv[2];
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        const std::size_t j = base + std::size_t(k) * 256;
        if (j < nvec) {
            gv[k] = g[j];
            uv[k] = u[j];
        }
    }
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        const std::size_t j = base + std::size_t(k) * 256;
        if (j < nvec) {
            vec_t<T> r;
#pragma unroll
            for (int e = 0; e < W; ++e) {
                const float x = to_f32(gv[k].v[e]);
                const float a = Fast ? Act::fast(x) : Act::lib(x);
                r.v[e] = from_f32<T>(a * to_f32(uv[k].v[e]));
            }
            o[j] = r;
        }
    }
}

// Cold L2 as the harness leaves it (harness/timing.cpp): a write pass over one buffer, then a read
// pass over another, so L2 holds clean lines and the timed kernel pays no write-back of the scrub's
// data. (Call 2's probe wrote only: its H100 A/B, ~122 us both ways, timed the scrub's write-backs.)
__global__ void scrub_write(uint4* p, std::size_t n, unsigned salt) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = make_uint4(unsigned(i) ^ salt, salt, 0u, 1u);
}
__global__ void scrub_read(const uint4* p, std::size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;  // keeps the loads
}

double host_f(__nv_bfloat16 v) { return double(__bfloat162float(v)); }
double host_f(__half v) { return double(__half2float(v)); }
template <class T> T host_from(float v);
template <> __nv_bfloat16 host_from<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __half host_from<__half>(float v) { return __float2half_rn(v); }

template <class Act, class T> void run(const char* name, std::size_t rows, std::size_t cols, int rounds) {
    const std::size_t n = rows * cols, nvec = n / (16 / sizeof(T));
    std::vector<T> hg(n), hu(n);
    std::mt19937_64 rng(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) {
        hg[i] = host_from<T>(nd(rng) * 2.0f);
        hu[i] = host_from<T>(nd(rng));
    }
    T *g, *u, *y0, *y1;
    CK(cudaMalloc(&g, n * sizeof(T)));
    CK(cudaMalloc(&u, n * sizeof(T)));
    CK(cudaMalloc(&y0, n * sizeof(T)));
    CK(cudaMalloc(&y1, n * sizeof(T)));
    uint4 *big, *clean;
    unsigned* sink;
    const std::size_t big_n = (256u << 20) / sizeof(uint4);
    CK(cudaMalloc(&big, big_n * sizeof(uint4)));
    CK(cudaMalloc(&clean, big_n * sizeof(uint4)));
    CK(cudaMemset(clean, 0x3C, big_n * sizeof(uint4)));
    CK(cudaMalloc(&sink, sizeof(unsigned)));
    CK(cudaMemcpy(g, hg.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(u, hu.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    const unsigned blocks = unsigned((nvec + 511) / 512);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    auto time_one = [&](bool fast, unsigned salt) {
        scrub_write<<<1056, 256>>>(big, big_n, salt);
        scrub_read<<<1056, 256>>>(clean, big_n, sink);
        CK(cudaEventRecord(a));
        if (fast) geglu_vec<true, Act, T><<<blocks, 256>>>(g, u, y1, nvec);
        else geglu_vec<false, Act, T><<<blocks, 256>>>(g, u, y0, nvec);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        return double(ms) * 1e3;
    };
    for (int w = 0; w < 3; ++w) {
        time_one(false, w);
        time_one(true, w);
    }
    for (int r = 0; r < rounds; ++r) {
        for (int f = 0; f < 2; ++f) {
            const bool fast = (r % 2 == 0) ? f == 1 : f == 0;
            std::vector<double> t;
            for (int i = 0; i < 31; ++i) t.push_back(time_one(fast, unsigned(r * 100 + i)));
            std::sort(t.begin(), t.end());
            const double bytes_per_us = double(3 * n * sizeof(T)) / 1e3;  // gate, up, y: GB/s = bytes/us / 1e3
            std::printf("%s %s %zux%zu %-8s round %d: median %.2f us (min %.2f, max %.2f); %.1f GB/s\n", Act::name, name, rows,
                        cols, fast ? "fast16" : Act::lib_name, r, t[15], t.front(), t.back(), bytes_per_us / t[15]);
        }
    }
    CK(cudaDeviceSynchronize());
    std::vector<T> r0(n), r1(n);
    CK(cudaMemcpy(r0.data(), y0, n * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r1.data(), y1, n * sizeof(T), cudaMemcpyDeviceToHost));
    std::size_t differ = 0;
    double maxrel = 0, err0 = 0, err1 = 0;
    const double min_normal = sizeof(T) == 2 && std::is_same_v<T, __half> ? 6.103515625e-05 : 1.1754943508222875e-38;
    for (std::size_t i = 0; i < n; ++i) {
        const double v0 = host_f(r0[i]), v1 = host_f(r1[i]);
        if (v0 != v1) {
            ++differ;
            maxrel = std::max(maxrel, std::abs(v0 - v1) / std::max(std::abs(v0), 1e-30));
        }
        if (i % 97 == 0) {
            const double x = host_f(hg[i]);
            const double ref = Act::ref(x) * host_f(hu[i]);
            if (std::abs(ref) >= min_normal) {  // below it the storage's absolute rounding dominates
                err0 = std::max(err0, std::abs(v0 - ref) / std::abs(ref));
                err1 = std::max(err1, std::abs(v1 - ref) / std::abs(ref));
            }
        }
    }
    std::printf("%s %s %zux%zu: %zu of %zu outputs differ between the forms (largest relative difference %.3g); "
                "sampled max relative error against fp64 (outputs >= the smallest normal): %s %.3g, fast16 %.3g\n",
                Act::name, name, rows, cols, differ, n, maxrel, Act::lib_name, err0, err1);
    CK(cudaFree(g));
    CK(cudaFree(u));
    CK(cudaFree(y0));
    CK(cudaFree(y1));
    CK(cudaFree(big));
    CK(cudaFree(clean));
    CK(cudaFree(sink));
}

template <class Act> void run_both() {
    run<Act, __nv_bfloat16>("bf16", 4096, 14336, 4);
    run<Act, __half>("fp16", 4096, 14336, 4);
}

int main(int argc, char** argv) {
    cudaDeviceProp p{};
    CK(cudaGetDeviceProperties(&p, 0));
    std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
    if (argc == 1) run_both<act_erf>();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "erf") run_both<act_erf>();
        else if (a == "tanh") run_both<act_tanh>();
        else if (a == "silu") run_both<act_silu>();
        else {
            std::fprintf(stderr, "gelu_ab: unknown activation '%s' (erf, tanh, silu)\n", argv[i]);
            return 2;
        }
    }
    return 0;
}
