// conv1d kernels: dense (Whisper encoder) and depthwise causal (Mamba), naive and fused.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/conv1d/conv1d.hpp"
#include "kernels/conv1d/naive.cuh"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fusebench::kernels {

namespace {

// SiLU for outputs rounded to bf16 / fp16 (depthwise_fused_vec) from s = z log2(e) (the kernel
// folds log2(e) into its weights and bias): y = s / (log2(e) (1 + 2^-s)) = z / (1 + e^-z), by
// ex2.approx, one FMA (log2(e) 2^-s + log2(e): the ln 2 of s ln 2 rides on the denominator),
// rcp.approx and a multiplication: 4 instructions per output (main's __expf / __fdividef form,
// with the bias's add, took 9 in SASS: the argument's scaling and the non-.ftz forms' denormal
// handling). The .ftz forms: a denormal 2^-s changes the denominator by less than its ulp.
// s < -128 (z < -88.7): 2^-s = inf, y = s x 0 = -0 (exact: |y| < |z| 2^-128); s = +inf: y = +inf;
// s = -inf: y = -0 (the accurate formula: NaN); NaN: NaN; |z| above FLT_MAX / log2(e) (2.36e38,
// bf16 inputs only) overflows s. Relative error otherwise: the rounding of s, times |s| ln 2
// through 2^-s where the sigmoid is small (an fp32 emulation with exact exp2 and division: below
// 3.8e-6 for |z| <= 120, as __expf's own argument scaling), plus ex2.approx's and rcp.approx's
// 2 ulp; far under the output's half-ulp rounding of 2^-9 (bf16) or 2^-12 (fp16) relative. fp32
// outputs keep the accurate formula, which their per-element bound assumes. Measured
// alternatives (kernels/conv1d/NOTES.md): one reciprocal shared by 2 or 4 outputs (fewer MUFU
// operations, more instructions) was slower.
__device__ __forceinline__ float ex2_ftz(float v) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}
__device__ __forceinline__ float rcp_ftz(float v) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}
constexpr float log2e_f = 1.4426950408889634f;
__device__ __forceinline__ float silu_log2e(float s) { return s * rcp_ftz(fmaf(ex2_ftz(-s), log2e_f, log2e_f)); }

// Element i (0 or 1) of a 32-bit word of two bf16 / fp16 values, widened to fp32: one instruction
// (bf16: a shift or a mask; fp16: a conversion).
template <typename T, int I>
__device__ __forceinline__ float half_of(std::uint32_t u) {
    if constexpr (std::is_same_v<T, __half>) {
        __half2 h;
        *reinterpret_cast<std::uint32_t*>(&h) = u;
        return I == 0 ? __low2float(h) : __high2float(h);
    } else {
        return __uint_as_float(I == 0 ? u << 16 : u & 0xffff0000u);
    }
}
template <typename T>
__device__ __forceinline__ float elem_of(const std::uint32_t* words, int i) {  // i known at compile time (unrolled)
    return i % 2 == 0 ? half_of<T, 0>(words[i / 2]) : half_of<T, 1>(words[i / 2]);
}

// Two fp32 values rounded to T and packed (lo in the low half): one cvt.rn.{bf16x2, f16x2}.
template <typename T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
    std::uint32_t u;
    if constexpr (std::is_same_v<T, __half>) {
        const __half2 h = __floats2half2_rn(lo, hi);
        u = *reinterpret_cast<const std::uint32_t*>(&h);
    } else {
        const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        u = *reinterpret_cast<const std::uint32_t*>(&h);
    }
    return u;
}

// ------------------------------------------------------------------ dense
// The peer's epilogue: z (fp32 or the storage type) + bias, GELU, rounded once to T.
template <typename T, typename Z>
__global__ void bias_gelu(const Z* __restrict__ z, const T* __restrict__ bias, T* __restrict__ y, std::size_t n, int channels, int length) {
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        st(y, idx, gelu_erf(ld(z, idx) + ld(bias, (idx / length) % channels)));
    }
}

constexpr int dense_co_tile = 64, dense_t_tile = 64, dense_ci_chunk = 16;

