#include "kernels/common/elem_io.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/rmsnorm/rmsnorm.hpp"

#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {
namespace {

constexpr int vec_bytes = 16;

template <class T, int W> struct alignas(sizeof(T) * W) vec_t {
    T v[W];
};

// x and residual are read exactly once: .cs (evict-first) loads were meant to keep them from
// displacing gamma in L2. Measured 1-4% slower than plain loads on an H200 (NOTES.md), so the
// launchers use plain loads; kept for the tuning program in scratch/.
template <class V> __device__ __forceinline__ V load_once(const V* p) {
    V r;
    if constexpr (sizeof(V) == 16) {
        const uint4 u = __ldcs(reinterpret_cast<const uint4*>(p));
        memcpy(&r, &u, sizeof(V));
    } else if constexpr (sizeof(V) == 8) {
        const uint2 u = __ldcs(reinterpret_cast<const uint2*>(p));
        memcpy(&r, &u, sizeof(V));
    } else if constexpr (sizeof(V) == 4) {
        const unsigned int u = __ldcs(reinterpret_cast<const unsigned int*>(p));
        memcpy(&r, &u, sizeof(V));
    } else {
        static_assert(sizeof(V) == 2, "unsupported access width");
        const unsigned short u = __ldcs(reinterpret_cast<const unsigned short*>(p));
        memcpy(&r, &u, sizeof(V));
    }
    return r;
}

// STREAM = false: plain loads (the production choice).
template <bool STREAM, class V> __device__ __forceinline__ V load_row(const V* p) {
    if constexpr (STREAM) {
        return load_once(p);
    } else {
        return *p;
    }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum over the block, returned to every thread. Every thread adds the per-warp partials in the same
// order, so all threads get bitwise the same value with one barrier. Call once per kernel (the
// shared slots are not reset).
__device__ __forceinline__ float block_sum(float v, float* warp_partials) {
    v = warp_sum(v);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) warp_partials[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    float total = 0;
    for (int w = 0; w < warps; ++w) total += warp_partials[w];
    return total;
}

__device__ __forceinline__ float inv_rms(float sum_sq, int hidden, float eps) {
    return rsqrtf(sum_sq / static_cast<float>(hidden) + eps);
}

// ---------------------------------------------------------------- naive baseline
template <class T>
__global__ void residual_add_kernel(const T* x, const T* residual, T* residual_out, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        residual_out[i] = from_f32<T>(to_f32(x[i]) + to_f32(residual[i]));
    }
}

template <class T>
__global__ void rmsnorm_kernel(const T* in, const T* __restrict__ gamma, T* y, int hidden, float eps) {
    __shared__ float partials[32];
    const T* row = in + std::size_t(blockIdx.x) * hidden;
    T* out = y + std::size_t(blockIdx.x) * hidden;
    float ss = 0;
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
        const float r = to_f32(row[j]);
        ss = fmaf(r, r, ss);
    }
    const float scale = inv_rms(block_sum(ss, partials), hidden, eps);
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
        out[j] = from_f32<T>(to_f32(row[j]) * scale * to_f32(gamma[j]));
    }
}

// ---------------------------------------------------------------- v1 block per row, simple
template <class T>
__global__ void residual_rmsnorm_block_kernel(const T* x, const T* residual, const T* __restrict__ gamma,
                                              T* y, T* residual_out, int hidden, float eps) {
    __shared__ float partials[32];
    const std::size_t off = std::size_t(blockIdx.x) * hidden;
    float ss = 0;
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
        const T r = from_f32<T>(to_f32(x[off + j]) + to_f32(residual[off + j]));
        residual_out[off + j] = r;
        const float f = to_f32(r);
        ss = fmaf(f, f, ss);
    }
    const float scale = inv_rms(block_sum(ss, partials), hidden, eps);
    // Each thread reads back only the elements it stored itself.
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
        y[off + j] = from_f32<T>(to_f32(residual_out[off + j]) * scale * to_f32(gamma[j]));
    }
}

// ---------------------------------------------------------------- v2 block per row, registers
// Thread t holds accesses t, t + blockDim, ..., t + (VPT-1) * blockDim of the row (W elements
// each): consecutive threads touch consecutive 16-byte words, so every warp access is coalesced.
// All loads are issued before any store: the stores may alias the loads (in-place), so the
// compiler could not hoist later loads above them.
constexpr int vec_max_block = 512;  // [threads] the launch-bounds cap: up to 128 registers a thread

