// What the two implicit GEMM conv1d kernels share (implicit_gemm.cu: bf16 / fp16 by mma.sync
// m16n8k16; implicit_gemm_tf32.cu: fp32 rounded to TF32 by m16n8k8): the tile and its byte
// geometry, the PTX wrappers, the weight packing, the weights' cp.async into a stage, the
// double-buffered chunk loop, the bias + GELU epilogue and the launch. E is the element in global
// and shared memory (bf16 / fp16, or fp32); both kernels move the same bytes: a K chunk is 64 bytes
// of channels (32 16-bit or 16 fp32 channels), a shared row 80 bytes (conflict-free ldmatrix), a
// cp.async segment and an x staging group 16 bytes. Each kernel keeps its own x staging (16-bit
// words vs fp32 rounded as they are stored) and its own tensor-core step (fragments and
// accumulation differ). Internal linkage (an unnamed namespace): each file compiles its own.
#pragma once

#include "kernels/common/elem_io.cuh"
#include "kernels/common/gelu.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/conv1d/conv1d.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {

namespace {

constexpr int ig_bm = 128;       // output channels per block
constexpr int ig_bn = 128;       // output positions per block
constexpr int ig_threads = 256;  // 8 warps: 2 (M, 64 rows each) x 4 (N, 32 columns each)

template <typename E>
struct ig_tile {
    static constexpr int ci = 64 / static_cast<int>(sizeof(E));     // input channels per K chunk (K = 3 ci per chunk)
    static constexpr int pitch = 80 / static_cast<int>(sizeof(E));  // shared row pitch [elements]: 80 bytes
    static constexpr int vec = 16 / static_cast<int>(sizeof(E));    // elements per 16 bytes
};

template <typename E, int S>
struct ig_geometry : ig_tile<E> {
    using tile = ig_tile<E>;
    static constexpr int x_rows = ig_bn + 2;                   // rows per plane (window q < bn s + 2)
    static constexpr int a_elems = 3 * ig_bm * tile::pitch;    // per stage
    static constexpr int x_elems = S * x_rows * tile::pitch;   // per stage
    static constexpr int stage_elems = a_elems + x_elems;
    static constexpr int groups = ig_bn * S / tile::vec + 2;  // 16-byte groups of positions covering the window
    static constexpr int pairs = groups / 2;                   // a thread loads two adjacent groups (one sector)
    static constexpr int x_items = tile::ci * pairs;
    static constexpr int x_iters = (x_items + ig_threads - 1) / ig_threads;
    static_assert(groups % 2 == 0, "groups come in pairs");
};

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit_all() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }

// The packed weights as they are (16-bit kernel).
struct ig_as_is {
    template <typename V>
    __device__ __forceinline__ V operator()(V v) const { return v; }
};

// Wp[tap][o][ci] (o < m_pad, ci < k_pad) = op(w[o][ci][tap]), zeros in the padding: every element
// of the packed buffer is written, so the GEMM needs no bounds checks on A.
template <typename E, typename Op>
__global__ void ig_pack_weights(const E* __restrict__ w, E* __restrict__ wp, int cin, int cout, int k_pad, int m_pad) {
    const std::size_t n = static_cast<std::size_t>(3) * m_pad * k_pad;
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int ci = static_cast<int>(idx % k_pad);
        const int o = static_cast<int>((idx / k_pad) % m_pad);
        const int tap = static_cast<int>(idx / (static_cast<std::size_t>(k_pad) * m_pad));
        wp[idx] = o < cout && ci < cin ? Op{}(w[(static_cast<std::size_t>(o) * cin + ci) * 3 + tap]) : from_f32<E>(0.0f);
    }
}

// The weights of K chunk `chunk` (its ci input channels, 3 taps, the block's 128 rows) into stage
// `as` [tap * bm + row][pitch] by cp.async: 4 segments of 16 bytes a row.
template <typename E>
__device__ __forceinline__ void ig_load_a(E* as, const E* wp, int tid, int m0, int m_pad, int k_pad, int chunk) {
    using tile = ig_tile<E>;
    const int ci0 = chunk * tile::ci;
    for (int i = tid; i < 3 * ig_bm * 4; i += ig_threads) {
        const int seg = i & 3, r = i >> 2;  // r = tap * bm + row
        const int tap = r / ig_bm, row = r % ig_bm;
        const E* src = wp + (static_cast<std::size_t>(tap) * m_pad + m0 + row) * k_pad + ci0 + seg * tile::vec;
        cp_async_16(smem_u32(as + r * tile::pitch + seg * tile::vec), src);
    }
}

// The K loop over two shared-memory stages: the next chunk's weights arrive by cp.async
// (load_a(stage, chunk)) and its inputs through registers (load_x(chunk), then store_x(stage))
// while compute(stage) multiplies the current chunk.
template <typename LoadA, typename LoadX, typename StoreX, typename Compute>
__device__ __forceinline__ void ig_chunk_loop(int chunks, LoadA&& load_a, LoadX&& load_x, StoreX&& store_x, Compute&& compute) {
    load_a(0, 0);
    cp_async_commit_all();
    load_x(0);
    store_x(0);
    cp_async_wait_all();
    __syncthreads();
    for (int chunk = 0; chunk < chunks; ++chunk) {
        const int cur = chunk & 1;
        const bool more = chunk + 1 < chunks;
        if (more) {
            load_a(cur ^ 1, chunk + 1);
            cp_async_commit_all();
            load_x(chunk + 1);
        }
        compute(cur);
        if (more) store_x(cur ^ 1);
        cp_async_wait_all();
        __syncthreads();
    }
}