// Block (16 x 16 threads) computes 64 output channels x 64 positions of one batch: thread (ty, tx)
// owns channels o0 + 4 ty + a and positions t0 + tx + 16 c (a, c < 4).
template <typename T, int STRIDE>
__global__ void __launch_bounds__(256) dense_direct(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                                    T* __restrict__ y, int cin, int cout, int length, int lout) {
    constexpr int XW = dense_t_tile * STRIDE + 2;
    __shared__ float xs[dense_ci_chunk][XW];
    __shared__ float wsm[dense_co_tile][dense_ci_chunk * 3 + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int t0 = blockIdx.x * dense_t_tile, o0 = blockIdx.y * dense_co_tile, b = blockIdx.z;
    float acc[4][4] = {};
    for (int ci0 = 0; ci0 < cin; ci0 += dense_ci_chunk) {
        for (int idx = threadIdx.x; idx < dense_ci_chunk * XW; idx += 256) {
            const int i = idx / XW, j = idx % XW;
            const int p = t0 * STRIDE - 1 + j, ci = ci0 + i;
            xs[i][j] = ci < cin && p >= 0 && p < length ? ld(x, (static_cast<std::size_t>(b) * cin + ci) * length + p) : 0.0f;
        }
        for (int idx = threadIdx.x; idx < dense_co_tile * dense_ci_chunk * 3; idx += 256) {
            const int o = idx / (dense_ci_chunk * 3), r = idx % (dense_ci_chunk * 3);
            const int ci = ci0 + r / 3;
            wsm[o][r] = o0 + o < cout && ci < cin ? ld(w, (static_cast<std::size_t>(o0 + o) * cin + ci) * 3 + r % 3) : 0.0f;
        }
        __syncthreads();
#pragma unroll 4
        for (int i = 0; i < dense_ci_chunk; ++i) {
#pragma unroll
            for (int k = 0; k < 3; ++k) {
                float wv[4], xv[4];
#pragma unroll
                for (int a = 0; a < 4; ++a) wv[a] = wsm[ty * 4 + a][i * 3 + k];
#pragma unroll
                for (int c = 0; c < 4; ++c) xv[c] = xs[i][(tx + 16 * c) * STRIDE + k];
#pragma unroll
                for (int a = 0; a < 4; ++a)
#pragma unroll
                    for (int c = 0; c < 4; ++c) acc[a][c] = fmaf(wv[a], xv[c], acc[a][c]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        const int o = o0 + ty * 4 + a;
        if (o >= cout) continue;
        const float bo = ld(bias, o);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const int t = t0 + tx + 16 * c;
            if (t < lout) st(y, (static_cast<std::size_t>(b) * cout + o) * lout + t, gelu_erf(acc[a][c] + bo));
        }
    }
}

// ------------------------------------------------------------------ depthwise
template <typename T>
__global__ void depthwise_conv_only(const T* x, const T* w, float* z, std::size_t rows, int channels, int length, int width) {
    const std::size_t n = rows * length;
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int t = static_cast<int>(idx % length);
        const std::size_t r = idx / length;
        const int c = static_cast<int>(r % channels);
        float acc = 0.0f;
        for (int k = 0; k < width; ++k) {
            const int p = t + k - (width - 1);
            if (p >= 0) acc = fmaf(ld(w, static_cast<std::size_t>(c) * width + k), ld(x, r * length + p), acc);
        }
        z[idx] = acc;
    }
}

// Any row length and alignment: 8 outputs per thread by scalar loads, the width - 1 earlier inputs
// reloaded (cached: the neighbouring thread loaded them). The path of rows off the 16-byte grid.
template <typename T, int W>
__global__ void depthwise_fused_scalar(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                       T* __restrict__ y, std::size_t rows, int channels, int length) {
    const int chunks = (length + 7) / 8;
    const std::size_t n = rows * chunks;
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t r = idx / chunks;
        const int t0 = static_cast<int>(idx % chunks) * 8;
        const int c = static_cast<int>(r % channels);
        const T* xr = x + r * length;
        float wv[W];
#pragma unroll
        for (int k = 0; k < W; ++k) wv[k] = ld(w, static_cast<std::size_t>(c) * W + k);
        const float bc = ld(bias, c);
        float v[8 + W - 1];
#pragma unroll
        for (int k = 0; k < W - 1; ++k) {
            const int p = t0 - (W - 1) + k;
            v[k] = p >= 0 ? ld(xr, p) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) v[W - 1 + j] = t0 + j < length ? ld(xr, t0 + j) : 0.0f;
        T* yr = y + r * length;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k < W; ++k) acc = fmaf(wv[k], v[j + k], acc);
            if (t0 + j < length) yr[t0 + j] = from_f32<T>(silu(acc + bc));
        }
    }
}

