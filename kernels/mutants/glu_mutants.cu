// Broken copies of kernels/glu (SwiGLU): one realistic bug each, see mutants.hpp.
#include "kernels/common/launch_check.hpp"
#include "kernels/common/elem_io.cuh"
#include "kernels/mutants/mutants.hpp"

#include <cfloat>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace fusebench::kernels::mutants {
using fusebench::kernels::check_launch;
namespace {

void check_call(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
    }
}

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

constexpr int block_threads = 256;
constexpr int vec_bytes = 16;
constexpr int vec_per_thread = 2;

unsigned grid_for(std::size_t work, unsigned per_block) {
    const std::size_t blocks = (work + per_block - 1) / per_block;
    return static_cast<unsigned>(blocks == 0 ? 1 : (blocks > 65535u * 32u ? 65535u * 32u : blocks));
}

// ---------------------------------------------------------------- scalar kernel and its bugs
enum class scalar_bug { none, past_end, flush_tiny };

template <class T, scalar_bug B>
__global__ void glu_scalar_kernel(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ y,
                                  std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; B == scalar_bug::past_end ? i <= n : i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float v = silu(to_f32(gate[i])) * to_f32(up[i]);
        if constexpr (B == scalar_bug::flush_tiny) v = fabsf(v) < FLT_MIN ? 0.0f : v;  // the bug: flush to zero
        y[i] = from_f32<T>(v);
    }
}

template <scalar_bug B>
void launch_scalar(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        glu_scalar_kernel<T, B><<<grid_for(n, block_threads), block_threads, 0, stream>>>(
            static_cast<const T*>(d_gate), static_cast<const T*>(d_up), static_cast<T*>(d_y), n);
        check_launch("glu_scalar_kernel (mutant)");
    });
}

// ---------------------------------------------------------------- vectorized kernel without tail
template <class T> struct alignas(vec_bytes) vec_t {
    T v[vec_bytes / sizeof(T)];
};

template <class T>
__global__ void __launch_bounds__(block_threads)
    glu_vec_no_tail_kernel(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ y, std::size_t head,
                           std::size_t nvec) {
    constexpr int W = vec_bytes / sizeof(T);
    const std::size_t tid = blockIdx.x * std::size_t(block_threads) + threadIdx.x;
    if (tid < head) y[tid] = from_f32<T>(silu(to_f32(gate[tid])) * to_f32(up[tid]));
    // The bug: the real kernel also covers [head + nvec * W, n) here, one element per thread.
    const auto* g = reinterpret_cast<const vec_t<T>*>(gate + head);
    const auto* u = reinterpret_cast<const vec_t<T>*>(up + head);
    auto* o = reinterpret_cast<vec_t<T>*>(y + head);
    const std::size_t base = blockIdx.x * std::size_t(block_threads) * vec_per_thread + threadIdx.x;
#pragma unroll
    for (int k = 0; k < vec_per_thread; ++k) {
        const std::size_t j = base + std::size_t(k) * block_threads;
        if (j < nvec) {
            const vec_t<T> gv = g[j], uv = u[j];
            vec_t<T> r;
#pragma unroll
            for (int e = 0; e < W; ++e) r.v[e] = from_f32<T>(silu(to_f32(gv.v[e])) * to_f32(uv.v[e]));
            o[j] = r;
        }
    }
}

// ---------------------------------------------------------------- naive (two kernels)
template <class T>
__global__ void glu_act_kernel(const T* gate, T* inter, std::size_t n) {  // may alias (mutant 6)
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        inter[i] = from_f32<T>(silu(to_f32(gate[i])));
    }
}

template <class T>
__global__ void glu_mul_kernel(const T* inter, const T* __restrict__ up, T* __restrict__ y, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        y[i] = from_f32<T>(to_f32(inter[i]) * to_f32(up[i]));
    }
}

