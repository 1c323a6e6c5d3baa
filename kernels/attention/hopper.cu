// Hopper attention forward (variant `wgmma_tma`, issue 18's first kernel). Versus `wmma` (mma.sync
// 16 x 8 x 16 per warp, cp.async loads by the computing warps, a block-wide barrier per KV tile):
// - wgmma: one instruction covers 64 x N x 16 for a warpgroup and reads its operands straight from
//   128-byte-swizzled shared memory (Q K^T), or P from registers and V through a transposing
//   descriptor (P V): no ldmatrix, far fewer issued instructions per FLOP;
// - TMA: one producer thread loads Q once and K/V tiles into a 2-stage ring (full/empty mbarriers
//   per stage, separate for K and V), so the two consumer warpgroups never wait on each other;
// - setmaxnreg: the producer warpgroup gives its registers to the consumers (40 / 232 per thread);
// - the softmax of KV tile j runs while P V of tile j - 1 occupies the tensor cores.
// H100, causal bf16 B=1 H=32 D=128, scratch bench (warm L2, CUDA events, medians): 220 / 368 / 526 /
// 625 / 652 TFLOP/s at S = 1k / 2k / 4k / 8k / 16k, against wmma's 194 / 258 / 305 / 280 / 287 in
// the same run.
//
// wgmma and setmaxnreg exist only for the architecture-specific sm_90a target: CMakeLists.txt adds
// -gencode arch=compute_90a,code=sm_90a to this file, and the project's plain sm_90 pass compiles
// the kernel body away. Which of the two machine codes the loader picks is checked at run time by a
// probe kernel (attention_wgmma_tma_unsupported), never assumed.
#include "kernels/attention/hopper.hpp"
#include "kernels/attention/flash_mma.cuh"
#include "kernels/common/launch_check.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FUSEBENCH_HOPPER_DEVICE_CODE 1
#include "kernels/attention/hopper_wgmma.cuh"
#endif