// Rows of a whole number of 16-byte vectors (E = 16 / sizeof(T) elements: 4 fp32, 8 bf16 / fp16),
// x and y 16-byte aligned: each thread turns whole vectors of x into vectors of y. The W - 1
// inputs before a vector are the previous vector's last ones: lane - 1's (a warp shuffle, no
// second read); lane 0 loads the previous vector's tail itself (the neighbouring warp reads it
// too, so it comes from L2, not DRAM); a row's first vector gets zeros. With SHFL false every
// thread loads the tail (no shuffles, one more load per thread). fp32: the accumulation order of
// the other kernels (w[0] x[t - W + 1] first, the bias added last) and the accurate SiLU, the
// scalar path's bit for bit. bf16 / fp16: the sum from the bias, weights and bias times log2(e),
// SiLU by silu_log2e, two outputs rounded by one conversion, every instruction counted (at 33 MB
// on an H100 the time of these types follows the instructions issued per output: NOTES.md).
// HINT bit 0: y stored with st.global.cs (evict first), bit 1: x loaded with
// ld.global.nc.L1::no_allocate, bit 2: with the L2::256B prefetch hint; the output's bits do not depend on SHFL, HINT or the grid's form.
template <typename T>
using dw_halo_t = std::conditional_t<sizeof(T) == 2, uint2, uint4>;  // 16-bit: the last 8 bytes (4 elements >= W - 1)

template <int HINT>
__device__ __forceinline__ uint4 dw_load(const uint4* p) {
    if constexpr ((HINT & 6) == 6) {
        uint4 v;
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
        return v;
    } else if constexpr ((HINT & 2) != 0) {
        uint4 v;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
        return v;
    } else if constexpr ((HINT & 4) != 0) {
        uint4 v;
        asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
        return v;
    } else {
        return __ldg(p);
    }
}
template <int HINT>
__device__ __forceinline__ uint2 dw_load(const uint2* p) {
    return __ldg(p);
}
template <int HINT>
__device__ __forceinline__ void dw_store(uint4* p, const uint4& v) {
    if constexpr ((HINT & 1) != 0) __stcs(p, v);
    else *p = v;
}

// The halo of vector j of row xr (zeros for j = 0) where this thread needs it: every thread
// without SHFL, lane 0 with it.
template <typename T, bool SHFL, int HINT>
__device__ __forceinline__ dw_halo_t<T> dw_halo(const uint4* xr, int j, bool lane0) {
    using halo_t = dw_halo_t<T>;
    halo_t prev{};
    if ((!SHFL || lane0) && j > 0) prev = dw_load<HINT>(reinterpret_cast<const halo_t*>(xr + j) - 1);
    return prev;
}

// Weights and bias of channel c in fp32; 16-bit outputs: times log2(e), for silu_log2e (one
// rounding each, a few fp32 ulps on z against the output's 2^-9 / 2^-12).
template <typename T, int W>
__device__ __forceinline__ void dw_weights(const T* __restrict__ w, const T* __restrict__ bias, int c, float (&wv)[W], float& bc) {
    constexpr bool half = sizeof(T) == 2;
#pragma unroll
    for (int k = 0; k < W; ++k) wv[k] = half ? ld(w, static_cast<std::size_t>(c) * W + k) * log2e_f : ld(w, static_cast<std::size_t>(c) * W + k);
    bc = half ? ld(bias, c) * log2e_f : ld(bias, c);
}

// The E outputs of one vector of x. Every lane of the warp calls it (full-mask shuffles with
// SHFL); `prev` holds the previous vector's tail where dw_halo loaded it. ACT false: the identity
// for SiLU (the probe's no-activation reference; not launched by the suite).
template <typename T, int W, bool SHFL, bool ACT = true>
__device__ __forceinline__ uint4 dw_outputs(const uint4& cur, const dw_halo_t<T>& prev, bool lane0, const float (&wv)[W], float bc) {
    constexpr int E = 16 / static_cast<int>(sizeof(T));
    constexpr bool half = sizeof(T) == 2;
    using halo_t = dw_halo_t<T>;
    constexpr int HE = static_cast<int>(sizeof(halo_t) / sizeof(T));
    static_assert(W - 1 <= HE, "the halo must lie in what dw_halo loads");
    // Element i of a vector of 16 or 8 bytes, in fp32.
    auto elem = [](const auto& vec, int i) {
        if constexpr (half) return elem_of<T>(reinterpret_cast<const std::uint32_t*>(&vec), i);
        else return reinterpret_cast<const float*>(&vec)[i];
    };
    float v[E + W - 1];
#pragma unroll
    for (int e = 0; e < E; ++e) v[W - 1 + e] = elem(cur, e);
#pragma unroll
    for (int h = 0; h < W - 1; ++h) {
        if constexpr (SHFL) {
            // Every lane shuffles (full mask); lane - 1's v[E + h] is its element E - (W - 1) + h.
            const float up = __shfl_up_sync(0xffffffffu, v[E + h], 1);
            v[h] = lane0 ? elem(prev, HE - (W - 1) + h) : up;
        } else {
            v[h] = elem(prev, HE - (W - 1) + h);
        }
    }
    uint4 res;
    if constexpr (half) {
        // From the bias: W FMAs per output (no multiply and add of its own), z log2(e) in s.
        std::uint32_t* o = reinterpret_cast<std::uint32_t*>(&res);
#pragma unroll
        for (int e0 = 0; e0 < E; e0 += 2) {
            float yv[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                float acc = bc;
#pragma unroll
                for (int q = 0; q < W; ++q) acc = fmaf(wv[q], v[e0 + e + q], acc);
                yv[e] = ACT ? silu_log2e(acc) : acc;
            }
            o[e0 / 2] = pack2<T>(yv[0], yv[1]);
        }
    } else {
        alignas(16) T out[E];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            float acc = 0.0f;
#pragma unroll
            for (int q = 0; q < W; ++q) acc = fmaf(wv[q], v[e + q], acc);
            out[e] = from_f32<T>(ACT ? silu(acc + bc) : acc + bc);
        }
        res = *reinterpret_cast<const uint4*>(out);
    }
    return res;
}