// Mutant 15: a persistent fused kernel whose blocks take tiles of 4096 elements from a counter in
// the workspace. The reset pass clears the counter only when the workspace tag is not its own, i.e.
// on the workspace's first use (the bug: it should clear it on every launch). Every later launch
// on the same workspace finds the counter past the last tile, and every block returns at once.
constexpr unsigned queue_tile = 4096;

struct queue_state {
    unsigned long long tag;
    unsigned long long next_tile;
};

__global__ void glu_queue_reset_kernel(queue_state* q, unsigned long long expected) {
    if (q->tag != expected) {  // the bug: "first use of this workspace" instead of "every launch"
        q->next_tile = 0;
        q->tag = expected;
    }
}

template <class T>
__global__ void __launch_bounds__(block_threads)
    glu_queue_kernel(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ y, std::size_t n,
                     queue_state* q) {
    __shared__ unsigned long long tile;
    const unsigned long long ntiles = (n + queue_tile - 1) / queue_tile;
    for (;;) {
        if (threadIdx.x == 0) tile = atomicAdd(&q->next_tile, 1ull);
        __syncthreads();
        const unsigned long long t = tile;
        __syncthreads();  // every thread has read tile before thread 0 takes the next one
        if (t >= ntiles) return;
        const std::size_t begin = t * queue_tile;
        const std::size_t end = begin + queue_tile < n ? begin + queue_tile : n;
        for (std::size_t i = begin + threadIdx.x; i < end; i += block_threads) {
            y[i] = from_f32<T>(silu(to_f32(gate[i])) * to_f32(up[i]));
        }
    }
}

template <class T>
void launch_naive_into(const T* gate, const T* up, T* y, T* inter, std::size_t n, cudaStream_t stream) {
    const unsigned grid = grid_for(n, block_threads);
    glu_act_kernel<T><<<grid, block_threads, 0, stream>>>(gate, inter, n);
    check_launch("glu_act_kernel (mutant)");
    glu_mul_kernel<T><<<grid, block_threads, 0, stream>>>(inter, up, y, n);
    check_launch("glu_mul_kernel (mutant)");
}

std::size_t elem_bytes(elem type) { return type == elem::f32 ? 4 : 2; }

}  // namespace

void launch_glu_vec_no_tail(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                            cudaStream_t stream) {
    if (n == 0) return;
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        constexpr std::size_t W = vec_bytes / sizeof(T);
        const auto mis = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % vec_bytes; };
        if (mis(d_gate) != mis(d_up) || mis(d_gate) != mis(d_y) || mis(d_gate) % sizeof(T) != 0) {
            launch_scalar<scalar_bug::none>(type, d_gate, d_up, d_y, n, stream);
            return;
        }
        std::size_t head = mis(d_gate) ? (vec_bytes - mis(d_gate)) / sizeof(T) : 0;
        if (head > n) head = n;
        const std::size_t nvec = (n - head) / W;
        const std::size_t tail = n - head - nvec * W;
        const std::size_t per_block = std::size_t(block_threads) * vec_per_thread;
        std::size_t blocks = (nvec + per_block - 1) / per_block;
        if (blocks == 0 && (head || tail)) blocks = 1;
        glu_vec_no_tail_kernel<T><<<static_cast<unsigned>(blocks), block_threads, 0, stream>>>(
            static_cast<const T*>(d_gate), static_cast<const T*>(d_up), static_cast<T*>(d_y), head, nvec);
        check_launch("glu_vec_no_tail_kernel");
    });
}

void launch_glu_scalar_past_end(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                                cudaStream_t stream) {
    launch_scalar<scalar_bug::past_end>(type, d_gate, d_up, d_y, n, stream);
}

void launch_glu_flush_tiny(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                           cudaStream_t stream) {
    launch_scalar<scalar_bug::flush_tiny>(type, d_gate, d_up, d_y, n, stream);
}

