// The Hopper dense conv1d pipeline shared by wgmma_tma.cu (bf16 / fp16) and wgmma_tma_tf32.cu (fp32
// tensors in TF32): operand preparation, TMA maps, the persistent producer / consumer kernel, the
// epilogue. Templated on the operand type T: every stage holds 128-byte rows (64 bf16 / fp16 or 32
// fp32 channels), so the swizzle, the descriptors (+32 bytes per k-step: k16 of 16-bit, k8 of
// TF32) and the ring's byte geometry are the same for all three types; only the wgmma instruction,
// the channels per stage and the accumulation form (kblock below) differ.
// Internal linkage (an unnamed namespace): each including .cu compiles its own instances and its
// own sm_90a probe (the loader picks code per module). CMakeLists.txt adds -gencode
// arch=compute_90a,code=sm_90a to every including file; the plain sm_90 pass compiles the kernel
// body away.
#pragma once

#include "kernels/common/elem_io.cuh"
#include "kernels/common/gelu.cuh"
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

constexpr int bm = 128;        // output channels per tile
constexpr int threads = 384;   // warpgroups 0, 1: consumers; 2: producer
constexpr int row_bytes = 128;  // one swizzle row: the input channels of a stage
constexpr int k_steps = 4;      // wgmma k-steps per stage, 32 bytes of the row each

// Input channels per stage: one 128-byte row of T.
template <typename T>
constexpr int bk_of = row_bytes / static_cast<int>(sizeof(T));

// One kernel configuration: ring depth, positions per tile (N of each wgmma: 128 or 256; one x
// box of 128 rows per 128), schedule (pingpong: the consumer warpgroups take alternate tiles, two
// m64 accumulators each; else both share each tile), and the accumulation form.
// kblock 0: the accumulator chains through every k-step in the tensor core (wgmma's own sum);
// kblock k > 0: each run of k stages (k x 4 k-steps) sums from zero into a partial register
// accumulator, added to the fp32 accumulator by IEEE adds once it is complete, so the tensor
// core's truncating sum chains over 4 k instructions only (the TF32 variant's form:
// kernels/conv1d/NOTES.md says why). One partial, not two alternating: ptxas allocates at most 168
// registers per thread at 384 threads (setmaxnreg does not raise its budget), and 3 x 64
// accumulators spilled.
template <int STAGES, int BN, bool PINGPONG, int KBLOCK>
struct pipe {
    static constexpr int stages = STAGES, bn = BN, kblock = KBLOCK;
    static constexpr bool pingpong = PINGPONG;
    static constexpr int a_bytes = bm * row_bytes;  // weight tile [bytes]: 128 rows of 128 B
    static constexpr int b_bytes = BN * row_bytes;  // x box(es) [bytes]: BN position rows of 128 B
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr int bar_offset = stages * stage_bytes;
    static constexpr int smem_bytes = bar_offset + 16 * stages + 1024;  // + full / empty barriers + alignment slack
    static_assert(smem_bytes <= 232448, "more than the 227 KB of shared memory a block may have");
    static_assert(BN == 128 || BN == 256, "one or two 128-row boxes of x per stage");
    static_assert(!(PINGPONG && KBLOCK), "ping-pong keeps two m64 accumulators per warpgroup: no room for a partial");
    static_assert(KBLOCK == 0 || KBLOCK == 1 || KBLOCK == 3, "a run of stages divides the 3 taps of a chunk");
};