// One block per contiguous stretch of blockDim.x * VPT vectors of a row, thread tid the vectors
// span + tid + k blockDim.x (k < VPT), all VPT loads issued before any is used, the row's weights
// and bias once per block. GRID3 false: grid (rows, spans), the channel rows % channels; GRID3
// true: grid (spans, channels, batch), neighbouring blocks on neighbouring stretches (the copy
// kernel's order) and no division for the channel.
// __launch_bounds__(MAXT, 2048 / MAXT): 32 registers, 2048 threads per SM, no spills (left free,
// ptxas takes 35-39 for bf16 / fp16 at width 4: 6 blocks of 256 per SM); MAXT: 256, or the block
// where it is wider.
template <typename T, int W, int VPT, bool GRID3, int HINT, bool SHFL, bool ACT = true, int MAXT = 256>
__global__ void __launch_bounds__(MAXT, 2048 / MAXT) depthwise_fused_vec(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                                           T* __restrict__ y, int channels, int vecs_per_row) {
    static_assert(W - 1 <= 16 / static_cast<int>(sizeof(T)), "the halo must lie in one vector");
    const unsigned span = GRID3 ? blockIdx.x : blockIdx.y;
    const std::size_t r = GRID3 ? static_cast<std::size_t>(blockIdx.z) * channels + blockIdx.y : blockIdx.x;
    const uint4* xr = reinterpret_cast<const uint4*>(x) + r * static_cast<std::size_t>(vecs_per_row);
    uint4* yr = reinterpret_cast<uint4*>(y) + r * static_cast<std::size_t>(vecs_per_row);
    const int j0 = static_cast<int>(span * blockDim.x * VPT + threadIdx.x);
    const bool lane0 = (threadIdx.x & 31u) == 0;
    uint4 cur[VPT];
    dw_halo_t<T> prev[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int j = j0 + k * static_cast<int>(blockDim.x);
        cur[k] = make_uint4(0, 0, 0, 0);
        prev[k] = dw_halo_t<T>{};  // zeros: the causal padding before a row's first vector
        if (j < vecs_per_row) {
            cur[k] = dw_load<HINT>(xr + j);
            prev[k] = dw_halo<T, SHFL, HINT>(xr, j, lane0);
        }
    }
    const int c = GRID3 ? static_cast<int>(blockIdx.y) : static_cast<int>(blockIdx.x % static_cast<unsigned>(channels));
    float wv[W], bc;
    dw_weights<T, W>(w, bias, c, wv, bc);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int j = j0 + k * static_cast<int>(blockDim.x);
        const uint4 res = dw_outputs<T, W, SHFL, ACT>(cur[k], prev[k], lane0, wv, bc);
        if (j < vecs_per_row) dw_store<HINT>(yr + j, res);
    }
}

