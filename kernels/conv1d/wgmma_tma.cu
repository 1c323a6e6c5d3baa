// Dense conv1d (kernel 3, padding 1, stride 1 or 2) + bias + GELU on Hopper (variant `wgmma_tma`,
// issue 20). Versus implicit_gemm (mma.sync m16n8k16, x transposed through registers per block):
// - the convolution as three accumulated GEMMs, one per tap: Y[o, l] = sum_tap W_tap[o, :] .
//   X[:, s l + tap - 1], M = C_out, N = output positions, K = C_in;
// - a first kernel of every call (prepare_operands_kernel) repacks the weights tap-major,
//   Wp[tap][C_out][C8], and transposes x to xt[b][L][C8] (channels contiguous; C8 = C_in rounded
//   up to 8, zeros in the padding, so rows sit on TMA's 16-byte pitch for any C_in and any L). Both operands are then
//   K-major, the layout of the wgmma Q K^T of kernels/attention/hopper_fwd.cuh;
// - TMA loads per pipeline stage (one tap of one 64-channel chunk) a 128 x 64 tile of Wp and a
//   128-position x 64-channel box of xt whose first row is position l0 s + tap - 1: a tap is a
//   shift of the box along TMA's dimension 1 and the stride is that dimension's elementStrides (2
//   loads every other row); positions -1 and >= L, channels >= C_in and rows >= C_out arrive as
//   zeros, so the padding and every ragged edge cost nothing in the main loop;
// - wgmma.mma_async m64n128k16 bf16 / fp16 -> fp32 from shared memory (128-byte swizzle), one
//   group of 4 k-steps in flight while the next stage is waited for;
// - the structure of kernels/fp8/gemm_wgmma.cu: a producer warpgroup (one thread issues TMA into a
//   ring of 6 stages, full / empty mbarriers), two consumer warpgroups, setmaxnreg 40 / 232,
//   persistent grid (one CTA per SM walking 128 x 128 tiles, the C_out / 128 row blocks of a tile
//   of x next to each other so that they share it in L2); configurations coop (both warpgroups on
//   each tile) and pingpong (alternate tiles, one's epilogue under the other's MMAs);
// - epilogue from the registers: + bias, GELU (erf, the formula of the other kernels), one
//   rounding, paired 4-byte stores where L_out is even.
// Why x is transposed rather than read in place (positions contiguous, wgmma's transposed-B
// form): a TMA box must start on a 16-byte boundary of its innermost dimension (PTX ISA, tensor
// tiled mode: "the address of the bounding box must be aligned to 16 bytes"), so the taps' shifts
// by one position cannot be boxes of x; an H100 answered those loads with an illegal-instruction
// error (kernels/conv1d/NOTES.md). TMA cannot stride the innermost dimension either (cuTensorMapEncodeTiled
// ignores elementStrides[0] without interleave), which stride 2 would need.
//
// wgmma and setmaxnreg exist only for the architecture-specific sm_90a target: CMakeLists.txt adds
// -gencode arch=compute_90a,code=sm_90a to this file, and the plain sm_90 pass compiles the kernel
// body away. A probe kernel checks at run time which of the two the loader picked.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/sm90_host.hpp"
#include "kernels/common/workspace.hpp"
#include "kernels/conv1d/conv1d.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FUSEBENCH_CONV1D_WGMMA_DEVICE_CODE 1
#include "kernels/common/sm90.cuh"
#include "kernels/common/sm90_wgmma.cuh"
#endif