struct params {
    const void* bias;
    void* y;
    int cout, lout, chunks;            // chunks: ceil(C_in / bk)
    int m_blocks, n_blocks, tiles;     // tiles = batch x m_blocks x n_blocks
    int y_pairs;                       // 1: stores of position pairs (L_out even, y aligned to 2 elements)
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

// D (64 x N, fp32) += A (64 x k) B (k x N), both K-major from shared memory with the 128-byte
// swizzle: k16 of bf16 / fp16 (sm90::wgmma_op), k8 of TF32 (sm90::wgmma_tf32_op). scale_d == 0: D = A B.
template <typename T, int N>
__device__ __forceinline__ void mma_ss(float (&d)[N / 2], std::uint64_t da, std::uint64_t db, int scale_d) {
    if constexpr (std::is_same_v<T, float>) sm90::wgmma_tf32_op<N>::ss(d, da, db, scale_d);
    else sm90::wgmma_op<N, std::is_same_v<T, __half>>::ss(d, da, db, scale_d);
}
// A and B tiles alike: rows (output channels, positions) of 128 B, 8-row swizzle atoms 1024 B
// apart (SBO); LBO unused by this layout. A k-step is 32 bytes along the swizzled row.
__device__ __forceinline__ std::uint64_t desc_k_major(std::uint32_t addr) { return sm90::make_desc(addr, 16, 1024); }

// Tile t: the row block fastest (the C_out / 128 blocks of one x tile run side by side), then the
// position block, then the batch.
__device__ __forceinline__ void tile_coords(const params& p, int t, int& b, int& m_blk, int& n_blk) {
    m_blk = t % p.m_blocks;
    const int r = t / p.m_blocks;
    n_blk = r % p.n_blocks;
    b = r / p.n_blocks;
}

// Epilogue of one warpgroup's 64 x N accumulator (thread `t` of the warpgroup): + bias, GELU (erfcf for
// fp32 outputs, kernels/common/gelu.cuh's short form for 16-bit ones),
// one rounding, stores masked to C_out and L_out. acc[4 j + 2 h + e] is channel row o0 + 16 warp
// + lane / 4 + 8 h, position l0 + 8 j + 2 (lane % 4) + e.
template <typename T, int N>
__device__ __forceinline__ void store_tile(const params& p, const float (&acc)[N / 2], int b, int o0, int l0, int t) {
    using pair_t = std::conditional_t<sizeof(T) == 2, std::uint32_t, uint2>;
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
            for (int j = 0; j < N / 8; ++j) {
                const int l = l_base + 8 * j;
                if (l >= p.lout) break;
                const float v0 = gelu_erf<T>(acc[4 * j + 2 * h] + bo);
                if (p.y_pairs && l + 1 < p.lout) {
                    const float v1 = gelu_erf<T>(acc[4 * j + 2 * h + 1] + bo);
                    alignas(sizeof(pair_t)) T pair[2] = {from_f32<T>(v0), from_f32<T>(v1)};
                    *reinterpret_cast<pair_t*>(yr + l) = *reinterpret_cast<const pair_t*>(pair);
                } else {
                    yr[l] = from_f32<T>(v0);
                    if (l + 1 < p.lout) yr[l + 1] = from_f32<T>(gelu_erf<T>(acc[4 * j + 2 * h + 1] + bo));
                }
            }
        }
    }
}
#endif  // FUSEBENCH_CONV1D_WGMMA_DEVICE_CODE

template <typename T, int S, typename P>
__global__ void __launch_bounds__(threads, 1)
    conv1d_wgmma_tma_kernel(const __grid_constant__ CUtensorMap tm_w, const __grid_constant__ CUtensorMap tm_x, const params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int stages = P::stages, bn = P::bn, bk = bk_of<T>, acc_n = bn / 2;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const std::uint32_t bar = base + P::bar_offset;
    auto stage_a = [&](int s) { return base + static_cast<std::uint32_t>(s * P::stage_bytes); };
    auto stage_b = [&](int s) { return base + static_cast<std::uint32_t>(s * P::stage_bytes + P::a_bytes); };
    auto full = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(s); };
    auto empty = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(stages + s); };

    const int tid = threadIdx.x;
    if (tid == 0) {
        for (int s = 0; s < stages; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), P::pingpong ? 4 : 8);  // lane 0 of each consumer warp that reads the stage
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
                        mbar_expect_tx(full(s), P::stage_bytes);
                        sm90::tma_load_3d(stage_a(s), &tm_w, c * bk, m_blk * bm, tap, full(s));
                        // Rows l0 S + tap - 1 + S n, n < bn (the map's elementStrides[1] is S), in
                        // boxes of 128 rows.