// Persistent form: grid = the resident blocks (at most one per tile), tiles = rows x spans of
// blockDim.x vectors (span fastest), block b on tiles b, b + gridDim.x, ..., the next tile's x,
// halo, weights and bias loaded before the current tile's arithmetic (loads in flight while the
// SM computes). (row, span, channel) advance by the launcher's constants: no division in the loop.
template <typename T, int W, int HINT, bool SHFL>
__global__ void __launch_bounds__(256, 8) depthwise_fused_persist(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                                               T* __restrict__ y, int channels, int vecs_per_row, int spans,
                                                               std::size_t tiles, std::size_t step_row, int step_span, int step_c) {
    std::size_t tile = blockIdx.x;
    if (tile >= tiles) return;
    int span = static_cast<int>(tile % static_cast<unsigned>(spans));
    std::size_t row = tile / static_cast<unsigned>(spans);
    int c = static_cast<int>(row % static_cast<unsigned>(channels));
    const bool lane0 = (threadIdx.x & 31u) == 0;
    struct stage {
        uint4 cur;
        dw_halo_t<T> prev;
        float wv[W], bc;
    };
    auto load = [&](std::size_t rw, int sp, int ch, stage& s) {
        const uint4* xr = reinterpret_cast<const uint4*>(x) + rw * static_cast<std::size_t>(vecs_per_row);
        const int j = sp * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x);
        s.cur = make_uint4(0, 0, 0, 0);
        s.prev = dw_halo_t<T>{};
        if (j < vecs_per_row) {
            s.cur = dw_load<HINT>(xr + j);
            s.prev = dw_halo<T, SHFL, HINT>(xr, j, lane0);
        }
        dw_weights<T, W>(w, bias, ch, s.wv, s.bc);
    };
    stage now;
    load(row, span, c, now);
    for (;;) {
        std::size_t row_n = row + step_row;
        int span_n = span + step_span, c_n = c + step_c;
        if (span_n >= spans) {
            span_n -= spans;
            ++row_n;
            ++c_n;
        }
        if (c_n >= channels) c_n -= channels;
        tile += gridDim.x;
        const bool more = tile < tiles;
        stage next;
        if (more) load(row_n, span_n, c_n, next);
        const int j = span * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x);
        const uint4 res = dw_outputs<T, W, SHFL>(now.cur, now.prev, lane0, now.wv, now.bc);
        if (j < vecs_per_row) dw_store<HINT>(reinterpret_cast<uint4*>(y) + row * static_cast<std::size_t>(vecs_per_row) + j, res);
        if (!more) break;
        row = row_n;
        span = span_n;
        c = c_n;
        now = next;
    }
}

// How the vector path runs for one element type and size: form 0 = depthwise_fused_vec on grid
// (rows, spans), 1 = on grid (spans, channels, batch), 2 = depthwise_fused_persist; threads per
// block (at most 1024, fewer for short rows; the persistent form at most 256); vectors per thread (forms 0 and 1); HINT; SHFL.
template <int FORM, int THREADS, int VPT, int HINT, bool SHFL>
struct dw_config {};

// Launches the vector path in configuration CFG (a dw_config) and returns true where it can take
// the shape: rows of whole 16-byte vectors from 16-byte aligned bases, the grid within its limits
// (form 1 falls back to form 0 where channels or batch exceed 65535 blocks in y / z); false, with
// nothing launched, otherwise.
template <typename T, int W, int FORM, int THREADS, int VPT, int HINT, bool SHFL, bool ACT = true>
bool launch_dw_vec(dw_config<FORM, THREADS, VPT, HINT, SHFL>, const T* x, const T* w, const T* bias, T* y, const conv1d_depthwise_shape& s,
                   cudaStream_t stream) {
    constexpr int E = 16 / static_cast<int>(sizeof(T));
    if (s.length % E != 0 || reinterpret_cast<std::uintptr_t>(x) % 16 != 0 || reinterpret_cast<std::uintptr_t>(y) % 16 != 0) return false;
    const int vecs_per_row = s.length / E;
    constexpr int vpt = FORM == 2 ? 1 : VPT;
    constexpr int maxt = THREADS > 256 ? THREADS : 256;
    static_assert(FORM != 2 || THREADS <= 256, "the persistent form's launch bound is 256 threads");
    const int threads = std::max(32, std::min(THREADS, ((vecs_per_row + vpt - 1) / vpt + 31) / 32 * 32));
    const long long spans = (static_cast<long long>(vecs_per_row) + static_cast<long long>(threads) * vpt - 1) / (static_cast<long long>(threads) * vpt);
    const std::size_t rows = static_cast<std::size_t>(s.batch) * s.channels;
    if constexpr (FORM == 2) {
        static_assert(ACT, "the persistent form has no identity variant");
        auto kernel = depthwise_fused_persist<T, W, HINT, SHFL>;
        int dev = 0, per_sm = 0;
        check_call(cudaGetDevice(&dev), "cudaGetDevice");
        check_call(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0), "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        const std::size_t tiles = rows * static_cast<std::size_t>(spans);
        const std::size_t grid = std::min<std::size_t>(tiles, static_cast<std::size_t>(std::max(per_sm, 1)) * cached_sm_count(dev));
        const std::size_t step_row = grid / static_cast<std::size_t>(spans);
        kernel<<<static_cast<unsigned>(grid), threads, 0, stream>>>(x, w, bias, y, s.channels, vecs_per_row, static_cast<int>(spans), tiles, step_row,
                                                                    static_cast<int>(grid % static_cast<std::size_t>(spans)),
                                                                    static_cast<int>(step_row % static_cast<std::size_t>(s.channels)));
        return true;
    } else {
        if constexpr (FORM == 1) {
            if (s.channels <= 65535 && s.batch <= 65535) {
                const dim3 grid(static_cast<unsigned>(spans), static_cast<unsigned>(s.channels), static_cast<unsigned>(s.batch));
                depthwise_fused_vec<T, W, VPT, true, HINT, SHFL, ACT, maxt><<<grid, threads, 0, stream>>>(x, w, bias, y, s.channels, vecs_per_row);
                return true;
            }
        }
        if (rows > 0x7fffffffu || spans > 65535) return false;
        const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(spans));
        depthwise_fused_vec<T, W, VPT, false, HINT, SHFL, ACT, maxt><<<grid, threads, 0, stream>>>(x, w, bias, y, s.channels, vecs_per_row);
        return true;
    }
}