namespace fusebench::kernels {
namespace hopper {
namespace {

// The kernel takes flash::params (flash_mma.cuh), the wmma design's: the fields both kernels read
// (pointers, heads, group, lengths, causal, scale, q_blocks); the split-KV and packing ones stay at
// their defaults here.
using fa_params = flash::params;

// Tiles: Q [128 rows][D] and K/V [128 keys][D] as D / 64 column blocks of 128-byte rows with the
// 128-byte swizzle: what one TMA box (64 x 128, SWIZZLE_128B) writes and what a wgmma descriptor
// names directly, K-major for Q and K (SBO 1024 = 8 rows), MN-major for V in P V (LBO = one column
// block, SBO = 8 keys). Rows past seq_q / seq_kv arrive as zeros (3-D tensor maps) and are masked,
// so ragged tails need no separate path.
template <int D, int STAGES>
struct tma_config {
    static constexpr int bm = 128, bn = 128;
    static constexpr int threads = 384;  // warpgroups 0, 1: consumers; warpgroup 2: producer (one thread issues)
    static constexpr int q_bytes = bm * D * 2;
    static constexpr int kv_bytes = bn * D * 2;
    static constexpr int bar_offset = q_bytes + 2 * STAGES * kv_bytes;
    // barriers: full_q, full_k[S], full_v[S], empty_k[S], empty_v[S]
    static constexpr int smem_bytes = bar_offset + 8 * (1 + 4 * STAGES) + 1024;
};

#if defined(FUSEBENCH_HOPPER_DEVICE_CODE)

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
// factor the O accumulator must be multiplied by.
template <typename T, int BN>
__device__ __forceinline__ void softmax_tile(float (&s)[BN / 2], std::uint32_t (&pa)[BN / 16][4], float (&m_run)[2],
                                             float (&l_run)[2], float (&alpha)[2], bool need_mask, int n0, int row_a,
                                             int col_q, int seq_kv, int causal, int off, float sl2) {
    if (need_mask) {
#pragma unroll
        for (int nb = 0; nb < BN / 8; ++nb) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = n0 + nb * 8 + col_q + (e & 1);
                const int row = row_a + (e >> 1) * 8;
                const bool ok = col < seq_kv && (!causal || col <= row + off);
                if (!ok) s[nb * 4 + e] = -INFINITY;
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
#endif  // FUSEBENCH_HOPPER_DEVICE_CODE

template <typename T, int D, int STAGES>
__global__ void __launch_bounds__(384, 1)
    attention_wgmma_tma_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                               const __grid_constant__ CUtensorMap tm_v, const fa_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using cfg = tma_config<D, STAGES>;
    constexpr int BM = cfg::bm, BN = cfg::bn;
    constexpr bool F16 = std::is_same_v<T, __half>;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const std::uint32_t sq_addr = base;
    const std::uint32_t sk_addr = base + cfg::q_bytes;
    const std::uint32_t sv_addr = base + cfg::q_bytes + STAGES * cfg::kv_bytes;
    const std::uint32_t bar = base + cfg::bar_offset;
    const std::uint32_t full_q = bar;
    auto full_k = [&](int s) { return bar + 8 * (1 + s); };
    auto full_v = [&](int s) { return bar + 8 * (1 + STAGES + s); };
    auto empty_k = [&](int s) { return bar + 8 * (1 + 2 * STAGES + s); };
    auto empty_v = [&](int s) { return bar + 8 * (1 + 3 * STAGES + s); };

    const int tid = threadIdx.x;
    const int m_blk = p.q_blocks - 1 - static_cast<int>(blockIdx.x);
    const int head = blockIdx.y, b = blockIdx.z;
    const int kv_head = head / p.group;
    const int heads_kv = p.heads_q / p.group;
    const int q0 = m_blk * BM;
    const int off = p.seq_kv - p.seq_q;
    const int q_rows_valid = min(BM, p.seq_q - q0);
    int kv_end = p.seq_kv;
    if (p.causal) kv_end = min(p.seq_kv, q0 + q_rows_valid + off);
    const int n_tiles = (kv_end + BN - 1) / BN;

    if (tid == 0) {
        mbar_init(full_q, 1);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_k(s), 1);
            mbar_init(full_v(s), 1);
            mbar_init(empty_k(s), 256);
            mbar_init(empty_v(s), 256);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        fence_proxy_async();
    }
    __syncthreads();

    if (tid >= 256) {
        // Producer: one thread issues every load; rows past the tensor's end arrive as zeros.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 256) {
            const int bh_q = b * p.heads_q + head, bh_kv = b * heads_kv + kv_head;
            mbar_expect_tx(full_q, cfg::q_bytes);
#pragma unroll
            for (int c = 0; c < D / 64; ++c) tma_load_3d(sq_addr + c * (BM * 128), &tm_q, c * 64, q0, bh_q, full_q);
            for (int t = 0; t < n_tiles; ++t) {
                const int s = t % STAGES;
                const std::uint32_t use_parity = ((t / STAGES) & 1) ^ 1;  // the fill t - STAGES was released
                if (t >= STAGES) mbar_wait(empty_k(s), use_parity);
                mbar_expect_tx(full_k(s), cfg::kv_bytes);
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    tma_load_3d(sk_addr + s * cfg::kv_bytes + c * (BN * 128), &tm_k, c * 64, t * BN, bh_kv, full_k(s));
                if (t >= STAGES) mbar_wait(empty_v(s), use_parity);
                mbar_expect_tx(full_v(s), cfg::kv_bytes);
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    tma_load_3d(sv_addr + s * cfg::kv_bytes + c * (BN * 128), &tm_v, c * 64, t * BN, bh_kv, full_v(s));
            }
        }
    } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = tid >> 7;
    const int lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
    const int r_a = wg * 64 + warp_in_wg * 16 + (lane >> 2);
    const int col_q = (lane & 3) * 2;
    const float sl2 = p.scale * 1.4426950408889634f;

    auto issue_s = [&](float (&s)[BN / 2], int t) {
        const std::uint32_t k_st = sk_addr + (t % STAGES) * cfg::kv_bytes;
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
            const std::uint64_t da = make_desc(sq_addr + (ks >> 2) * (BM * 128) + wg * (64 * 128) + (ks & 3) * 32, 16, 1024);
            const std::uint64_t db = make_desc(k_st + (ks >> 2) * (BN * 128) + (ks & 3) * 32, 16, 1024);
            wgmma_op<BN, F16>::ss(s, da, db, ks > 0 ? 1 : 0);
        }
    };
    auto issue_pv = [&](float (&o)[D / 2], const std::uint32_t (&pa)[BN / 16][4], int t) {
        const std::uint32_t v_st = sv_addr + (t % STAGES) * cfg::kv_bytes;
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) wgmma_op<D, F16>::rs_tb(o, pa[kk], make_desc(v_st + kk * (16 * 128), BN * 128, 1024), 1);
    };
    auto tile_needs_mask = [&](int t) {
        const int n0 = t * BN;
        return (n0 + BN > p.seq_kv) || (p.causal && n0 + BN - 1 > q0 + off);
    };