#pragma unroll
                        for (int h = 0; h < bn / 128; ++h) {
                            sm90::tma_load_3d(stage_b(s) + static_cast<std::uint32_t>(h * 128 * row_bytes), &tm_x, c * bk,
                                              (l0 + 128 * h) * S + tap - 1, b, full(s));
                        }
                    }
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int wg = role;
        const int lane = tid & 31;
        auto desc_a = [&](int s, int row0, int ks) {
            return desc_k_major(stage_a(s) + static_cast<std::uint32_t>(row0 * row_bytes + ks * 32));
        };
        auto desc_b = [&](int s, int ks) { return desc_k_major(stage_b(s) + static_cast<std::uint32_t>(ks * 32)); };
        if constexpr (!P::pingpong && P::kblock == 0) {
            // Cooperative: both warpgroups on every tile, 64 output channels each; every stage is
            // released by all 8 consumer warps.
            int it = 0;
            for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
                int b, m_blk, n_blk;
                tile_coords(p, t, b, m_blk, n_blk);
                float acc[acc_n];
                for (int kb = 0; kb < k_iters; ++kb, ++it) {
                    const int s = it % stages;
                    mbar_wait(full(s), (it / stages) & 1);
                    wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < k_steps; ++ks) mma_ss<T, bn>(acc, desc_a(s, wg * 64, ks), desc_b(s, ks), kb > 0 || ks > 0 ? 1 : 0);
                    wgmma_commit();
                    // The previous stage's group is done once at most this one is in flight: release it.
                    wgmma_wait<1>();
                    if (kb > 0 && lane == 0) mbar_arrive(empty((it - 1) % stages));
                }
                wgmma_wait<0>();
                reg_fence(acc);
                if (lane == 0) mbar_arrive(empty((it - 1) % stages));
                store_tile<T, bn>(p, acc, b, m_blk * bm + wg * 64, n_blk * bn, tid & 127);
            }
        } else if constexpr (!P::pingpong) {
            // Cooperative with partial sums: each run of kblock stages sums from zero into `part`;
            // at the run's end the warpgroup waits for its wgmma groups and adds part to acc (IEEE
            // adds) before the next run overwrites it, while the other warpgroup's groups keep the
            // tensor cores busy. Stages inside a run keep one group in flight as above.
            constexpr int kb_run = P::kblock;
            int it = 0;
            for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
                int b, m_blk, n_blk;
                tile_coords(p, t, b, m_blk, n_blk);
                float acc[acc_n], part[acc_n];
#pragma unroll
                for (int i = 0; i < acc_n; ++i) acc[i] = 0.0f;
                for (int kb = 0; kb < k_iters; ++kb, ++it) {  // k_iters = 3 chunks: a whole number of runs
                    const int s = it % stages, in_run = kb % kb_run;
                    mbar_wait(full(s), (it / stages) & 1);
                    wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < k_steps; ++ks) mma_ss<T, bn>(part, desc_a(s, wg * 64, ks), desc_b(s, ks), in_run > 0 || ks > 0 ? 1 : 0);
                    wgmma_commit();
                    if (in_run == kb_run - 1) {
                        wgmma_wait<0>();
                        reg_fence(part);
#pragma unroll
                        for (int i = 0; i < acc_n; ++i) acc[i] += part[i];
                        // Release this stage, and the previous one unless it ended a run (released then).
                        if (lane == 0) {
                            if (in_run > 0) mbar_arrive(empty((it - 1) % stages));
                            mbar_arrive(empty(s));
                        }
                    } else {
                        wgmma_wait<1>();
                        if (in_run > 0 && lane == 0) mbar_arrive(empty((it - 1) % stages));
                    }
                }
                store_tile<T, bn>(p, acc, b, m_blk * bm + wg * 64, n_blk * bn, tid & 127);
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
                float acc0[acc_n], acc1[acc_n];
                for (int kb = 0; kb < k_iters; ++kb, ++it) {
                    const int s = it % stages;
                    mbar_wait(full(s), (it / stages) & 1);
                    wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < k_steps; ++ks) {
                        const std::uint64_t db = desc_b(s, ks);
                        mma_ss<T, bn>(acc0, desc_a(s, 0, ks), db, kb > 0 || ks > 0 ? 1 : 0);
                        mma_ss<T, bn>(acc1, desc_a(s, 64, ks), db, kb > 0 || ks > 0 ? 1 : 0);
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
                store_tile<T, bn>(p, acc0, b, m_blk * bm, n_blk * bn, tid & 127);
                store_tile<T, bn>(p, acc1, b, m_blk * bm + 64, n_blk * bn, tid & 127);
            }
        }
    }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// The operands of the GEMMs, in one launch before it. E = 16 / sizeof(T) elements per 16-byte