namespace fusebench::kernels {
namespace conv1d_wgmma {
namespace {

constexpr int bm = 128, bn = 128, bk = 64;  // tile: output channels x positions; input channels per stage
constexpr int threads = 384;                // warpgroups 0, 1: consumers; 2: producer
constexpr int stages = 6;
constexpr int a_bytes = bm * bk * 2;       // Wp tile [bytes]: 128 rows of 128 B
constexpr int b_bytes = bn * bk * 2;      // xt box [bytes]: 128 position rows of 128 B
constexpr int stage_bytes = a_bytes + b_bytes;
constexpr int bar_offset = stages * stage_bytes;
constexpr int smem_bytes = bar_offset + 16 * stages + 1024;  // + full / empty barriers + alignment slack
static_assert(smem_bytes <= 232448, "more than the 227 KB of shared memory a block may have");
static_assert(a_bytes % 1024 == 0 && b_bytes % 1024 == 0, "tiles 1024-byte aligned (swizzle atoms)");

struct params {
    const void* bias;
    void* y;
    int cout, lout, chunks;            // chunks: ceil(C_in / bk)
    int m_blocks, n_blocks, tiles;     // tiles = batch x m_blocks x n_blocks
    int y_pairs;                       // 1: 4-byte stores of position pairs (L_out even, y 4-byte aligned)
};

#if defined(FUSEBENCH_CONV1D_WGMMA_DEVICE_CODE)
using sm90::mbar_arrive;
using sm90::mbar_expect_tx;
using sm90::mbar_init;
using sm90::mbar_wait;
using sm90::named_barrier_arrive;
using sm90::named_barrier_sync;
using sm90::reg_fence;
using sm90::smem_u32;
using sm90::wgmma_commit;
using sm90::wgmma_fence;
using sm90::wgmma_wait;

// D (64 x 128, fp32) += A (64 x 16) B (16 x 128), both K-major from shared memory with the
// 128-byte swizzle (sm90::wgmma_op<128, F16>::ss). scale_d == 0: D = A B.
template <typename T>
using wt_mma = sm90::wgmma_op<128, std::is_same_v<T, __half>>;
// A and B tiles alike: rows (output channels, positions) of 128 B = 64 input channels, 8-row
// swizzle atoms 1024 B apart (SBO); LBO unused by this layout. A k-step of 16 channels is 32 bytes
// along the swizzled row.
__device__ __forceinline__ std::uint64_t desc_k_major(std::uint32_t addr) { return sm90::make_desc(addr, 16, 1024); }

__device__ __forceinline__ float gelu(float z) { return 0.5f * z * erfcf(-z * 0.70710678118654752f); }

// Tile t: the row block fastest (the C_out / 128 blocks of one x tile run side by side), then the
// position block, then the batch.
__device__ __forceinline__ void tile_coords(const params& p, int t, int& b, int& m_blk, int& n_blk) {
    m_blk = t % p.m_blocks;
    const int r = t / p.m_blocks;
    n_blk = r % p.n_blocks;
    b = r / p.n_blocks;
}

// Epilogue of one warpgroup's 64 x 128 accumulator (thread `t` of the warpgroup): + bias, GELU,
// one rounding, stores masked to C_out and L_out. acc[4 j + 2 h + e] is channel row o0 + 16 warp
// + lane / 4 + 8 h, position l0 + 8 j + 2 (lane % 4) + e.
template <typename T>
__device__ __forceinline__ void store_tile(const params& p, const float (&acc)[64], int b, int o0, int l0, int t) {
    const int lane = t & 31, warp = t >> 5;
    const T* bias = static_cast<const T*>(p.bias);
    T* y = static_cast<T*>(p.y);
    const int l_base = l0 + (lane & 3) * 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int o = o0 + warp * 16 + (lane >> 2) + 8 * h;
        if (o < p.cout) {
            const float bo = to_f32(bias[o]);
            T* yr = y + (static_cast<std::size_t>(b) * p.cout + o) * static_cast<std::size_t>(p.lout);
#pragma unroll
            for (int j = 0; j < bn / 8; ++j) {
                const int l = l_base + 8 * j;
                if (l >= p.lout) break;
                const float v0 = gelu(acc[4 * j + 2 * h] + bo);
                if (p.y_pairs && l + 1 < p.lout) {
                    const float v1 = gelu(acc[4 * j + 2 * h + 1] + bo);
                    T pair[2] = {from_f32<T>(v0), from_f32<T>(v1)};
                    *reinterpret_cast<std::uint32_t*>(yr + l) = *reinterpret_cast<const std::uint32_t*>(pair);
                } else {
                    yr[l] = from_f32<T>(v0);
                    if (l + 1 < p.lout) yr[l + 1] = from_f32<T>(gelu(acc[4 * j + 2 * h + 1] + bo));
                }
            }
        }
    }
}
#endif  // FUSEBENCH_CONV1D_WGMMA_DEVICE_CODE

template <typename T, int S, bool PINGPONG>
__global__ void __launch_bounds__(threads, 1)
    conv1d_wgmma_tma_kernel(const __grid_constant__ CUtensorMap tm_w, const __grid_constant__ CUtensorMap tm_x, const params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const std::uint32_t bar = base + bar_offset;
    auto stage_a = [&](int s) { return base + static_cast<std::uint32_t>(s * stage_bytes); };
    auto stage_b = [&](int s) { return base + static_cast<std::uint32_t>(s * stage_bytes + a_bytes); };
    auto full = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(s); };
    auto empty = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(stages + s); };