void launch_glu_naive_gate_as_scratch(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                                      cudaStream_t stream) {
    if (n == 0) return;
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        const T* gate = static_cast<const T*>(d_gate);
        // The bug: "gate is dead after the activation", so act(gate) overwrites it in place.
        launch_naive_into<T>(gate, static_cast<const T*>(d_up), static_cast<T*>(d_y), const_cast<T*>(gate), n, stream);
    });
}

void launch_glu_side_stream(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                            cudaStream_t stream) {
    (void)stream;  // the bug: the caller's stream is ignored
    static cudaStream_t side = [] {
        cudaStream_t s = nullptr;
        check_call(cudaStreamCreate(&s), "cudaStreamCreate (mutant side stream)");
        return s;
    }();
    launch_scalar<scalar_bug::none>(type, d_gate, d_up, d_y, n, side);
}

void launch_glu_cached_by_output(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                                 cudaStream_t stream) {
    if (n == 0) return;
    struct entry {
        void* copy = nullptr;
        std::size_t bytes = 0;
    };
    static std::mutex mutex;
    static std::map<void*, entry> cache;  // never freed: the mutant's own leak, bounded by its cases
    const std::size_t bytes = n * elem_bytes(type);
    std::lock_guard lock(mutex);
    auto it = cache.find(d_y);
    if (it != cache.end() && it->second.bytes == bytes) {
        // The bug: a hit on the output buffer alone; the inputs are not part of the key.
        check_call(cudaMemcpyAsync(d_y, it->second.copy, bytes, cudaMemcpyDeviceToDevice, stream), "cache hit copy");
        return;
    }
    launch_scalar<scalar_bug::none>(type, d_gate, d_up, d_y, n, stream);
    entry e{nullptr, bytes};
    check_call(cudaMalloc(&e.copy, bytes), "cudaMalloc (mutant cache)");
    check_call(cudaMemcpyAsync(e.copy, d_y, bytes, cudaMemcpyDeviceToDevice, stream), "cache fill copy");
    if (it != cache.end()) it->second = e;  // the old copy leaks, as the size changed
    else cache.emplace(d_y, e);
}

std::size_t glu_unreset_queue_workspace_bytes() { return sizeof(queue_state); }

void launch_glu_unreset_queue(elem type, const void* d_gate, const void* d_up, void* d_y, void* d_workspace,
                              std::size_t workspace_bytes, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    if (!d_workspace || workspace_bytes < sizeof(queue_state)) {
        throw std::invalid_argument("launch_glu_unreset_queue: workspace too small");
    }
    // Any tag value that the harness's poison patterns (all 0xFF, all 0x7B) cannot produce.
    unsigned long long expected = reinterpret_cast<std::uintptr_t>(d_gate) ^ (n * 0x9E3779B97F4A7C15ull);
    if (expected == ~0ull || expected == 0x7B7B7B7B7B7B7B7Bull) expected ^= 1;
    auto* q = static_cast<queue_state*>(d_workspace);
    // A persistent grid: at most 1024 blocks loop over the tiles.
    const std::size_t ntiles = (n + queue_tile - 1) / queue_tile;
    const unsigned grid = static_cast<unsigned>(ntiles < 1024 ? ntiles : 1024);
    glu_queue_reset_kernel<<<1, 1, 0, stream>>>(q, expected);
    check_launch("glu_queue_reset_kernel");
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        glu_queue_kernel<T><<<grid, block_threads, 0, stream>>>(static_cast<const T*>(d_gate), static_cast<const T*>(d_up),
                                                               static_cast<T*>(d_y), n, q);
        check_launch("glu_queue_kernel");
    });
}

void launch_glu_naive_unchecked_workspace(elem type, const void* d_gate, const void* d_up, void* d_y,
                                          void* d_intermediate, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        // The bug: no check that the workspace exists; the binding never asked for one.
        launch_naive_into<T>(static_cast<const T*>(d_gate), static_cast<const T*>(d_up), static_cast<T*>(d_y),
                             static_cast<T*>(d_intermediate), n, stream);
    });
}

}  // namespace fusebench::kernels::mutants