// chunk, tiles of 64 positions x 8 E channels (128 bytes a position row). Blocks [0, tiles):
// xt[b][l][ci] = op(x[b][ci][l]) for ci < CK (C_in rounded up to E; zeros for ci >= C_in): two
// 16-byte loads per thread along positions (VEC: L a multiple of E and x 16-byte aligned; else E
// scalar loads each), scattered into shared memory as position rows of 8 16-byte channel chunks,
// chunk index XOR (row / E) % 8 (conflict-free 2-byte stores and 16-byte reads for 16-bit types,
// 2-way 4-byte stores for fp32), then 16-byte stores along channels: both global sides coalesced,
// 32 bytes in flight per thread. Blocks [tiles, ...): Wp[tap][o][ci] (ci < CK) = op(w[o][ci][tap]),
// zeros for ci >= C_in, grid-stride. Op: the operand as it goes to the tensor cores (kept, or
// rounded to TF32).
constexpr int prep_threads = 256, prep_tile = 64;

template <typename T, bool VEC, typename Op>
__global__ void __launch_bounds__(prep_threads) prepare_operands_kernel(const T* __restrict__ x, T* __restrict__ xt, const T* __restrict__ w,
                                                                        T* __restrict__ wp, int cin, int ck, int length, int cout,
                                                                        int tiles_l, int tiles_c, int tiles) {
    constexpr int E = 16 / static_cast<int>(sizeof(T));
    constexpr int tile_c = 8 * E;          // channels of a tile
    constexpr int q_n = prep_tile / E;     // 16-byte position chunks of a channel row (8, 16)
    constexpr int rows = prep_threads / q_n;  // channel rows per load pass (32, 16)
    static_assert(2 * rows == tile_c, "two load passes cover the tile's channels");
    const Op op{};
    const int tid = static_cast<int>(threadIdx.x);
    const int blk = static_cast<int>(blockIdx.x);
    if (blk >= tiles) {
        const std::size_t n = static_cast<std::size_t>(3) * cout * ck;
        const std::size_t step = static_cast<std::size_t>(gridDim.x - tiles) * prep_threads;
        for (std::size_t idx = static_cast<std::size_t>(blk - tiles) * prep_threads + tid; idx < n; idx += step) {
            const int ci = static_cast<int>(idx % ck);
            const std::size_t rest = idx / ck;
            const int o = static_cast<int>(rest % cout);
            const int tap = static_cast<int>(rest / cout);
            wp[idx] = ci < cin ? op(w[(static_cast<std::size_t>(o) * cin + ci) * 3 + tap]) : from_f32<T>(0.0f);
        }
        return;
    }
    __shared__ uint4 tile[prep_tile * 8];  // [position row][channel chunk ^ (row / E) % 8], E channels a chunk
    const int l0 = (blk % tiles_l) * prep_tile;
    const int c0 = (blk / tiles_l % tiles_c) * tile_c;
    const std::size_t b = static_cast<std::size_t>(blk / tiles_l / tiles_c);
    // Unsigned thread-derived indices: divisions and remainders by powers of two become shifts and masks.
    const unsigned utid = threadIdx.x;
    const int q = static_cast<int>(utid % q_n);  // loads: E-position chunk
    const int r = static_cast<int>(utid / q_n);  // loads: channel row of the pass
    uint4 v[2];
#pragma unroll
    for (int p = 0; p < 2; ++p) {
        const int ci = c0 + r + rows * p, l = l0 + E * q;
        const T* src = x + (b * cin + ci) * length + l;
        if (VEC) {
            v[p] = ci < cin && l < length ? __ldg(reinterpret_cast<const uint4*>(src)) : make_uint4(0, 0, 0, 0);
        } else {
            alignas(16) T e8[E];
#pragma unroll
            for (int e = 0; e < E; ++e) e8[e] = ci < cin && l + e < length ? src[e] : from_f32<T>(0.0f);
            v[p] = *reinterpret_cast<const uint4*>(e8);
        }
    }
    T* ts = reinterpret_cast<T*>(tile);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
        alignas(16) T e8[E];
        *reinterpret_cast<uint4*>(e8) = v[p];
        const unsigned i = utid / q_n + rows * p;  // channel within the tile; its positions are rows E q .. E q + E - 1 (row / E = q)
        const int col = static_cast<int>(((i / E) ^ (utid % q_n & 7)) * E + i % E);
#pragma unroll
        for (int e = 0; e < E; ++e) ts[(E * q + e) * tile_c + col] = op(e8[e]);
    }
    __syncthreads();
    const unsigned qs = utid & 7;  // stores: 16-byte channel chunk