template <class T, int W, int VPT, bool STREAM>
__global__ void __launch_bounds__(vec_max_block)
    residual_rmsnorm_vec_kernel(const T* x, const T* residual, const T* __restrict__ gamma, T* y,
                                T* residual_out, int hidden, float eps) {
    using V = vec_t<T, W>;
    __shared__ float partials[32];
    const std::size_t off = std::size_t(blockIdx.x) * hidden;
    const int nvec = hidden / W;
    const V* xv = reinterpret_cast<const V*>(x + off);
    const V* rv = reinterpret_cast<const V*>(residual + off);
    const V* gv = reinterpret_cast<const V*>(gamma);
    V* yv = reinterpret_cast<V*>(y + off);
    V* ov = reinterpret_cast<V*>(residual_out + off);

    V a[VPT], b[VPT], g[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        if (i < nvec) {
            a[k] = load_row<STREAM>(xv + i);
            b[k] = load_row<STREAM>(rv + i);
            g[k] = gv[i];
        }
    }
    float ss = 0;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        if (i < nvec) {
#pragma unroll
            for (int e = 0; e < W; ++e) {
                a[k].v[e] = from_f32<T>(to_f32(a[k].v[e]) + to_f32(b[k].v[e]));
                const float f = to_f32(a[k].v[e]);
                ss = fmaf(f, f, ss);
            }
            ov[i] = a[k];
        }
    }
    const float scale = inv_rms(block_sum(ss, partials), hidden, eps);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        if (i < nvec) {
            V o;
#pragma unroll
            for (int e = 0; e < W; ++e) o.v[e] = from_f32<T>(to_f32(a[k].v[e]) * scale * to_f32(g[k].v[e]));
            yv[i] = o;
        }
    }
}

// ---------------------------------------------------------------- v3 warp per row
template <class T, int W, int VPT, bool STREAM>
__global__ void residual_rmsnorm_warp_kernel(const T* x, const T* residual, const T* __restrict__ gamma,
                                             T* y, T* residual_out, std::size_t tokens, int hidden,
                                             float eps) {
    using V = vec_t<T, W>;
    const int lane = threadIdx.x & 31;
    const std::size_t first = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) >> 5;
    const std::size_t stride = (std::size_t(gridDim.x) * blockDim.x) >> 5;
    const int nvec = hidden / W;
    const V* gv = reinterpret_cast<const V*>(gamma);
    V g[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        if (lane + 32 * k < nvec) g[k] = gv[lane + 32 * k];
    }
    for (std::size_t row = first; row < tokens; row += stride) {
        const std::size_t off = row * hidden;
        const V* xv = reinterpret_cast<const V*>(x + off);
        const V* rv = reinterpret_cast<const V*>(residual + off);
        V* yv = reinterpret_cast<V*>(y + off);
        V* ov = reinterpret_cast<V*>(residual_out + off);
        V a[VPT], b[VPT];
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int i = lane + 32 * k;
            if (i < nvec) {
                a[k] = load_row<STREAM>(xv + i);
                b[k] = load_row<STREAM>(rv + i);
            }
        }
        float ss = 0;
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int i = lane + 32 * k;
            if (i < nvec) {
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    a[k].v[e] = from_f32<T>(to_f32(a[k].v[e]) + to_f32(b[k].v[e]));
                    const float f = to_f32(a[k].v[e]);
                    ss = fmaf(f, f, ss);
                }
                ov[i] = a[k];
            }
        }
        const float scale = inv_rms(warp_sum(ss), hidden, eps);
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int i = lane + 32 * k;
            if (i < nvec) {
                V o;
#pragma unroll
                for (int e = 0; e < W; ++e) o.v[e] = from_f32<T>(to_f32(a[k].v[e]) * scale * to_f32(g[k].v[e]));
                yv[i] = o;
            }
        }
    }
}

// ---------------------------------------------------------------- host side
struct problem {
    const void* x;
    const void* residual;
    const void* gamma;
    void* y;
    void* residual_out;
    std::size_t tokens, hidden;
    float eps;
};

std::size_t elem_size(elem type) noexcept { return type == elem::f32 ? 4 : 2; }

// Access width in elements for this launch: 16 bytes when every pointer and the row pitch allow
// it, one element otherwise (odd hidden, pointers off a 16-byte boundary).
int access_width(const problem& p, std::size_t el) {
    const std::size_t w = vec_bytes / el;
    const auto aligned = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % vec_bytes == 0; };
    const bool ok = p.hidden % w == 0 && aligned(p.x) && aligned(p.residual) && aligned(p.gamma) &&
                    aligned(p.y) && aligned(p.residual_out);
    return ok ? static_cast<int>(w) : 1;
}

void check_row_grid(const problem& p, const char* who) {
    if (p.tokens > static_cast<std::size_t>(INT_MAX) || p.hidden > static_cast<std::size_t>(INT_MAX)) {
        throw std::invalid_argument(std::string(who) + ": tokens and hidden must fit in int (block per row)");
    }
}

