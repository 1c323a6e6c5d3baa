// Device helpers of the Hopper attention kernel body (kernels/attention/hopper_fwd.cuh: variants
// wgmma_tma and wgmma_fp8qk): the online-softmax step and its register helpers, plus the sm_90a
// primitives of kernels/common/sm90.cuh. Moved out of hopper.cu unchanged (every function is force-inlined, so
// wgmma_tma compiles to the same code).
// sm_90a only: include where FUSEBENCH_HOPPER_DEVICE_CODE is defined (see hopper.cu).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/sm90.cuh"

#include <cstdint>
#include <type_traits>

namespace fusebench::kernels::hopper {

using sm90::smem_u32;
using sm90::fence_proxy_async;
using sm90::wgmma_fence;
using sm90::wgmma_commit;
using sm90::wgmma_wait;
using sm90::reg_fence;
using sm90::make_desc;
using sm90::mbar_init;
using sm90::mbar_expect_tx;
using sm90::mbar_arrive;
using sm90::mbar_wait;
using sm90::tma_load_3d;
using sm90::wgmma_fp8_op;


__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

template <typename T>
__device__ __forceinline__ std::uint32_t pack2(float a, float b) {
    if constexpr (std::is_same_v<T, __half>) {
        __half2 h = __floats2half2_rn(a, b);
        return *reinterpret_cast<std::uint32_t*>(&h);
    } else {
        __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        return *reinterpret_cast<std::uint32_t*>(&h);
    }
}

// Scores of one tile: mask, online-softmax update of (m_run, l_run), P packed as the A operand of
// m64nDk16 (k-step kk = keys 16kk..16kk+15 = accumulator column blocks 2kk, 2kk+1); alpha = the
// factor the O accumulator must be multiplied by. row_a: this thread's first row in the launch's
// rows; with GQA packing (causal_rows < the launch's rows) launch row r is query row r % causal_rows.
template <typename T, int BN>
__device__ __forceinline__ void softmax_tile(float (&s)[BN / 2], std::uint32_t (&pa)[BN / 16][4], float (&m_run)[2],
                                             float (&l_run)[2], float (&alpha)[2], bool need_mask, int n0, int row_a,
                                             int col_q, int seq_kv, int causal, int off, bool packed, int causal_rows,
                                             float sl2) {
    if (need_mask) {
        int lim[2];  // last key each of the thread's two rows sees
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row_a + h * 8;
            const int qrow = packed ? row % causal_rows : row;
            lim[h] = causal ? min(seq_kv - 1, qrow + off) : seq_kv - 1;
        }
#pragma unroll
        for (int nb = 0; nb < BN / 8; ++nb) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = n0 + nb * 8 + col_q + (e & 1);
                if (col > lim[e >> 1]) s[nb * 4 + e] = -INFINITY;
            }
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float mx = m_run[h];
#pragma unroll
        for (int nb = 0; nb < BN / 8; ++nb) mx = fmaxf(mx, fmaxf(s[nb * 4 + 2 * h], s[nb * 4 + 2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_use = mx == -INFINITY ? 0.f : mx;  // a row with every key masked so far
        alpha[h] = ex2((m_run[h] - m_use) * sl2);
        m_run[h] = mx;
        const float neg = -m_use * sl2;
        float sum = 0.f;
#pragma unroll
        for (int nb = 0; nb < BN / 8; ++nb) {
            const float p0 = ex2(fmaf(s[nb * 4 + 2 * h], sl2, neg));
            const float p1 = ex2(fmaf(s[nb * 4 + 2 * h + 1], sl2, neg));
            s[nb * 4 + 2 * h] = p0;
            s[nb * 4 + 2 * h + 1] = p1;
            sum += p0 + p1;
        }
        l_run[h] = l_run[h] * alpha[h] + sum;
    }
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
        pa[kk][0] = pack2<T>(s[(2 * kk) * 4 + 0], s[(2 * kk) * 4 + 1]);
        pa[kk][1] = pack2<T>(s[(2 * kk) * 4 + 2], s[(2 * kk) * 4 + 3]);
        pa[kk][2] = pack2<T>(s[(2 * kk + 1) * 4 + 0], s[(2 * kk + 1) * 4 + 1]);
        pa[kk][3] = pack2<T>(s[(2 * kk + 1) * 4 + 2], s[(2 * kk + 1) * 4 + 3]);
    }
}

template <int N>
__device__ __forceinline__ void reg_fence_u(std::uint32_t (&a)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int k = 0; k < 4; ++k) asm volatile("" : "+r"(a[i][k])::"memory");
}

template <int D, int BN>
__device__ __forceinline__ void scale_rows(float (&o)[D / 2], const float (&alpha)[2]) {
#pragma unroll
    for (int nb = 0; nb < D / 8; ++nb) {
        o[nb * 4 + 0] *= alpha[0];
        o[nb * 4 + 1] *= alpha[0];
        o[nb * 4 + 2] *= alpha[1];
        o[nb * 4 + 3] *= alpha[1];
    }
}


}  // namespace fusebench::kernels::hopper