    const int tid = threadIdx.x;
    if (tid == 0) {
        for (int s = 0; s < stages; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), PINGPONG ? 4 : 8);  // lane 0 of each consumer warp that reads the stage
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();
    const int k_iters = 3 * p.chunks;  // (chunk, tap) pairs, tap fastest

    const int role = __shfl_sync(0xffffffffu, tid / 128, 0);
    if (role == 2) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 256) {
            int it = 0;
            for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
                int b, m_blk, n_blk;
                tile_coords(p, t, b, m_blk, n_blk);
                const int l0 = n_blk * bn;
                for (int c = 0; c < p.chunks; ++c) {
                    for (int tap = 0; tap < 3; ++tap, ++it) {
                        const int s = it % stages;
                        if (it >= stages) mbar_wait(empty(s), ((it / stages) & 1) ^ 1);  // fill it - stages consumed
                        mbar_expect_tx(full(s), stage_bytes);
                        sm90::tma_load_3d(stage_a(s), &tm_w, c * bk, m_blk * bm, tap, full(s));
                        // Rows l0 S + tap - 1 + S n, n < 128 (the map's elementStrides[1] is S).
                        sm90::tma_load_3d(stage_b(s), &tm_x, c * bk, l0 * S + tap - 1, b, full(s));
                    }
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int wg = role;
        const int lane = tid & 31;
        if constexpr (!PINGPONG) {
            // Cooperative: both warpgroups on every tile, 64 output channels each; every stage is
            // released by all 8 consumer warps.
            int it = 0;
            for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
                int b, m_blk, n_blk;
                tile_coords(p, t, b, m_blk, n_blk);
                float acc[64];
                for (int kb = 0; kb < k_iters; ++kb, ++it) {
                    const int s = it % stages;
                    mbar_wait(full(s), (it / stages) & 1);
                    wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < bk / 16; ++ks) {
                        wt_mma<T>::ss(acc, desc_k_major(stage_a(s) + static_cast<std::uint32_t>(wg * 64 * 128 + ks * 32)),
                                      desc_k_major(stage_b(s) + static_cast<std::uint32_t>(ks * 32)), kb > 0 || ks > 0 ? 1 : 0);
                    }
                    wgmma_commit();
                    // The previous stage's group is done once at most this one is in flight: release it.
                    wgmma_wait<1>();
                    if (kb > 0 && lane == 0) mbar_arrive(empty((it - 1) % stages));
                }
                wgmma_wait<0>();
                reg_fence(acc);
                if (lane == 0) mbar_arrive(empty((it - 1) % stages));
                store_tile<T>(p, acc, b, m_blk * bm + wg * 64, n_blk * bn, tid & 127);
            }
        } else {
            // Ping-pong: the warpgroups take alternate tiles of this CTA, 128 output channels each
            // (two m64 accumulators), so one's epilogue runs under the other's main loop. Their
            // main loops take turns (named barriers 1 and 2): a warpgroup starts its tile's main
            // loop once the other has issued all of its previous tile's stages, so no wait on a
            // full barrier runs more than one phase ahead of the ring.
            const int mine = (p.tiles - static_cast<int>(blockIdx.x) + static_cast<int>(gridDim.x) - 1) / static_cast<int>(gridDim.x);
            for (int lt = wg; lt < mine; lt += 2) {
                const int t = static_cast<int>(blockIdx.x) + lt * static_cast<int>(gridDim.x);
                int b, m_blk, n_blk;
                tile_coords(p, t, b, m_blk, n_blk);
                if (lt > 0) named_barrier_sync(1 + wg, 256);
                int it = lt * k_iters;
                float acc0[64], acc1[64];
                for (int kb = 0; kb < k_iters; ++kb, ++it) {
                    const int s = it % stages;
                    mbar_wait(full(s), (it / stages) & 1);
                    wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < bk / 16; ++ks) {
                        const std::uint64_t db = desc_k_major(stage_b(s) + static_cast<std::uint32_t>(ks * 32));
                        wt_mma<T>::ss(acc0, desc_k_major(stage_a(s) + static_cast<std::uint32_t>(ks * 32)), db, kb > 0 || ks > 0 ? 1 : 0);
                        wt_mma<T>::ss(acc1, desc_k_major(stage_a(s) + static_cast<std::uint32_t>(64 * 128 + ks * 32)), db,
                                      kb > 0 || ks > 0 ? 1 : 0);
                    }
                    wgmma_commit();
                    wgmma_wait<1>();
                    if (kb > 0 && lane == 0) mbar_arrive(empty((it - 1) % stages));
                }
                // The other warpgroup's turn (it waits for this arrival only if it has a next tile).
                if (lt + 1 < mine) named_barrier_arrive(2 - wg, 256);
                wgmma_wait<0>();
                reg_fence(acc0);
                reg_fence(acc1);
                if (lane == 0) mbar_arrive(empty((it - 1) % stages));
                store_tile<T>(p, acc0, b, m_blk * bm, n_blk * bn, tid & 127);
                store_tile<T>(p, acc1, b, m_blk * bm + 64, n_blk * bn, tid & 127);
            }
        }
    }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// The operands of the GEMMs, in one launch before it. Blocks [0, tiles): xt[b][l][ci] = x[b][ci][l]