// Accesses per thread on the register-resident path. 16-bit types stop at 4 16-byte accesses: at 8,
// a, b and gamma (96 registers of packed data) plus their fp32 conversions spill under the
// 128-register cap of a 512-thread block.
template <class T> constexpr int vec_max_vpt = sizeof(T) == 4 ? 8 : 4;
constexpr int scalar_max_vpt = 16;  // element accesses per thread, fallback path
constexpr int warp_max_vpt = 8;
constexpr int warp_scalar_max_vpt = 32;
constexpr int warp_block = 128;       // 4 rows per block

template <class T, int W, bool STREAM, int... VPTS>
void launch_vec_impl(const problem& p, int max_threads, cudaStream_t stream) {
    const int nvec = static_cast<int>(p.hidden) / W;
    bool launched = false;
    // The smallest VPT whose block fits in max_threads: the most threads per row, hence the most
    // rows' loads in flight per SM for a given register budget.
    const auto try_one = [&](auto vpt_tag) {
        constexpr int VPT = decltype(vpt_tag)::value;
        if (launched) return;
        const int threads = ((nvec + VPT - 1) / VPT + 31) / 32 * 32;
        if (threads > max_threads) return;
        residual_rmsnorm_vec_kernel<T, W, VPT, STREAM>
            <<<static_cast<unsigned>(p.tokens), static_cast<unsigned>(threads), 0, stream>>>(
                static_cast<const T*>(p.x), static_cast<const T*>(p.residual), static_cast<const T*>(p.gamma),
                static_cast<T*>(p.y), static_cast<T*>(p.residual_out), static_cast<int>(p.hidden), p.eps);
        check_launch("residual_rmsnorm_vec_kernel");
        launched = true;
    };
    (try_one(std::integral_constant<int, VPTS>{}), ...);
    if (!launched) {
        throw std::invalid_argument("launch_residual_rmsnorm_vec: hidden " + std::to_string(p.hidden) +
                                    " exceeds the register-resident capacity at this access width");
    }
}

// max_threads: block-size cap used to pick VPT (the tuning program sweeps it).
template <class T, bool STREAM> void launch_vec_typed(const problem& p, int max_threads, cudaStream_t stream) {
    constexpr int WV = vec_bytes / sizeof(T);
    if (access_width(p, sizeof(T)) == WV) {
        if constexpr (vec_max_vpt<T> == 8) {
            launch_vec_impl<T, WV, STREAM, 1, 2, 4, 8>(p, max_threads, stream);
        } else {
            launch_vec_impl<T, WV, STREAM, 1, 2, 4>(p, max_threads, stream);
        }
    } else {
        launch_vec_impl<T, 1, STREAM, 1, 2, 4, 8, scalar_max_vpt>(p, max_threads, stream);
    }
}

template <class T, int W, bool STREAM, int... VPTS> void launch_warp_impl(const problem& p, cudaStream_t stream) {
    const int nvec = static_cast<int>(p.hidden) / W;
    bool launched = false;
    const auto try_one = [&](auto vpt_tag) {
        constexpr int VPT = decltype(vpt_tag)::value;
        if (launched || 32 * VPT < nvec) return;
        const std::size_t rows_per_block = warp_block / 32;
        const std::size_t blocks = (p.tokens + rows_per_block - 1) / rows_per_block;
        const unsigned grid = static_cast<unsigned>(blocks > INT_MAX ? INT_MAX : blocks);
        residual_rmsnorm_warp_kernel<T, W, VPT, STREAM><<<grid, warp_block, 0, stream>>>(
            static_cast<const T*>(p.x), static_cast<const T*>(p.residual), static_cast<const T*>(p.gamma),
            static_cast<T*>(p.y), static_cast<T*>(p.residual_out), p.tokens, static_cast<int>(p.hidden), p.eps);
        check_launch("residual_rmsnorm_warp_kernel");
        launched = true;
    };
    (try_one(std::integral_constant<int, VPTS>{}), ...);
    if (!launched) {
        throw std::invalid_argument("launch_residual_rmsnorm_warp: hidden " + std::to_string(p.hidden) +
                                    " exceeds what one warp holds in registers at this access width");
    }
}

template <class T, bool STREAM> void launch_warp_typed(const problem& p, cudaStream_t stream) {
    constexpr int WV = vec_bytes / sizeof(T);
    if (access_width(p, sizeof(T)) == WV) {
        launch_warp_impl<T, WV, STREAM, 1, 2, 4, warp_max_vpt>(p, stream);
    } else {
        launch_warp_impl<T, 1, STREAM, 1, 2, 4, 8, 16, warp_scalar_max_vpt>(p, stream);
    }
}

// The production choice of load flavour and block cap (see kernels/rmsnorm/NOTES.md): plain loads
// measured 1-4% faster than .cs loads on an H200 for every dtype and size.
constexpr bool stream_loads = false;
constexpr int vec_block_cap = vec_max_block;