// Epilogue: bias + GELU in fp32, rounded once to E. The warp's (wm, wn) 64 x 32 accumulators
// acc[i][j] (m16 x n8 tiles): c0, c1 at (row lane / 4, columns 2 (lane % 4) + 0, 1); c2, c3
// eight rows lower. y_pairs: both columns in one store (L_out even, y aligned to two elements).
template <typename E>
__device__ __forceinline__ void ig_epilogue(const float (&acc)[4][4][4], const E* bias, E* y, int cout, int lout, int m0, int t0,
                                            int b, int wm, int wn, int lane, bool y_pairs) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int o = m0 + wm * 64 + i * 16 + (lane >> 2) + half * 8;
            if (o >= cout) continue;
            const float bo = to_f32(bias[o]);
            E* yr = y + (static_cast<std::size_t>(b) * cout + o) * lout;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int t = t0 + wn * 32 + j * 8 + 2 * (lane & 3);
                const float v0 = gelu_erf<E>(acc[i][j][2 * half] + bo), v1 = gelu_erf<E>(acc[i][j][2 * half + 1] + bo);
                if (y_pairs && t + 1 < lout) {
                    if constexpr (sizeof(E) == 4) {
                        *reinterpret_cast<float2*>(yr + t) = make_float2(v0, v1);
                    } else {
                        E pair[2] = {from_f32<E>(v0), from_f32<E>(v1)};
                        *reinterpret_cast<std::uint32_t*>(yr + t) = *reinterpret_cast<const std::uint32_t*>(pair);
                    }
                } else {
                    if (t < lout) yr[t] = from_f32<E>(v0);
                    if (t + 1 < lout) yr[t + 1] = from_f32<E>(v1);
                }
            }
        }
    }
}

int round_up(int v, int m) { return (v + m - 1) / m * m; }

// Sizes and stride both kernels take (the grid limits: ig_grid_unsupported).
void ig_check_shape(const conv1d_dense_shape& s, const char* who) {
    if (s.batch < 1 || s.cin < 1 || s.cout < 1 || s.length < 1) throw std::invalid_argument(std::string(who) + ": sizes must be positive");
    if (s.stride != 1 && s.stride != 2) throw std::invalid_argument(std::string(who) + ": stride must be 1 or 2");
}

const char* ig_grid_unsupported(const conv1d_dense_shape& s) {
    if (s.batch > 65535) return "batch above 65535 (grid z)";
    if ((s.out_length() + ig_bn - 1) / ig_bn > 65535) return "output length above 65535 x 128 (grid y)";
    return nullptr;
}

template <typename E>
std::size_t ig_workspace_bytes(const conv1d_dense_shape& s) {
    return static_cast<std::size_t>(3) * round_up(s.cout, ig_bm) * round_up(s.cin, ig_tile<E>::ci) * sizeof(E);
}

// Throws for a failed runtime call or launch with `who` and `what` in the message (built only on
// failure). Clears the last error first: a failed cudaFuncSetAttribute leaves it set, and the next
// launcher's check would take it for its own.
inline void ig_check(cudaError_t e, const char* who, const char* what) {
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        check_call(e, (std::string(who) + what).c_str());
    }
}

// Packs op(w) into the workspace, then launches the conv kernel (the 16-byte x loads' instance
// when length is on the 16-byte grid and x 16-byte aligned) on the tile grid with both stages'
// dynamic shared memory. Kernel: the kernel's instances' pointer type.
template <typename E, int S, typename Op, typename Kernel>
void ig_launch(Kernel vec_kernel, Kernel scalar_kernel, const E* x, const E* w, const E* bias, E* y, void* workspace,
               const conv1d_dense_shape& s, cudaStream_t stream, const char* who) {
    using G = ig_geometry<E, S>;
    const int k_pad = round_up(s.cin, G::ci), m_pad = round_up(s.cout, ig_bm), lout = s.out_length();
    E* wp = static_cast<E*>(workspace);
    const std::size_t n_pack = static_cast<std::size_t>(3) * m_pad * k_pad;
    const unsigned pack_blocks = static_cast<unsigned>(std::min<std::size_t>((n_pack + 255) / 256, 65535));
    ig_pack_weights<E, Op><<<pack_blocks, 256, 0, stream>>>(w, wp, s.cin, s.cout, k_pad, m_pad);
    ig_check(cudaGetLastError(), who, ": weight packing");

    const bool vec = s.length % G::vec == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
    // Even L_out keeps every pair inside a row; an aligned row start needs y aligned to a pair.
    const bool y_pairs = lout % 2 == 0 && reinterpret_cast<std::uintptr_t>(y) % (2 * sizeof(E)) == 0;
    const dim3 grid(static_cast<unsigned>(m_pad / ig_bm), static_cast<unsigned>((lout + ig_bn - 1) / ig_bn), static_cast<unsigned>(s.batch));
    const int smem = 2 * G::stage_elems * static_cast<int>(sizeof(E));
    const Kernel kernel = vec ? vec_kernel : scalar_kernel;
    // Above the 48 KB default: opt in (cheap, idempotent; per kernel, not per launch state).
    ig_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), who, ": cudaFuncSetAttribute");
    kernel<<<grid, ig_threads, static_cast<std::size_t>(smem), stream>>>(x, wp, bias, y, s.cin, s.cout, s.length, lout, k_pad, m_pad,
                                                                          y_pairs);
    ig_check(cudaGetLastError(), who, "");
}

}  // namespace

}  // namespace fusebench::kernels
