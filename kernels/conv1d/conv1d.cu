// conv1d kernels: dense (Whisper encoder) and depthwise causal (Mamba), naive and fused.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/fast_math.cuh"
#include "kernels/common/gelu.cuh"
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
// The peer's epilogue: z (fp32 or the storage type) + bias, GELU (the fused kernels' form for T:
// kernels/common/gelu.cuh), rounded once to T.
template <typename T, typename Z>
__global__ void bias_gelu(const Z* __restrict__ z, const T* __restrict__ bias, T* __restrict__ y, std::size_t n, int channels, int length) {
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < n;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        st(y, idx, gelu_erf<T>(ld(z, idx) + ld(bias, (idx / length) % channels)));
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
            if (t < lout) st(y, (static_cast<std::size_t>(b) * cout + o) * lout + t, gelu_erf<T>(acc[a][c] + bo));
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
// too, so it comes from L2, not DRAM); a row's first vector gets zeros. fp32: the accumulation
// order of the other kernels (w[0] x[t - W + 1] first, the bias added last) and the accurate SiLU,
// the scalar path's bit for bit. bf16 / fp16: the sum from the bias, weights and bias times
// log2(e), SiLU by silu_log2e, two outputs rounded by one conversion, every instruction counted
// (at 33 MB on an H100 the time of these types follows the instructions issued per output:
// NOTES.md). The output's bits depend on none of the launch choices below.
template <typename T>
using dw_halo_t = std::conditional_t<sizeof(T) == 2, uint2, uint4>;  // 16-bit: the last 8 bytes (4 elements >= W - 1)

// Weights and bias of channel c in fp32; 16-bit outputs: times log2(e), for silu_log2e (one
// rounding each, a few fp32 ulps on z against the output's 2^-9 / 2^-12).
template <typename T, int W>
__device__ __forceinline__ void dw_weights(const T* __restrict__ w, const T* __restrict__ bias, int c, float (&wv)[W], float& bc) {
    constexpr bool half = sizeof(T) == 2;
#pragma unroll
    for (int k = 0; k < W; ++k) wv[k] = half ? ld(w, static_cast<std::size_t>(c) * W + k) * log2e_f : ld(w, static_cast<std::size_t>(c) * W + k);
    bc = half ? ld(bias, c) * log2e_f : ld(bias, c);
}

// The E outputs of one vector of x. Every lane of the warp calls it (full-mask shuffles); lane 0's
// `prev` holds the previous vector's tail (zeros at a row's start). ACT false: the identity for
// SiLU (a probe's no-activation reference; the suite's launcher never takes it).
template <typename T, int W, bool ACT = true>
__device__ __forceinline__ uint4 dw_outputs(const uint4& cur, const dw_halo_t<T>& prev, bool lane0, const float (&wv)[W], float bc) {
    constexpr int E = 16 / static_cast<int>(sizeof(T));
    constexpr bool half = sizeof(T) == 2;
    constexpr int HE = static_cast<int>(sizeof(dw_halo_t<T>) / sizeof(T));
    static_assert(W - 1 <= HE, "the halo must lie in what lane 0 loads");
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
        // Every lane shuffles (full mask); lane - 1's v[E + h] is its element E - (W - 1) + h.
        const float up = __shfl_up_sync(0xffffffffu, v[E + h], 1);
        v[h] = lane0 ? elem(prev, HE - (W - 1) + h) : up;
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

// The grid of depthwise_fused_vec. rows_spans: (rows, spans), rows fastest, the channel
// rows % channels (an integer division per block); spans_channels_batch: (spans, channels,
// batch), neighbouring blocks on neighbouring stretches of a row (the copy kernel's order), no
// division. H100 probe (NOTES.md), bf16 / fp16 at width 4: with 1 vector per thread rows_spans is
// 1-6% faster at 33.6-268 MB; with 2, spans_channels_batch is 1-6% faster (5-6% at 537 MB, where
// it reads each row's stretches in order). (channels, spans, batch), rows_spans's block order at
// batch 1 without the division, measured 0-7% slower than rows_spans at 1 vector per thread, for
// a reason the SASS instruction counts (160 against 176 per thread) do not show; rows_spans with
// the division skipped by a block-uniform branch at batch 1 measured 1.6-2.1% faster (NOTES.md).
enum class dw_grid { rows_spans, spans_channels_batch };

// One block per contiguous stretch of blockDim.x * VPT vectors of a row, thread tid the vectors
// span + tid + k blockDim.x (k < VPT), all VPT loads issued before any is used, the row's weights
// and bias once per block. __launch_bounds__(256, 8): 32 registers, 8 blocks of 256 per SM, no
// spills (left free, ptxas takes 35-39 for bf16 / fp16 at width 4: 6 blocks per SM).
// WHOLE (the launcher's pick where every block's vectors lie inside its row and the tensor holds
// fewer than 2^32 vectors): no bounds checks and 32-bit vector indices. With the channel taken
// without a division where the row is the channel (batch 1), this cuts the instructions a thread
// issues at b1 c2048 L4096 bf16 w4 from 163 to 134 (SASS, NOPs excluded; the division's 17 are
// branched over) and took 0.3-0.4 us (2.6-3.5 %) off that case in the H100 probe
// (kernels/conv1d/probes/dw_probe.cu, variant DEA; NOTES.md "Depthwise target (b): fewer
// instructions per thread"): there the time follows the instructions issued, not the bytes.
template <typename T, int W, int VPT, dw_grid G, bool WHOLE, bool ACT = true>
__global__ void __launch_bounds__(256, 8) depthwise_fused_vec(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                                           T* __restrict__ y, int channels, int vecs_per_row) {
    static_assert(W - 1 <= 16 / static_cast<int>(sizeof(T)), "the halo must lie in one vector");
    unsigned span, c;
    std::size_t r;
    if constexpr (G == dw_grid::rows_spans) {
        span = blockIdx.y;
        r = blockIdx.x;
        // A block-uniform branch: batch 1's rows are the channels (no division).
        c = blockIdx.x < static_cast<unsigned>(channels) ? blockIdx.x : blockIdx.x % static_cast<unsigned>(channels);
    } else {
        span = blockIdx.x;
        c = blockIdx.y;
        r = static_cast<std::size_t>(blockIdx.z) * channels + c;
    }
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    uint4* yv = reinterpret_cast<uint4*>(y);
    // The index of vector j of row r.
    auto at = [&](int j) -> std::size_t {
        if constexpr (WHOLE) return static_cast<unsigned>(r) * static_cast<unsigned>(vecs_per_row) + static_cast<unsigned>(j);
        else return r * static_cast<std::size_t>(vecs_per_row) + static_cast<std::size_t>(j);
    };
    const int j0 = static_cast<int>(span * blockDim.x * VPT + threadIdx.x);
    const bool lane0 = (threadIdx.x & 31u) == 0;
    uint4 cur[VPT];
    dw_halo_t<T> prev[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int j = j0 + k * static_cast<int>(blockDim.x);
        cur[k] = make_uint4(0, 0, 0, 0);
        prev[k] = dw_halo_t<T>{};  // zeros: the causal padding before a row's first vector
        if (WHOLE || j < vecs_per_row) {
            const std::size_t i = at(j);
            cur[k] = __ldg(xv + i);
            if (lane0 && j > 0) prev[k] = __ldg(reinterpret_cast<const dw_halo_t<T>*>(xv + i) - 1);
        }
    }
    float wv[W], bc;
    dw_weights<T, W>(w, bias, static_cast<int>(c), wv, bc);
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int j = j0 + k * static_cast<int>(blockDim.x);
        const uint4 res = dw_outputs<T, W, ACT>(cur[k], prev[k], lane0, wv, bc);
        if (WHOLE || j < vecs_per_row) yv[at(j)] = res;
    }
}

// A launch configuration of depthwise_fused_vec: grid order, threads per block (at most 256,
// fewer for short rows), vectors per thread.
template <dw_grid G, int THREADS, int VPT>
struct dw_config {};

// Launches depthwise_fused_vec in configuration CFG and returns true where it can take the shape:
// rows of whole 16-byte vectors from 16-byte aligned bases, the grid within its limits
// (spans_channels_batch falls back to rows_spans where channels or batch exceed 65535); false,
// with nothing launched, otherwise.
template <typename T, int W, dw_grid G, int THREADS, int VPT, bool ACT = true>
bool launch_dw_vec(dw_config<G, THREADS, VPT>, const T* x, const T* w, const T* bias, T* y, const conv1d_depthwise_shape& s,
                   cudaStream_t stream) {
    static_assert(THREADS % 32 == 0 && THREADS <= 256, "whole warps, within the launch bound");
    constexpr int E = 16 / static_cast<int>(sizeof(T));
    if (s.length % E != 0 || reinterpret_cast<std::uintptr_t>(x) % 16 != 0 || reinterpret_cast<std::uintptr_t>(y) % 16 != 0) return false;
    const int vecs_per_row = s.length / E;
    const int threads = std::max(32, std::min(THREADS, ((vecs_per_row + VPT - 1) / VPT + 31) / 32 * 32));
    const long long spans = (static_cast<long long>(vecs_per_row) + static_cast<long long>(threads) * VPT - 1) / (static_cast<long long>(threads) * VPT);
    const std::size_t rows = static_cast<std::size_t>(s.batch) * s.channels;
    // WHOLE: every block's VPT x threads vectors inside its row, fewer than 2^32 vectors in all.
    const bool whole = vecs_per_row % (threads * VPT) == 0 && rows * static_cast<std::size_t>(vecs_per_row) <= 0xffffffffu;
    auto go = [&](auto whole_tag, auto grid_tag, dim3 grid) {
        constexpr bool WH = decltype(whole_tag)::value;
        constexpr dw_grid GG = decltype(grid_tag)::value;
        depthwise_fused_vec<T, W, VPT, GG, WH, ACT><<<grid, threads, 0, stream>>>(x, w, bias, y, s.channels, vecs_per_row);
    };
    auto launch = [&](auto grid_tag, dim3 grid) {
        if (whole) go(std::true_type{}, grid_tag, grid);
        else go(std::false_type{}, grid_tag, grid);
    };
    if constexpr (G == dw_grid::spans_channels_batch) {
        if (s.channels <= 65535 && s.batch <= 65535) {
            launch(std::integral_constant<dw_grid, G>{},
                   dim3(static_cast<unsigned>(spans), static_cast<unsigned>(s.channels), static_cast<unsigned>(s.batch)));
            return true;
        }
    }
    if (rows > 0x7fffffffu || spans > 65535) return false;
    launch(std::integral_constant<dw_grid, dw_grid::rows_spans>{}, dim3(static_cast<unsigned>(rows), static_cast<unsigned>(spans)));
    return true;
}

// The configurations the launcher takes (H100 probe and suite, NOTES.md "Depthwise: grid order
// and vectors per thread by size"). fp32: spans_channels_batch, 256 threads, 2 vectors per thread
// (3.5-6% faster than rows_spans at 67-268 MB in the H100 probe, NOTES.md "Depthwise target (b) at
// b1 c2048 L4096: L2 bulk prefetch, block order"). bf16 /
// fp16 up to dw16_small_max_vectors vectors of x (1M: b1 c2048 L4096, 33.6 MB): rows_spans, 1
// vector per thread (there every other form measured was as fast or slower; spans_channels_batch
// with 2 vectors 1-3% slower); above: spans_channels_batch, 2 vectors per thread (2-5% faster than
// the small configuration at 67-537 MB).
using dw_config_f32 = dw_config<dw_grid::spans_channels_batch, 256, 2>;
using dw_config_16_small = dw_config<dw_grid::rows_spans, 256, 1>;
using dw_config_16_large = dw_config<dw_grid::spans_channels_batch, 256, 2>;
constexpr std::size_t dw16_small_max_vectors = std::size_t{1} << 20;

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