// for ci < C8 (zeros for ci >= C_in), one 64-position x 64-channel tile per block: two 16-byte
// loads per thread along positions (VEC: L a multiple of 8 and x 16-byte aligned; else 8 scalar
// loads each), scattered into shared memory as position rows of 8 16-byte channel chunks, chunk
// index XOR (row / 8) % 8 (conflict-free 2-byte stores and 16-byte reads), then 16-byte stores
// along channels: both global sides coalesced, 32 bytes in flight per thread. Blocks [tiles, ...):
// Wp[tap][o][ci] (ci < C8) from w[o][ci][tap], zeros for ci >= C_in, grid-stride.
constexpr int prep_threads = 256, prep_tile = 64;

template <typename T, bool VEC>
__global__ void __launch_bounds__(prep_threads) prepare_operands_kernel(const T* __restrict__ x, T* __restrict__ xt, const T* __restrict__ w,
                                                                        T* __restrict__ wp, int cin, int c8, int length, int cout,
                                                                        int tiles_l, int tiles_c, int tiles) {
    static_assert(sizeof(T) == 2, "16-bit storage types");
    const int tid = static_cast<int>(threadIdx.x);
    const int blk = static_cast<int>(blockIdx.x);
    if (blk >= tiles) {
        const std::size_t n = static_cast<std::size_t>(3) * cout * c8;
        const std::size_t step = static_cast<std::size_t>(gridDim.x - tiles) * prep_threads;
        for (std::size_t idx = static_cast<std::size_t>(blk - tiles) * prep_threads + tid; idx < n; idx += step) {
            const int ci = static_cast<int>(idx % c8);
            const std::size_t rest = idx / c8;
            const int o = static_cast<int>(rest % cout);
            const int tap = static_cast<int>(rest / cout);
            wp[idx] = ci < cin ? w[(static_cast<std::size_t>(o) * cin + ci) * 3 + tap] : from_f32<T>(0.0f);
        }
        return;
    }
    __shared__ uint4 tile[prep_tile * 8];  // [position row][channel chunk ^ (row / 8) % 8], 8 channels a chunk
    const int l0 = (blk % tiles_l) * prep_tile;
    const int c0 = (blk / tiles_l % tiles_c) * prep_tile;
    const std::size_t b = static_cast<std::size_t>(blk / tiles_l / tiles_c);
    const int q = tid & 7;   // loads: 8-position chunk; stores: 8-channel chunk
    const int r = tid >> 3;  // 0 .. 31
    uint4 v[2];
#pragma unroll
    for (int p = 0; p < 2; ++p) {
        const int ci = c0 + r + 32 * p, l = l0 + 8 * q;
        const T* src = x + (b * cin + ci) * length + l;
        if (VEC) {
            v[p] = ci < cin && l < length ? __ldg(reinterpret_cast<const uint4*>(src)) : make_uint4(0, 0, 0, 0);
        } else {
            alignas(16) T e8[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) e8[e] = ci < cin && l + e < length ? src[e] : from_f32<T>(0.0f);
            v[p] = *reinterpret_cast<const uint4*>(e8);
        }
    }
    T* ts = reinterpret_cast<T*>(tile);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
        alignas(16) T e8[8];
        *reinterpret_cast<uint4*>(e8) = v[p];
        const int i = r + 32 * p;  // channel within the tile; its positions are rows 8 q .. 8 q + 7 (row / 8 = q)
#pragma unroll
        for (int e = 0; e < 8; ++e) ts[(8 * q + e) * prep_tile + (((i >> 3) ^ q) << 3) + (i & 7)] = e8[e];
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < 2; ++p) {
        const int j = r + 32 * p;  // position row
        const int l = l0 + j, cc = c0 + 8 * q;
        if (l < length && cc < c8) {
            *reinterpret_cast<uint4*>(xt + (b * length + l) * c8 + cc) = tile[j * 8 + (q ^ ((j >> 3) & 7))];
        }
    }
}