#pragma unroll
    for (int p = 0; p < 2; ++p) {
        const unsigned j = (utid >> 3) + 32 * p;  // position row
        const int l = l0 + static_cast<int>(j), cc = c0 + E * static_cast<int>(qs);
        if (l < length && cc < ck) {
            *reinterpret_cast<uint4*>(xt + (b * length + l) * ck + cc) = tile[j * 8 + (qs ^ ((j / E) & 7))];
        }
    }
}

// The operand as the 16-bit wgmma takes it.
struct operand_kept {
    template <typename T>
    __device__ __forceinline__ T operator()(T v) const { return v; }
};

// 1 where the loader picked the including file's sm_90a code for the current device, 0 for the
// plain sm_90 code.
__global__ void conv1d_wgmma_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *out = 1;
#else
    *out = 0;
#endif
}

sm90::sm90a_probe sm90a_code{reinterpret_cast<const void*>(&conv1d_wgmma_probe_kernel)};

std::size_t round_up(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }
// C_in rounded up to a 16-byte row pitch of elem_bytes-wide elements (8 bf16 / fp16, 4 fp32).
std::size_t ck_of(const conv1d_dense_shape& s, std::size_t elem_bytes) { return round_up(static_cast<std::size_t>(s.cin), 16 / elem_bytes); }
std::size_t weights_bytes(const conv1d_dense_shape& s, std::size_t elem_bytes) {
    return align256(3 * static_cast<std::size_t>(s.cout) * ck_of(s, elem_bytes) * elem_bytes);
}
std::size_t xt_bytes(const conv1d_dense_shape& s, std::size_t elem_bytes) {
    return align256(static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.length) * ck_of(s, elem_bytes) * elem_bytes);
}

// 128 x 128 output tiles (C_out x positions) over the batch: the persistent grid's work items.
std::size_t tile_count(const conv1d_dense_shape& s) {
    return static_cast<std::size_t>(s.batch) * ((s.cout + bm - 1) / bm) * ((static_cast<std::size_t>(s.out_length()) + 127) / 128);
}