// The configurations the launcher takes. fp32: grid (rows, spans), 256 threads, 2 vectors per
// thread. bf16 / fp16: one configuration up to dw16_small_max_vectors vectors of x, another above
// (H100 probe and suite, NOTES.md).
using dw_config_f32 = dw_config<0, 256, 2, 0, true>;
using dw_config_16_small = dw_config<0, 256, 1, 0, true>;  // PICK_SMALL
using dw_config_16_large = dw_config<0, 256, 1, 0, true>;  // PICK_LARGE
constexpr std::size_t dw16_small_max_vectors = std::size_t{1} << 21;

// ------------------------------------------------------------------ decode
template <typename T>
__global__ void decode_conv_only(const T* x, const T* state, const T* w, float* z, std::size_t rows, int channels, int width) {
    for (std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; r < rows;
         r += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int c = static_cast<int>(r % channels);
        const int hist = width - 1;
        float acc = 0.0f;
        for (int k = 0; k < hist; ++k) acc = fmaf(ld(w, static_cast<std::size_t>(c) * width + k), ld(state, r * hist + k), acc);
        z[r] = fmaf(ld(w, static_cast<std::size_t>(c) * width + hist), ld(x, r), acc);
    }
}

template <typename T>
__global__ void decode_shift(const T* x, const T* state, T* state_out, std::size_t rows, int width) {
    for (std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; r < rows;
         r += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int hist = width - 1;
        for (int k = 0; k + 1 < hist; ++k) state_out[r * hist + k] = state[r * hist + k + 1];
        state_out[r * hist + hist - 1] = x[r];
    }
}

template <typename T>
__global__ void decode_fused(const T* __restrict__ x, const T* __restrict__ state, const T* __restrict__ w,
                             const T* __restrict__ bias, T* __restrict__ y, T* __restrict__ state_out, std::size_t rows,
                             int channels, int width) {
    for (std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; r < rows;
         r += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int c = static_cast<int>(r % channels);
        const int hist = width - 1;
        const T xv = x[r];
        float acc = 0.0f;
        for (int k = 0; k < hist; ++k) {
            const T s = state[r * hist + k];
            acc = fmaf(ld(w, static_cast<std::size_t>(c) * width + k), to_f32(s), acc);
            if (k > 0) state_out[r * hist + k - 1] = s;
        }
        state_out[r * hist + hist - 1] = xv;
        acc = fmaf(ld(w, static_cast<std::size_t>(c) * width + hist), to_f32(xv), acc);
        st(y, r, silu(acc + ld(bias, c)));
    }
}

void check_dense(const conv1d_dense_shape& s) {
    if (s.batch < 1 || s.cin < 1 || s.cout < 1 || s.length < 1) throw std::invalid_argument("conv1d dense: sizes must be positive");
    if (s.stride != 1 && s.stride != 2) throw std::invalid_argument("conv1d dense: stride must be 1 or 2");
    if (s.batch > 65535) throw std::invalid_argument("conv1d dense: batch above 65535");
}
void check_depthwise(const conv1d_depthwise_shape& s) {
    if (s.batch < 1 || s.channels < 1 || s.length < 1) throw std::invalid_argument("conv1d depthwise: sizes must be positive");
    if (s.width < 2 || s.width > 4) throw std::invalid_argument("conv1d depthwise: width must be 2, 3 or 4");
}
std::size_t rows_of(const conv1d_depthwise_shape& s) { return static_cast<std::size_t>(s.batch) * s.channels; }