// 1 where the loader picked this file's sm_90a code for the current device, 0 for the plain sm_90
// code.
__global__ void conv1d_wgmma_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *out = 1;
#else
    *out = 0;
#endif
}

sm90::sm90a_probe sm90a_code{reinterpret_cast<const void*>(&conv1d_wgmma_probe_kernel)};

std::size_t round_up(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }
std::size_t k8_of(const conv1d_dense_shape& s) { return round_up(static_cast<std::size_t>(s.cin), 8); }
std::size_t weights_bytes(const conv1d_dense_shape& s) { return align256(3 * static_cast<std::size_t>(s.cout) * k8_of(s) * 2); }
std::size_t xt_bytes(const conv1d_dense_shape& s) {
    return align256(static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.length) * k8_of(s) * 2);
}

// A 3-D map as sm90::encode_tiled_swizzle128 makes them (128-byte swizzle, 256-byte L2 promotion,
// zeros past the ends), with a traversal stride on dimension 1 (1 or the convolution's stride).
void make_map(CUtensorMap* map, CUtensorMapDataType type, const void* ptr, const cuuint64_t* dims, const cuuint64_t* strides,
              const cuuint32_t* box, cuuint32_t row_step, const char* what) {
    if (sm90::tensor_map_encoder() == nullptr) throw std::runtime_error("conv1d wgmma_tma: the driver provides no cuTensorMapEncodeTiled");
    const cuuint32_t elem_strides[3] = {1, row_step, 1};
    const CUresult r = sm90::tensor_map_encoder()(map, type, 3, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        throw std::runtime_error(std::string("conv1d wgmma_tma: cuTensorMapEncodeTiled(") + what + ") failed with CUresult " +
                                 std::to_string(static_cast<int>(r)));
    }
}