    float o_acc[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY};
    float l_run[2] = {0.f, 0.f};
    std::uint32_t pa_prev[BN / 16][4];

    mbar_wait(full_q, 0);
    for (int j = 0; j < n_tiles; ++j) {
        mbar_wait(full_k(j % STAGES), (j / STAGES) & 1);
        float s[BN / 2];
        wgmma_fence();
        issue_s(s, j);
        wgmma_commit();
        if (j > 0) {
            mbar_wait(full_v((j - 1) % STAGES), ((j - 1) / STAGES) & 1);
            issue_pv(o_acc, pa_prev, j - 1);
            wgmma_commit();
            wgmma_wait<1>();
        } else {
            wgmma_wait<0>();
        }
        reg_fence(s);
        mbar_arrive(empty_k(j % STAGES));
        std::uint32_t pa[BN / 16][4];
        float alpha[2];
        softmax_tile<T, BN>(s, pa, m_run, l_run, alpha, tile_needs_mask(j), j * BN, q0 + r_a, col_q, p.seq_kv, p.causal, off, sl2);
        wgmma_wait<0>();
        reg_fence(o_acc);
        reg_fence_u(pa_prev);
        if (j > 0) mbar_arrive(empty_v((j - 1) % STAGES));
        scale_rows<D, BN>(o_acc, alpha);
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
            for (int x = 0; x < 4; ++x) pa_prev[kk][x] = pa[kk][x];
    }
    mbar_wait(full_v((n_tiles - 1) % STAGES), ((n_tiles - 1) / STAGES) & 1);
    reg_fence(o_acc);
    wgmma_fence();
    issue_pv(o_acc, pa_prev, n_tiles - 1);
    wgmma_commit();
    wgmma_wait<0>();
    reg_fence(o_acc);

    T* go = static_cast<T*>(p.o) + ((static_cast<std::size_t>(b) * p.heads_q + head) * p.seq_q + q0) * D;
    float* gl = p.lse + (static_cast<std::size_t>(b) * p.heads_q + head) * p.seq_q + q0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float l = l_run[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inv = 1.f / l;
        const int row = r_a + h * 8;
        if (row < q_rows_valid) {
#pragma unroll
            for (int nb = 0; nb < D / 8; ++nb) {
                *reinterpret_cast<std::uint32_t*>(go + static_cast<std::size_t>(row) * D + nb * 8 + col_q) =
                    pack2<T>(o_acc[nb * 4 + 2 * h] * inv, o_acc[nb * 4 + 2 * h + 1] * inv);
            }
            if ((lane & 3) == 0) gl[row] = m_run[h] * p.scale + logf(l);
        }
    }
    }  // consumers
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// 1 where the loader picked this file's sm_90a code for the current device, 0 where it picked the
// plain sm_90 code (or none ran).
__global__ void attention_wgmma_tma_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *out = 1;
#else
    *out = 0;
#endif
}

// Result of the probe per device ordinal: 0 not probed yet, 1 plain sm_90 code, 2 sm_90a code. A
// cache of a fact of the loaded module, written once per device (racing writers write the same).
constexpr int max_devices = 64;
std::atomic<int> probe_cache[max_devices];