// The dense naive pipeline (naive, and naive_tf32 with Op = tf32_operand): convolution to the fp32
// workspace z, bias added in place, GELU written; `what` names it in launch errors.
template <typename T, typename Op>
void launch_dense_naive(const T* x, const T* w, const T* bias, T* y, void* workspace, const conv1d_dense_shape& s,
                        cudaStream_t stream, const char* what) {
    check_dense(s);
    if (workspace == nullptr) throw std::invalid_argument(std::string(what) + ": no workspace");
    const int lout = s.out_length();
    const std::size_t n = static_cast<std::size_t>(s.batch) * s.cout * lout;
    float* z = static_cast<float*>(workspace);
    auto check = [&](const char* stage) {
        if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) check_call(e, (std::string(what) + ": " + stage).c_str());
    };
    dense_conv_only<T, Op><<<grid_for(n, 256), 256, 0, stream>>>(x, w, z, s.batch, s.cin, s.cout, s.length, s.stride, lout);
    check("convolution");
    add_channel_bias<T><<<grid_for(n, 256), 256, 0, stream>>>(z, bias, n, s.cout, lout);
    check("bias");
    activate<T, true><<<grid_for(n, 256), 256, 0, stream>>>(z, y, n);
    check("GELU");
}

}  // namespace

std::size_t conv1d_dense_naive_workspace_bytes(const conv1d_dense_shape& s) {
    check_dense(s);
    return static_cast<std::size_t>(s.batch) * s.cout * s.out_length() * sizeof(float);
}

void launch_conv1d_dense_naive(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                               const conv1d_dense_shape& s, cudaStream_t stream) {
    dispatch_elem(t, [&](auto tag) {
        using T = decltype(tag);
        launch_dense_naive<T, operand_as_is>(static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias),
                                             static_cast<T*>(y), workspace, s, stream, "conv1d dense naive");
    });
}

std::size_t conv1d_dense_naive_tf32_workspace_bytes(const conv1d_dense_shape& s) { return conv1d_dense_naive_workspace_bytes(s); }

void launch_conv1d_dense_naive_tf32(const float* x, const float* w, const float* bias, float* y, void* workspace,
                                    const conv1d_dense_shape& s, cudaStream_t stream) {
    launch_dense_naive<float, tf32_operand>(x, w, bias, y, workspace, s, stream, "conv1d dense naive TF32");
}

void launch_conv1d_dense_direct(elem t, const void* x, const void* w, const void* bias, void* y, const conv1d_dense_shape& s,
                                cudaStream_t stream) {
    check_dense(s);
    const int lout = s.out_length();
    const dim3 grid(static_cast<unsigned>((lout + dense_t_tile - 1) / dense_t_tile),
                    static_cast<unsigned>((s.cout + dense_co_tile - 1) / dense_co_tile), static_cast<unsigned>(s.batch));
    dispatch_elem(t, [&](auto tag) {
        using T = decltype(tag);
        if (s.stride == 1) {
            dense_direct<T, 1><<<grid, 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias),
                                                          static_cast<T*>(y), s.cin, s.cout, s.length, lout);
        } else {
            dense_direct<T, 2><<<grid, 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias),
                                                          static_cast<T*>(y), s.cin, s.cout, s.length, lout);
        }
    });
    check_launch("conv1d dense direct");
}

void launch_conv1d_bias_gelu(elem t, const void* z, bool z_f32, const void* bias, void* y, int batch, int cout, int lout,
                             cudaStream_t stream) {
    if (batch < 1 || cout < 1 || lout < 1) throw std::invalid_argument("conv1d bias + GELU: sizes must be positive");
    const std::size_t n = static_cast<std::size_t>(batch) * cout * lout;
    const unsigned blocks = std::min(grid_for(n, 256), 65535u * 8);
    dispatch_elem(t, [&](auto tag) {
        using T = decltype(tag);
        if (z_f32) {
            bias_gelu<T, float><<<blocks, 256, 0, stream>>>(static_cast<const float*>(z), static_cast<const T*>(bias), static_cast<T*>(y), n,
                                                            cout, lout);
        } else {
            bias_gelu<T, T><<<blocks, 256, 0, stream>>>(static_cast<const T*>(z), static_cast<const T*>(bias), static_cast<T*>(y), n, cout,
                                                        lout);
        }
    });
    check_launch("conv1d bias + GELU");
}

std::size_t conv1d_depthwise_naive_workspace_bytes(const conv1d_depthwise_shape& s) {
    check_depthwise(s);
    return rows_of(s) * s.length * sizeof(float);
}