template <typename T, int S>
void launch(const void* x, const void* w, const void* bias, void* y, void* workspace, const conv1d_dense_shape& s,
            cudaStream_t stream, conv1d_wgmma_schedule schedule) {
    const CUtensorMapDataType type = std::is_same_v<T, __nv_bfloat16> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const std::size_t k8 = k8_of(s);
    T* wp = static_cast<T*>(workspace);
    T* xt = reinterpret_cast<T*>(static_cast<unsigned char*>(workspace) + weights_bytes(s));
    {
        const int tiles_l = (s.length + prep_tile - 1) / prep_tile;
        const int tiles_c = static_cast<int>((k8 + prep_tile - 1) / prep_tile);
        const long long tiles = static_cast<long long>(tiles_l) * tiles_c * s.batch;
        const std::size_t n_w = 3 * static_cast<std::size_t>(s.cout) * k8;
        const long long pack_blocks = static_cast<long long>(std::min<std::size_t>((n_w + prep_threads - 1) / prep_threads, 4096));
        if (tiles + pack_blocks > INT_MAX) throw std::invalid_argument("conv1d wgmma_tma: too many blocks for the operand preparation");
        const bool vec = s.length % 8 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
        auto* prep = vec ? prepare_operands_kernel<T, true> : prepare_operands_kernel<T, false>;
        prep<<<static_cast<unsigned>(tiles + pack_blocks), prep_threads, 0, stream>>>(static_cast<const T*>(x), xt, static_cast<const T*>(w),
                                                                                      wp, s.cin, static_cast<int>(k8), s.length, s.cout,
                                                                                      tiles_l, tiles_c, static_cast<int>(tiles));
        check_launch("conv1d wgmma_tma: x transposition and weight packing");
    }

    CUtensorMap mw, mx;
    {
        const cuuint64_t dims[3] = {k8, static_cast<cuuint64_t>(s.cout), 3};
        const cuuint64_t strides[2] = {k8 * 2, static_cast<cuuint64_t>(s.cout) * k8 * 2};  // [bytes]
        const cuuint32_t box[3] = {bk, bm, 1};
        make_map(&mw, type, wp, dims, strides, box, 1, "packed weights");
    }
    {
        const cuuint64_t dims[3] = {k8, static_cast<cuuint64_t>(s.length), static_cast<cuuint64_t>(s.batch)};
        const cuuint64_t strides[2] = {k8 * 2, static_cast<cuuint64_t>(s.length) * k8 * 2};  // [bytes]
        // bn rows at a step of S: the box spans bn S rows (at most 256, the limit of a box side).
        const cuuint32_t box[3] = {bk, static_cast<cuuint32_t>(bn * S), 1};
        make_map(&mx, type, xt, dims, strides, box, S, "x transposed");
    }

    params p;
    p.bias = bias;
    p.y = y;
    p.cout = s.cout;
    p.lout = s.out_length();
    p.chunks = (s.cin + bk - 1) / bk;
    p.m_blocks = (s.cout + bm - 1) / bm;
    p.n_blocks = (p.lout + bn - 1) / bn;
    p.tiles = s.batch * p.m_blocks * p.n_blocks;
    p.y_pairs = p.lout % 2 == 0 && reinterpret_cast<std::uintptr_t>(y) % 4 == 0 ? 1 : 0;

    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    auto* kernel = schedule == conv1d_wgmma_schedule::pingpong ? conv1d_wgmma_tma_kernel<T, S, true> : conv1d_wgmma_tma_kernel<T, S, false>;
    check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes),
               "cudaFuncSetAttribute(conv1d wgmma_tma shared memory)");
    const int grid = std::min(p.tiles, cached_sm_count(dev));
    kernel<<<grid, threads, smem_bytes, stream>>>(mw, mx, p);
    check_launch("conv1d wgmma_tma kernel");
}

}  // namespace
}  // namespace conv1d_wgmma

