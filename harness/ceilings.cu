// Kernels of the measured ceilings. Grid-stride loops sized to fill every SM, four independent
// 16-byte accesses in flight per thread so that enough bytes are outstanding to saturate HBM.
#include "harness/ceilings.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fusebench::detail {

namespace {

constexpr int stream_threads = 256;
constexpr int stream_blocks_per_sm = 8;  // 2048 resident threads per SM on sm_80..sm_90

void check_launch(const char* what) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                                 cudaGetErrorString(e) + ")");
    }
}

__device__ __forceinline__ unsigned fold(uint4 v) {
    return v.x ^ v.y ^ v.z ^ v.w;
}

__global__ void stream_read_kernel(const uint4* __restrict__ src, std::size_t n, unsigned* sink) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride],
                    d = src[i + 3 * stride];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n; i += stride) acc ^= fold(src[i]);
    if (acc == 0x9e3779b9u) sink[0] = acc;  // data-dependent: keeps every load alive
}

// Each block reads one contiguous span of span_loads x blockDim 16-byte vectors; the loads of a
// thread are all issued before the first use, so 8 x 16 bytes are in flight per thread.
constexpr int span_loads = 8;
__global__ void stream_read_spans_kernel(const uint4* __restrict__ src, std::size_t n, unsigned* sink) {
    const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * span_loads + threadIdx.x;
    uint4 v[span_loads];
#pragma unroll
    for (int k = 0; k < span_loads; ++k) {
        const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
        v[k] = i < n ? src[i] : make_uint4(0, 0, 0, 0);
    }
    unsigned acc = 0;
#pragma unroll
    for (int k = 0; k < span_loads; ++k) acc ^= fold(v[k]);
    if (acc == 0x9e3779b9u) sink[0] = acc;  // data-dependent: keeps every load alive
}

// One 16-byte store per thread over a full grid, the pattern depending on the index so the
// stores cannot be merged into anything cheaper.
__global__ void stream_write_kernel(uint4* __restrict__ dst, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const unsigned x = static_cast<unsigned>(i);
        dst[i] = make_uint4(x, x ^ 0x55555555u, x + 0x9e3779b9u, ~x);
    }
}

// One 16-byte element per thread over a full grid: on H200 this copied at 4219 GB/s where
// grid-stride loops with 2-8 loads in flight reached 3850-3914 GB/s (reads and writes interleave
// better across DRAM pages when every block touches one contiguous 4 KiB span).
__global__ void stream_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                   std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        dst[i] = src[i];
    }
}

__global__ void empty_kernel() {}

// 8 independent chains hide the FMA latency; 16-fold unrolling keeps loop overhead to ~1 % of
// the issue slots.
__global__ void fma_chains_kernel(float a, float b, int iterations, float* sink) {
    float x0 = threadIdx.x * 1e-3f, x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
    float x4 = x0 + 4.f, x5 = x0 + 5.f, x6 = x0 + 6.f, x7 = x0 + 7.f;
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            x0 = fmaf(x0, a, b);
            x1 = fmaf(x1, a, b);
            x2 = fmaf(x2, a, b);
            x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b);
            x5 = fmaf(x5, a, b);
            x6 = fmaf(x6, a, b);
            x7 = fmaf(x7, a, b);
        }
    }
    const float s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    if (s == 1234.5678f) sink[0] = s;  // data-dependent: the chains cannot be removed
}

__device__ __forceinline__ float hash_uniform(unsigned long long seed, unsigned long long i) {
    unsigned long long z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
}

__global__ void fill_random_bf16_kernel(__nv_bfloat16* dst, std::size_t n,
                                        unsigned long long seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        dst[i] = __float2bfloat16(hash_uniform(seed, i));
    }
}

__global__ void fill_random_fp16_kernel(__half* dst, std::size_t n, unsigned long long seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        dst[i] = __float2half(hash_uniform(seed, i));
    }
}

// One byte per `stride` bytes, one thread each. The store depends on the byte read, so the load
// stays (the buffers the tests read never hold 0x5B; writing the sink would be harmless anyway).
__global__ void strided_read_kernel(const unsigned char* __restrict__ p, std::size_t bytes, std::size_t stride,
                                    unsigned* sink) {
    const std::size_t i = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * stride;
    if (i < bytes && p[i] == 0x5Bu) *sink = static_cast<unsigned>(i);
}

int stream_blocks(int sm_count, std::size_t n_vec) {
    const std::size_t want = static_cast<std::size_t>(std::max(sm_count, 1)) * stream_blocks_per_sm;
    const std::size_t needed = (n_vec + stream_threads - 1) / stream_threads;
    return static_cast<int>(std::max<std::size_t>(1, std::min(want, needed)));
}

void check_stream_args(const void* p, std::size_t bytes, const char* what) {
    if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(p) % 16 != 0) {
        throw std::invalid_argument(std::string(what) +
                                    ": needs 16-byte aligned pointers and sizes");
    }
}

}  // namespace