// v4's block cap: the block that gives each thread 4 accesses of the access width, at least one
// warp, at most vec_block_cap threads.
int four_per_thread_cap(const problem& p, std::size_t el) {
    const std::size_t nvec = p.hidden / static_cast<std::size_t>(access_width(p, el));
    const std::size_t threads = ((nvec + 3) / 4 + 31) / 32 * 32;
    return static_cast<int>(threads > std::size_t(vec_block_cap) ? std::size_t(vec_block_cap) : threads);
}

}  // namespace

std::size_t residual_rmsnorm_vector_width(elem type) noexcept { return vec_bytes / elem_size(type); }

std::size_t residual_rmsnorm_vec_max_hidden(elem type, bool vectorizable) noexcept {
    // Blocks of up to vec_block_cap threads, VPT up to vec_max_vpt (16-byte) or scalar_max_vpt
    // (element) accesses.
    const std::size_t vpt = type == elem::f32 ? vec_max_vpt<float> : vec_max_vpt<__half>;
    return vectorizable ? std::size_t(vec_block_cap) * vpt * residual_rmsnorm_vector_width(type)
                        : std::size_t(vec_block_cap) * scalar_max_vpt;
}

std::size_t residual_rmsnorm_warp_max_hidden(elem type, bool vectorizable) noexcept {
    return vectorizable ? std::size_t(32) * warp_max_vpt * residual_rmsnorm_vector_width(type)
                        : std::size_t(32) * warp_scalar_max_vpt;
}

void launch_residual_rmsnorm_naive(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                   void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                   float eps, cudaStream_t stream) {
    const problem p{d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps};
    if (tokens == 0 || hidden == 0) return;
    check_row_grid(p, "launch_residual_rmsnorm_naive");
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        const std::size_t n = tokens * hidden;
        constexpr unsigned threads = 256;
        const std::size_t blocks = (n + threads - 1) / threads;
        const unsigned grid = static_cast<unsigned>(blocks > 65535u * 32u ? 65535u * 32u : blocks);
        residual_add_kernel<T><<<grid, threads, 0, stream>>>(static_cast<const T*>(d_x),
                                                             static_cast<const T*>(d_residual),
                                                             static_cast<T*>(d_residual_out), n);
        check_launch("residual_add_kernel");
        rmsnorm_kernel<T><<<static_cast<unsigned>(tokens), threads, 0, stream>>>(
            static_cast<const T*>(d_residual_out), static_cast<const T*>(d_gamma), static_cast<T*>(d_y),
            static_cast<int>(hidden), eps);
        check_launch("rmsnorm_kernel");
    });
}

void launch_residual_rmsnorm_block(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                   void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                   float eps, cudaStream_t stream) {
    const problem p{d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps};
    if (tokens == 0 || hidden == 0) return;
    check_row_grid(p, "launch_residual_rmsnorm_block");
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        residual_rmsnorm_block_kernel<T><<<static_cast<unsigned>(tokens), 256, 0, stream>>>(
            static_cast<const T*>(d_x), static_cast<const T*>(d_residual), static_cast<const T*>(d_gamma),
            static_cast<T*>(d_y), static_cast<T*>(d_residual_out), static_cast<int>(hidden), eps);
        check_launch("residual_rmsnorm_block_kernel");
    });
}

void launch_residual_rmsnorm_vec(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                 void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                 float eps, cudaStream_t stream) {
    const problem p{d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps};
    if (tokens == 0 || hidden == 0) return;
    check_row_grid(p, "launch_residual_rmsnorm_vec");
    dispatch_elem(type, [&](auto t) { launch_vec_typed<decltype(t), stream_loads>(p, vec_block_cap, stream); });
}

void launch_residual_rmsnorm_vec4(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                  void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                  float eps, cudaStream_t stream) {
    const problem p{d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps};
    if (tokens == 0 || hidden == 0) return;
    check_row_grid(p, "launch_residual_rmsnorm_vec4");
    dispatch_elem(type, [&](auto t) {
        using T = decltype(t);
        launch_vec_typed<T, stream_loads>(p, four_per_thread_cap(p, sizeof(T)), stream);
    });
}

void launch_residual_rmsnorm_warp(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                  void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                  float eps, cudaStream_t stream) {
    const problem p{d_x, d_residual, d_gamma, d_y, d_residual_out, tokens, hidden, eps};
    if (tokens == 0 || hidden == 0) return;
    if (hidden > static_cast<std::size_t>(INT_MAX)) {
        throw std::invalid_argument("launch_residual_rmsnorm_warp: hidden must fit in int");
    }
    dispatch_elem(type, [&](auto t) { launch_warp_typed<decltype(t), stream_loads>(p, stream); });
}

}  // namespace fusebench::kernels