const char* conv1d_dense_wgmma_tma_shape_unsupported(elem t, const conv1d_dense_shape& s) {
    if (t == elem::f32) return "wgmma takes bf16 or fp16 (fp32 keeps the direct kernel: no TF32)";
    if (s.batch < 1 || s.cin < 1 || s.cout < 1 || s.length < 1) return "empty shape";
    if (s.stride != 1 && s.stride != 2) return "stride 1 or 2 only";
    // Tile counts and TMA coordinates are 32-bit signed.
    const std::size_t tiles = static_cast<std::size_t>(s.batch) * ((s.cout + conv1d_wgmma::bm - 1) / conv1d_wgmma::bm) *
                              ((static_cast<std::size_t>(s.out_length()) + conv1d_wgmma::bn - 1) / conv1d_wgmma::bn);
    if (s.batch > 65535) return "batch above 65535";
    if (tiles > static_cast<std::size_t>(INT_MAX) || s.length > INT_MAX - 256 ||
        static_cast<std::size_t>(s.batch) * s.cin > static_cast<std::size_t>(INT_MAX)) {
        return "fewer than 2^31 tiles, positions and batch x C_in rows";
    }
    // TMA: global strides below 2^40 bytes.
    if (static_cast<std::size_t>(s.length) * conv1d_wgmma::k8_of(s) * 2 >= (std::size_t{1} << 40)) {
        return "one batch of x below 2^40 bytes (TMA global strides)";
    }
    return nullptr;
}

const char* conv1d_dense_wgmma_tma_unsupported(elem t, const conv1d_dense_shape& s) {
    if (const char* why = conv1d_dense_wgmma_tma_shape_unsupported(t, s)) return why;
    return conv1d_wgmma::sm90a_code.current_device_unsupported();
}

std::size_t conv1d_dense_wgmma_tma_workspace_bytes(elem t, const conv1d_dense_shape& s) {
    if (t == elem::f32) return 0;
    return conv1d_wgmma::weights_bytes(s) + conv1d_wgmma::xt_bytes(s);
}

std::size_t conv1d_dense_wgmma_tma_xt_bytes(const conv1d_dense_shape& s) { return conv1d_wgmma::xt_bytes(s); }

void launch_conv1d_dense_wgmma_tma(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                                   const conv1d_dense_shape& s, cudaStream_t stream, conv1d_wgmma_schedule schedule) {
    if (const char* why = conv1d_dense_wgmma_tma_shape_unsupported(t, s)) throw std::invalid_argument(std::string("conv1d wgmma_tma: ") + why);
    if (workspace == nullptr || reinterpret_cast<std::uintptr_t>(workspace) % 256 != 0) {
        throw std::invalid_argument("conv1d wgmma_tma: needs a 256-byte aligned workspace of conv1d_dense_wgmma_tma_workspace_bytes");
    }
    if (const char* why = conv1d_wgmma::sm90a_code.current_device_unsupported()) {
        throw std::invalid_argument(std::string("conv1d wgmma_tma: ") + why);
    }
    if (t == elem::bf16) {
        if (s.stride == 1) conv1d_wgmma::launch<__nv_bfloat16, 1>(x, w, bias, y, workspace, s, stream, schedule);
        else conv1d_wgmma::launch<__nv_bfloat16, 2>(x, w, bias, y, workspace, s, stream, schedule);
    } else {
        if (s.stride == 1) conv1d_wgmma::launch<__half, 1>(x, w, bias, y, workspace, s, stream, schedule);
        else conv1d_wgmma::launch<__half, 2>(x, w, bias, y, workspace, s, stream, schedule);
    }
}

}  // namespace fusebench::kernels
