#include "harness/device_compare.hpp"

#include "harness/cuda_check.hpp"

#include <algorithm>
#include <cstdint>

namespace fusebench {

namespace {

// Each thread ORs the XOR of its words (or bytes) into one flag; the flag is set, never
// cleared, so a single differing bit anywhere sets it.
__global__ void differ_words(const std::uint64_t* a, const std::uint64_t* b, std::size_t words, unsigned* flag) {
    std::uint64_t acc = 0;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        acc |= a[i] ^ b[i];
    }
    if (__syncthreads_or(acc != 0) && threadIdx.x == 0) atomicOr(flag, 1u);
}

__global__ void differ_bytes(const unsigned char* a, const unsigned char* b, std::size_t n, unsigned* flag) {
    unsigned acc = 0;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        acc |= a[i] ^ b[i];
    }
    if (__syncthreads_or(acc != 0) && threadIdx.x == 0) atomicOr(flag, 1u);
}

struct device_flag {
    unsigned* p = nullptr;
    device_flag() { CUDA_CHECK(cudaMalloc(&p, sizeof(unsigned))); }
    ~device_flag() { cudaFree(p); }
    device_flag(const device_flag&) = delete;
    device_flag& operator=(const device_flag&) = delete;
};

}  // namespace

bool device_bytes_differ(const void* a, const void* b, std::size_t n, cudaStream_t stream) {
    if (n == 0) return false;
    device_flag flag;
    CUDA_CHECK(cudaMemsetAsync(flag.p, 0, sizeof(unsigned), stream));
    constexpr int threads = 256;
    const auto ua = reinterpret_cast<std::uintptr_t>(a), ub = reinterpret_cast<std::uintptr_t>(b);
    std::size_t done = 0;
    // The 8-byte words from the first aligned offset when both pointers share it, bytes around.
    if ((ua % 8) == (ub % 8)) {
        const std::size_t head = std::min(n, (8 - ua % 8) % 8);
        const std::size_t words = (n - head) / 8;
        if (words) {
            const auto blocks = static_cast<unsigned>(std::min<std::size_t>(4096, (words + threads - 1) / threads));
            differ_words<<<blocks, threads, 0, stream>>>(reinterpret_cast<const std::uint64_t*>(ua + head),
                                                         reinterpret_cast<const std::uint64_t*>(ub + head), words, flag.p);
            CUDA_CHECK(cudaGetLastError());
        }
        if (head) {
            differ_bytes<<<1, threads, 0, stream>>>(static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b),
                                                    head, flag.p);
            CUDA_CHECK(cudaGetLastError());
        }
        done = head + words * 8;
    }
    const std::size_t rest = n - done;
    if (rest) {
        const auto blocks = static_cast<unsigned>(std::min<std::size_t>(4096, (rest + threads - 1) / threads));
        differ_bytes<<<blocks, threads, 0, stream>>>(static_cast<const unsigned char*>(a) + done,
                                                     static_cast<const unsigned char*>(b) + done, rest, flag.p);
        CUDA_CHECK(cudaGetLastError());
    }
    unsigned host = 0;
    CUDA_CHECK(cudaMemcpyAsync(&host, flag.p, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return host != 0;
}

}  // namespace fusebench