bool sm90a_code_runs(int dev) {
    if (dev < 0 || dev >= max_devices) return false;
    const int known = probe_cache[dev].load();
    if (known != 0) return known == 2;
    int* d_flag = nullptr;
    int h_flag = 0;
    if (cudaMalloc(&d_flag, sizeof(int)) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    bool ok = cudaMemset(d_flag, 0, sizeof(int)) == cudaSuccess;
    if (ok) {
        attention_wgmma_tma_probe_kernel<<<1, 1>>>(d_flag);
        ok = cudaGetLastError() == cudaSuccess && cudaMemcpy(&h_flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
    }
    cudaFree(d_flag);
    if (!ok) {
        cudaGetLastError();
        return false;
    }
    probe_cache[dev].store(h_flag == 1 ? 2 : 1);
    return h_flag == 1;
}

// 3-D tensor map over [bh][seq][D] (innermost first: D, seq, bh), box 64 x 128 x 1, 128-byte swizzle:
// a box is one 128-row column block of a tile; rows past seq are zero-filled.
// The driver's encoder through the runtime's entry-point query (no link against libcuda);
// nullptr where the driver does not provide it.
PFN_cuTensorMapEncodeTiled_v12000 lookup_encode() {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

cudaError_t make_map(CUtensorMap* map, const void* ptr, int bh, int seq, int d, bool f16) {
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = lookup_encode();  // once per process
    if (encode == nullptr) return cudaErrorNotSupported;
    const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq), static_cast<cuuint64_t>(bh)};
    const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * 2, static_cast<cuuint64_t>(seq) * d * 2};  // [bytes]
    const cuuint32_t box[3] = {64, 128, 1};
    const cuuint32_t elem_strides[3] = {1, 1, 1};
    const CUresult r = encode(map, f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(ptr),
                              dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

template <typename T, int D>
void launch_config(const attention_shape& s, const void* q, const void* k, const void* v, void* o, float* lse,
                   cudaStream_t stream) {
    constexpr int stages = 2;  // 3 measured slower in the scratch bench (H100, causal 8k: 572 against 625 TFLOP/s)
    using cfg = tma_config<D, stages>;
    constexpr bool f16 = std::is_same_v<T, __half>;
    fa_params p = flash::make_params(s, q, k, v, o, lse);
    p.q_blocks = (s.seq_q + cfg::bm - 1) / cfg::bm;
    CUtensorMap mq, mk, mv;
    check_call(make_map(&mq, q, s.batch * s.heads_q, s.seq_q, D, f16), "cuTensorMapEncodeTiled(Q)");
    check_call(make_map(&mk, k, s.batch * s.heads_kv, s.seq_kv, D, f16), "cuTensorMapEncodeTiled(K)");
    check_call(make_map(&mv, v, s.batch * s.heads_kv, s.seq_kv, D, f16), "cuTensorMapEncodeTiled(V)");
    check_call(cudaFuncSetAttribute(attention_wgmma_tma_kernel<T, D, stages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    cfg::smem_bytes),
               "cudaFuncSetAttribute(attention wgmma_tma shared memory)");
    const dim3 grid(static_cast<unsigned>(p.q_blocks), static_cast<unsigned>(s.heads_q), static_cast<unsigned>(s.batch));
    attention_wgmma_tma_kernel<T, D, stages><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(mq, mk, mv, p);
    check_launch("attention wgmma_tma kernel");
}

}  // namespace
}  // namespace hopper

const char* attention_wgmma_tma_unsupported(const attention_shape& s, elem type) {
    if (type != elem::bf16 && type != elem::f16) return "bf16 and fp16 only";
    if (s.head_dim != 64 && s.head_dim != 128) return "head_dim 64 or 128 only (256 is not written yet)";
    if (s.heads_q > 65535 || s.batch > 65535) return "more than 65535 heads or batches (grid y/z limits)";
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        cudaGetLastError();
        return "no CUDA device";
    }
    if (major != 9 || minor != 0) return "sm_90a code: compute capability 9.0 (H100/H200) only";
    if (!hopper::sm90a_code_runs(dev)) return "the loader did not pick this build's sm_90a code on this device";
    return nullptr;
}

void launch_attention_wgmma_tma(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                                float* lse, cudaStream_t stream) {
    validate_attention_shape(s, type);
    if (const char* why = attention_wgmma_tma_unsupported(s, type)) {
        throw std::invalid_argument(std::string("attention wgmma_tma: ") + why);
    }
    if (type == elem::bf16) {
        if (s.head_dim == 128) hopper::launch_config<__nv_bfloat16, 128>(s, q, k, v, o, lse, stream);
        else hopper::launch_config<__nv_bfloat16, 64>(s, q, k, v, o, lse, stream);
    } else {
        if (s.head_dim == 128) hopper::launch_config<__half, 128>(s, q, k, v, o, lse, stream);
        else hopper::launch_config<__half, 64>(s, q, k, v, o, lse, stream);
    }
}

}  // namespace fusebench::kernels