// The shape limits common to every operand type (nullptr: supported).
const char* shape_limits(const conv1d_dense_shape& s, std::size_t elem_bytes) {
    if (s.batch < 1 || s.cin < 1 || s.cout < 1 || s.length < 1) return "empty shape";
    if (s.stride != 1 && s.stride != 2) return "stride 1 or 2 only";
    // Tile counts and TMA coordinates are 32-bit signed.
    const std::size_t tiles = tile_count(s);
    if (s.batch > 65535) return "batch above 65535";
    if (tiles > static_cast<std::size_t>(INT_MAX) || s.length > INT_MAX - 512 ||
        static_cast<std::size_t>(s.batch) * s.cin > static_cast<std::size_t>(INT_MAX)) {
        return "fewer than 2^31 tiles, positions and batch x C_in rows";
    }
    // TMA: global strides below 2^40 bytes.
    if (static_cast<std::size_t>(s.length) * ck_of(s, elem_bytes) * elem_bytes >= (std::size_t{1} << 40)) {
        return "one batch of x below 2^40 bytes (TMA global strides)";
    }
    return nullptr;
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

template <typename T>
constexpr CUtensorMapDataType tma_type_of() {
    if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    else if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    else return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

// The operand preparation, then the GEMM kernel of configuration P (workspace: Wp, then xt, each
// 256-byte aligned).
template <typename T, int S, typename P, typename Op>
void launch(const void* x, const void* w, const void* bias, void* y, void* workspace, const conv1d_dense_shape& s,
            cudaStream_t stream) {
    constexpr int bk = bk_of<T>;
    constexpr std::size_t eb = sizeof(T);
    const std::size_t ck = ck_of(s, eb);
    T* wp = static_cast<T*>(workspace);
    T* xt = reinterpret_cast<T*>(static_cast<unsigned char*>(workspace) + weights_bytes(s, eb));
    {
        constexpr int tile_c = 8 * 16 / static_cast<int>(eb);
        const int tiles_l = (s.length + prep_tile - 1) / prep_tile;
        const int tiles_c = static_cast<int>((ck + tile_c - 1) / tile_c);
        const long long tiles = static_cast<long long>(tiles_l) * tiles_c * s.batch;
        const std::size_t n_w = 3 * static_cast<std::size_t>(s.cout) * ck;
        const long long pack_blocks = static_cast<long long>(std::min<std::size_t>((n_w + prep_threads - 1) / prep_threads, 4096));
        if (tiles + pack_blocks > INT_MAX) throw std::invalid_argument("conv1d wgmma_tma: too many blocks for the operand preparation");
        const bool vec = s.length % (16 / eb) == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
        auto* prep = vec ? prepare_operands_kernel<T, true, Op> : prepare_operands_kernel<T, false, Op>;
        prep<<<static_cast<unsigned>(tiles + pack_blocks), prep_threads, 0, stream>>>(static_cast<const T*>(x), xt, static_cast<const T*>(w),
                                                                                      wp, s.cin, static_cast<int>(ck), s.length, s.cout,
                                                                                      tiles_l, tiles_c, static_cast<int>(tiles));
        check_launch("conv1d wgmma_tma: x transposition and weight packing");
    }

    CUtensorMap mw, mx;
    {
        const cuuint64_t dims[3] = {ck, static_cast<cuuint64_t>(s.cout), 3};
        const cuuint64_t strides[2] = {ck * eb, static_cast<cuuint64_t>(s.cout) * ck * eb};  // [bytes]
        const cuuint32_t box[3] = {static_cast<cuuint32_t>(bk), bm, 1};
        make_map(&mw, tma_type_of<T>(), wp, dims, strides, box, 1, "packed weights");
    }
    {
        const cuuint64_t dims[3] = {ck, static_cast<cuuint64_t>(s.length), static_cast<cuuint64_t>(s.batch)};
        const cuuint64_t strides[2] = {ck * eb, static_cast<cuuint64_t>(s.length) * ck * eb};  // [bytes]
        // 128 rows at a step of S: the box spans 128 S rows (at most 256, the limit of a box side).
        const cuuint32_t box[3] = {static_cast<cuuint32_t>(bk), static_cast<cuuint32_t>(128 * S), 1};
        make_map(&mx, tma_type_of<T>(), xt, dims, strides, box, S, "x transposed");
    }

    params p;
    p.bias = bias;
    p.y = y;
    p.cout = s.cout;
    p.lout = s.out_length();
    p.chunks = (s.cin + bk - 1) / bk;
    p.m_blocks = (s.cout + bm - 1) / bm;
    p.n_blocks = (p.lout + P::bn - 1) / P::bn;
    p.tiles = s.batch * p.m_blocks * p.n_blocks;
    p.y_pairs = p.lout % 2 == 0 && reinterpret_cast<std::uintptr_t>(y) % (2 * eb) == 0 ? 1 : 0;

    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    auto* kernel = conv1d_wgmma_tma_kernel<T, S, P>;
    check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, P::smem_bytes),
               "cudaFuncSetAttribute(conv1d wgmma_tma shared memory)");
    const int grid = std::min(p.tiles, cached_sm_count(dev));
    kernel<<<grid, threads, P::smem_bytes, stream>>>(mw, mx, p);
    check_launch("conv1d wgmma_tma kernel");
}

// The workspace's alignment, then the device's sm_90a code (what every launcher checks before it
// touches the device); throws std::invalid_argument with `who` in front.
void check_launchable(void* workspace, const char* who) {
    if (workspace == nullptr || reinterpret_cast<std::uintptr_t>(workspace) % 256 != 0) {
        throw std::invalid_argument(std::string(who) + ": needs a 256-byte aligned workspace of its workspace_bytes");
    }
    if (const char* why = sm90a_code.current_device_unsupported()) throw std::invalid_argument(std::string(who) + ": " + why);
}

}  // namespace
}  // namespace conv1d_wgmma
}  // namespace fusebench::kernels