void launch_stream_read(const void* d_src, std::size_t bytes, unsigned* d_sink, int sm_count,
                        cudaStream_t stream) {
    check_stream_args(d_src, bytes, "launch_stream_read");
    const std::size_t n = bytes / 16;
    if (n == 0) return;
    stream_read_kernel<<<stream_blocks(sm_count, n), stream_threads, 0, stream>>>(
        static_cast<const uint4*>(d_src), n, d_sink);
    check_launch("stream_read_kernel");
}

void launch_strided_read(const void* d_src, std::size_t bytes, std::size_t stride, unsigned* d_sink,
                         cudaStream_t stream) {
    if (bytes == 0 || stride == 0) return;
    const std::size_t n = (bytes + stride - 1) / stride;
    strided_read_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(
        static_cast<const unsigned char*>(d_src), bytes, stride, d_sink);
    check_launch("strided_read_kernel");
}

void launch_stream_read_spans(const void* d_src, std::size_t bytes, unsigned* d_sink, cudaStream_t stream) {
    check_stream_args(d_src, bytes, "launch_stream_read_spans");
    const std::size_t n = bytes / 16;
    if (n == 0) return;
    const std::size_t per_block = static_cast<std::size_t>(stream_threads) * span_loads;
    const std::size_t blocks = std::min<std::size_t>((n + per_block - 1) / per_block, 0x7fffffff);
    stream_read_spans_kernel<<<static_cast<unsigned>(blocks), stream_threads, 0, stream>>>(
        static_cast<const uint4*>(d_src), n, d_sink);
    check_launch("stream_read_spans_kernel");
}

void launch_stream_write(void* d_dst, std::size_t bytes, cudaStream_t stream) {
    check_stream_args(d_dst, bytes, "launch_stream_write");
    const std::size_t n = bytes / 16;
    if (n == 0) return;
    const std::size_t blocks =
        std::min<std::size_t>((n + stream_threads - 1) / stream_threads, 0x7fffffff);
    stream_write_kernel<<<static_cast<unsigned>(blocks), stream_threads, 0, stream>>>(
        static_cast<uint4*>(d_dst), n);
    check_launch("stream_write_kernel");
}

void launch_stream_copy(const void* d_src, void* d_dst, std::size_t bytes, cudaStream_t stream) {
    check_stream_args(d_src, bytes, "launch_stream_copy");
    check_stream_args(d_dst, bytes, "launch_stream_copy");
    const std::size_t n = bytes / 16;
    if (n == 0) return;
    // A full grid, one element per thread (the kernel's loop only matters beyond 2^31 blocks).
    const std::size_t blocks =
        std::min<std::size_t>((n + stream_threads - 1) / stream_threads, 0x7fffffff);
    stream_copy_kernel<<<static_cast<unsigned>(blocks), stream_threads, 0, stream>>>(
        static_cast<const uint4*>(d_src), static_cast<uint4*>(d_dst), n);
    check_launch("stream_copy_kernel");
}

void launch_empty_kernel(cudaStream_t stream) {
    empty_kernel<<<1, 32, 0, stream>>>();
    check_launch("empty_kernel");
}

void launch_fma_chains(float* d_sink, int iterations, int blocks, int threads,
                       cudaStream_t stream) {
    // a slightly below 1 and a small b keep every chain finite and normal.
    fma_chains_kernel<<<blocks, threads, 0, stream>>>(0.999999f, 1e-7f, iterations, d_sink);
    check_launch("fma_chains_kernel");
}

__global__ void fill_random_fp8_kernel(std::uint8_t* dst, std::size_t n, unsigned long long seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        unsigned long long z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;  // splitmix64, as hash_uniform
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        // Sign and the low 6 bits random, the top exponent bit clear: exponent field <= 7, so
        // |x| < 2 and never the NaN code S.1111.111.
        dst[i] = static_cast<std::uint8_t>((z >> 40) & 0xBFu);
    }
}

void launch_fill_random_fp8(void* d_dst, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
    if (n == 0) return;
    const int blocks = static_cast<int>(std::min<std::size_t>((n + 255) / 256, 65536));
    fill_random_fp8_kernel<<<blocks, 256, 0, stream>>>(static_cast<std::uint8_t*>(d_dst), n, seed);
    check_launch("fill_random_fp8_kernel");
}

void launch_fill_random_16bit(void* d_dst, std::size_t n, bool bf16, std::uint64_t seed,
                              cudaStream_t stream) {
    if (n == 0) return;
    const int blocks = static_cast<int>(std::min<std::size_t>((n + 255) / 256, 65536));
    if (bf16) {
        fill_random_bf16_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(d_dst), n,
                                                            seed);
    } else {
        fill_random_fp16_kernel<<<blocks, 256, 0, stream>>>(static_cast<__half*>(d_dst), n, seed);
    }
    check_launch("fill_random_16bit_kernel");
}

}  // namespace fusebench::detail
