// Device helpers shared by the Hopper attention kernels (kernels/attention/hopper.cu, variant
// wgmma_tma, and kernels/attention/hopper_fp8.cu, variant wgmma_fp8qk): shared-memory addresses,
// wgmma fences and descriptors, the online-softmax step, mbarriers and TMA loads. Moved out of
// hopper.cu unchanged (every function is force-inlined, so wgmma_tma compiles to the same code).
// sm_90a only: include where FUSEBENCH_HOPPER_DEVICE_CODE is defined (see hopper.cu).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace fusebench::kernels::hopper {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Orders the mbarrier initialization before the copy engine's first use of the barriers.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Ties accumulator registers to the asm that precedes / follows, so the compiler neither reads
// them before wgmma_wait nor moves writes past the next wgmma.
template <int N>
__device__ __forceinline__ void reg_fence(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride byte
// offsets (all in 16-byte units); the tile base must be 1024-byte aligned (base offset 0).
__device__ __forceinline__ std::uint64_t make_desc(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
    return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
           (static_cast<std::uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

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

__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
    std::uint32_t done = 0;
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2, std::uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

}  // namespace fusebench::kernels::hopper