void launch_conv1d_depthwise_naive(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                                   const conv1d_depthwise_shape& s, cudaStream_t stream) {
    check_depthwise(s);
    if (workspace == nullptr) throw std::invalid_argument("conv1d depthwise naive: no workspace");
    const std::size_t n = rows_of(s) * s.length;
    float* z = static_cast<float*>(workspace);
    dispatch_elem(t, [&](auto tag) {
        using T = decltype(tag);
        depthwise_conv_only<T><<<grid_for(n, 256), 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(w), z, rows_of(s),
                                                                      s.channels, s.length, s.width);
        check_launch("conv1d depthwise naive: convolution");
        add_channel_bias<T><<<grid_for(n, 256), 256, 0, stream>>>(z, static_cast<const T*>(bias), n, s.channels, s.length);
        check_launch("conv1d depthwise naive: bias");
        activate<T, false><<<grid_for(n, 256), 256, 0, stream>>>(z, static_cast<T*>(y), n);
        check_launch("conv1d depthwise naive: SiLU");
    });
}

void launch_conv1d_depthwise_fused(elem t, const void* x, const void* w, const void* bias, void* y, const conv1d_depthwise_shape& s,
                                   cudaStream_t stream) {
    check_depthwise(s);
    dispatch_elem(t, [&](auto tag) {
        using T = decltype(tag);
        constexpr int E = 16 / static_cast<int>(sizeof(T));
        const std::size_t vectors = rows_of(s) * static_cast<std::size_t>(s.length / E);
        auto go = [&](auto width_tag) {
            constexpr int W = decltype(width_tag)::value;
            const T* xt = static_cast<const T*>(x);
            const T* wt = static_cast<const T*>(w);
            const T* bt = static_cast<const T*>(bias);
            T* yt = static_cast<T*>(y);
            // The vector path where it takes the shape, else the scalar path.
            bool done = false;
            if constexpr (sizeof(T) == 2) {
                if (vectors <= dw16_small_max_vectors) done = launch_dw_vec<T, W>(dw_config_16_small{}, xt, wt, bt, yt, s, stream);
                else done = launch_dw_vec<T, W>(dw_config_16_large{}, xt, wt, bt, yt, s, stream);
            } else {
                done = launch_dw_vec<T, W>(dw_config_f32{}, xt, wt, bt, yt, s, stream);
            }
            if (!done) {
                const std::size_t n = rows_of(s) * static_cast<std::size_t>((s.length + 7) / 8);
                depthwise_fused_scalar<T, W><<<std::min(grid_for(n, 256), 65535u * 32u), 256, 0, stream>>>(xt, wt, bt, yt, rows_of(s), s.channels,
                                                                                                          s.length);
            }
        };
        switch (s.width) {
            case 2: go(std::integral_constant<int, 2>{}); break;
            case 3: go(std::integral_constant<int, 3>{}); break;
            default: go(std::integral_constant<int, 4>{}); break;
        }
    });
    check_launch("conv1d depthwise fused");
}

std::size_t conv1d_decode_naive_workspace_bytes(const conv1d_depthwise_shape& s) {
    check_depthwise(s);
    return rows_of(s) * sizeof(float);
}

void launch_conv1d_decode_naive(elem t, const void* x, const void* state, const void* w, const void* bias, void* y, void* state_out,
                                void* workspace, const conv1d_depthwise_shape& s, cudaStream_t stream) {
    check_depthwise(s);
    if (workspace == nullptr) throw std::invalid_argument("conv1d decode naive: no workspace");
    const std::size_t rows = rows_of(s);
    float* z = static_cast<float*>(workspace);
    dispatch_elem(t, [&](auto tag) {
        using T = decltype(tag);
        decode_conv_only<T><<<grid_for(rows, 256), 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(state),
                                                                      static_cast<const T*>(w), z, rows, s.channels, s.width);
        check_launch("conv1d decode naive: convolution");
        add_channel_bias<T><<<grid_for(rows, 256), 256, 0, stream>>>(z, static_cast<const T*>(bias), rows, s.channels, 1);
        check_launch("conv1d decode naive: bias");
        activate<T, false><<<grid_for(rows, 256), 256, 0, stream>>>(z, static_cast<T*>(y), rows);
        check_launch("conv1d decode naive: SiLU");
        decode_shift<T><<<grid_for(rows, 256), 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(state),
                                                                  static_cast<T*>(state_out), rows, s.width);
        check_launch("conv1d decode naive: state shift");
    });
}

void launch_conv1d_decode_fused(elem t, const void* x, const void* state, const void* w, const void* bias, void* y, void* state_out,
                                const conv1d_depthwise_shape& s, cudaStream_t stream) {
    check_depthwise(s);
    const std::size_t rows = rows_of(s);
    dispatch_elem(t, [&](auto tag) {
        using T = decltype(tag);
        decode_fused<T><<<grid_for(rows, 256), 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(state),
                                                                  static_cast<const T*>(w), static_cast<const T*>(bias), static_cast<T*>(y),
                                                                  static_cast<T*>(state_out), rows, s.channels, s.width);
    });
    check_launch("conv1d decode fused");
}

}  // namespace fusebench::kernels
