// Hopper attention forward with FP8 Q K^T (variant `wgmma_fp8qk`, issue 19 item 4). Versus
// wgmma_tma (hopper.cu), the kernel it is derived from:
// - Q and K tiles are E4M3 codes (1 byte per element): Q K^T runs as wgmma m64n128k32 e4m3 x e4m3
//   -> f32, 4 instructions per 128-key tile at head_dim 128 instead of 8 bf16 m64n128k16 ones, on
//   tensor cores with twice the bf16 rate; the K tile is half the bytes (16 KB), so the TMA ring
//   moves 48 KB per tile instead of 64 KB. Should buy: Q K^T at up to twice the rate; P V, the
//   softmax and the epilogue are unchanged, so at most ~1.3x over wgmma_tma end to end.
// - q_scale[b, h] * k_scale[b, h_kv] multiplies the softmax scale (one fp32 multiply per CTA): the
//   scores stay in code units, m and l are tracked there, lse = m * scale_eff + ln(l).
// - No GQA packing (rows of one block would need different Q scales).
// The smem tiles: Q [128 rows][128 bytes] and K [128 keys][128 bytes], one 128-byte swizzle atom
// per row (TMA box 128 x rows of uint8, SWIZZLE_128B), K-major as FP8 wgmma requires; V as in
// wgmma_tma (two 64-column bf16 blocks, MN-major for P V). Device helpers: hopper_device.cuh,
// shared with hopper.cu; the sm_90a gencode for this file: CMakeLists.txt.
#include "kernels/attention/hopper_fp8.hpp"
#include "kernels/attention/flash_mma.cuh"
#include "kernels/attention/hopper.hpp"
#include "kernels/common/launch_check.hpp"
#include "kernels/common/sm90_host.hpp"
#include "kernels/common/workspace.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FUSEBENCH_HOPPER_DEVICE_CODE 1
#include "kernels/attention/hopper_device.cuh"
#include "kernels/attention/hopper_wgmma.cuh"
#endif

namespace fusebench::kernels {
namespace hopper_fp8 {
namespace {

using fa_params = flash::params;
using T = __nv_bfloat16;

template <int D, int BN, int STAGES>
struct fp8_config {
    static constexpr int bm = 128, bn = BN;
    static constexpr int threads = 384;  // warpgroups 0, 1: consumers; warpgroup 2: producer
    static constexpr int q_bytes = bm * D;      // E4M3
    static constexpr int k_bytes = bn * D;      // E4M3
    static constexpr int v_bytes = bn * D * 2;  // bf16
    static constexpr int bar_offset = q_bytes + STAGES * (k_bytes + v_bytes);
    static constexpr int smem_bytes = bar_offset + 8 * (1 + 4 * STAGES) + 1024;
    static_assert(D == 128, "one 128-byte swizzle atom per E4M3 row");
    static_assert(smem_bytes <= 232448, "more than the 227 KB of shared memory a block may have");
    static_assert(k_bytes % 1024 == 0 && v_bytes % 1024 == 0, "stages 1024-byte aligned (swizzle atoms)");
};

template <int D, int BN, int STAGES>
__global__ void __launch_bounds__(384, 1)
    attention_wgmma_fp8qk_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                                 const __grid_constant__ CUtensorMap tm_v, const fa_params p, const float* __restrict__ q_scale,
                                 const float* __restrict__ k_scale) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace hopper;
    using cfg = fp8_config<D, BN, STAGES>;
    constexpr int BM = cfg::bm;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const std::uint32_t sq_addr = base;
    const std::uint32_t sk_addr = base + cfg::q_bytes;
    const std::uint32_t sv_addr = base + cfg::q_bytes + STAGES * cfg::k_bytes;
    const std::uint32_t bar = base + cfg::bar_offset;
    const std::uint32_t full_q = bar;
    auto full_k = [&](int s) { return bar + 8 * (1 + s); };
    auto full_v = [&](int s) { return bar + 8 * (1 + STAGES + s); };
    auto empty_k = [&](int s) { return bar + 8 * (1 + 2 * STAGES + s); };
    auto empty_v = [&](int s) { return bar + 8 * (1 + 3 * STAGES + s); };

    const int tid = threadIdx.x;
    const int split = static_cast<int>(blockIdx.x) % p.splits;
    const int m_blk = p.q_blocks - 1 - static_cast<int>(blockIdx.x) / p.splits;
    const int head = blockIdx.y, b = blockIdx.z;
    const int kv_head = head / p.group;
    const int heads_kv = p.heads_q / p.group;
    const int q0 = m_blk * BM;
    const int off = p.seq_kv - p.seq_q;  // bottom-right causal alignment (never packed here)
    const int q_rows_valid = min(BM, p.seq_q - q0);
    int kv_end = p.seq_kv;
    if (p.causal) kv_end = min(p.seq_kv, q0 + q_rows_valid - 1 + off + 1);
    const int n_all = (kv_end + BN - 1) / BN;
    const int per_split = (n_all + p.splits - 1) / p.splits;
    const int t_begin = min(n_all, split * per_split);
    const int n_tiles = min(n_all, t_begin + per_split) - t_begin;
    const int consumers = q_rows_valid > 64 ? 2 : 1;
    const int bh_q = b * p.heads_q + head, bh_kv = b * heads_kv + kv_head;

    if (tid == 0) {
        mbar_init(full_q, 1);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_k(s), 1);
            mbar_init(full_v(s), 1);
            mbar_init(empty_k(s), 128 * consumers);
            mbar_init(empty_v(s), 128 * consumers);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        fence_proxy_async();
    }
    __syncthreads();

    const int role = __shfl_sync(0xffffffffu, tid / 128, 0);  // 0, 1: consumers; 2: producer (hopper.cu says why)
    if (role == 2) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 256 && n_tiles > 0) {
            mbar_expect_tx(full_q, cfg::q_bytes);
            tma_load_3d(sq_addr, &tm_q, 0, q0, bh_q, full_q);
            for (int t = 0; t < n_tiles; ++t) {
                const int s = t % STAGES;
                const int key0 = (t_begin + t) * BN;
                const std::uint32_t use_parity = ((t / STAGES) & 1) ^ 1;
                if (t >= STAGES) mbar_wait(empty_k(s), use_parity);
                mbar_expect_tx(full_k(s), cfg::k_bytes);
                tma_load_3d(sk_addr + s * cfg::k_bytes, &tm_k, 0, key0, bh_kv, full_k(s));
                if (t >= STAGES) mbar_wait(empty_v(s), use_parity);
                mbar_expect_tx(full_v(s), cfg::v_bytes);
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    tma_load_3d(sv_addr + s * cfg::v_bytes + c * (BN * 128), &tm_v, c * 64, key0, bh_kv, full_v(s));
            }
        }
    } else if (role < consumers) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = role;
    const int lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
    const int r_a = wg * 64 + warp_in_wg * 16 + (lane >> 2);
    const int col_q = (lane & 3) * 2;
    // The scores are in code units: the dequantization scales multiply the softmax scale.
    const float scale_eff = p.scale * (q_scale[bh_q] * k_scale[bh_kv]);
    const float sl2 = scale_eff * 1.4426950408889634f;

    auto issue_s = [&](float (&s)[BN / 2], int j) {
        const std::uint32_t k_st = sk_addr + (j % STAGES) * cfg::k_bytes;
#pragma unroll
        for (int ks = 0; ks < D / 32; ++ks) {  // 32 codes = 32 bytes per k-step along the 128-byte row
            const std::uint64_t da = make_desc(sq_addr + wg * (64 * 128) + ks * 32, 16, 1024);
            const std::uint64_t db = make_desc(k_st + ks * 32, 16, 1024);
            wgmma_fp8_op<BN>::ss(s, da, db, ks > 0 ? 1 : 0);
        }
    };
    auto issue_pv = [&](float (&o)[D / 2], const std::uint32_t (&pa)[BN / 16][4], int j) {
        const std::uint32_t v_st = sv_addr + (j % STAGES) * cfg::v_bytes;
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) wgmma_op<D, false>::rs_tb(o, pa[kk], make_desc(v_st + kk * (16 * 128), BN * 128, 1024), 1);
    };
    auto tile_needs_mask = [&](int g) {
        const int n0 = g * BN;
        return (n0 + BN > p.seq_kv) || (p.causal && n0 + BN - 1 > q0 + off);
    };

    float o_acc[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY};
    float l_run[2] = {0.f, 0.f};

    if (n_tiles > 0) {
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
        const int g = t_begin + j;
        softmax_tile<T, BN>(s, pa, m_run, l_run, alpha, tile_needs_mask(g), g * BN, q0 + r_a, col_q, p.seq_kv, p.causal, off,
                            false, p.seq_q, sl2);
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
    }  // n_tiles > 0

    // Epilogue as wgmma_tma's, with lse = m * scale_eff + ln(l).
    const std::size_t rows_total = static_cast<std::size_t>(p.bh) * p.seq_q;
    const std::size_t row0 = static_cast<std::size_t>(bh_q) * p.seq_q + q0;
    T* go = static_cast<T*>(p.o) + row0 * D;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float l = l_run[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int row = r_a + h * 8;
        if (row >= q_rows_valid) continue;
        if (p.splits > 1) {
            const bool empty = l == 0.f;
            const float inv = empty ? 0.f : 1.f / l;
            const std::size_t prow = static_cast<std::size_t>(split) * rows_total + row0 + row;
            float* po = p.part_o + prow * D;
#pragma unroll
            for (int nb = 0; nb < D / 8; ++nb) {
                *reinterpret_cast<float2*>(po + nb * 8 + col_q) = make_float2(o_acc[nb * 4 + 2 * h] * inv, o_acc[nb * 4 + 2 * h + 1] * inv);
            }
            if ((lane & 3) == 0) p.part_lse[prow] = empty ? -INFINITY : m_run[h] * scale_eff + logf(l);
            continue;
        }
        const float inv = 1.f / l;
#pragma unroll
        for (int nb = 0; nb < D / 8; ++nb) {
            *reinterpret_cast<std::uint32_t*>(go + static_cast<std::size_t>(row) * D + nb * 8 + col_q) =
                pack2<T>(o_acc[nb * 4 + 2 * h] * inv, o_acc[nb * 4 + 2 * h + 1] * inv);
        }
        if ((lane & 3) == 0) p.lse[row0 + row] = m_run[h] * scale_eff + logf(l);
    }
    }  // consumers
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// 3-D tensor map over [bh][seq][d] elements of `bytes` each, box box_inner x rows x 1, 128-byte
// swizzle (box_inner * bytes = 128: one swizzle atom per row); rows past seq are zero-filled.
cudaError_t make_map(CUtensorMap* map, const void* ptr, CUtensorMapDataType type, int bytes, int bh, int seq, int d,
                     int box_inner, int rows) {
    if (sm90::tensor_map_encoder() == nullptr) return cudaErrorNotSupported;
    const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq), static_cast<cuuint64_t>(bh)};
    const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * bytes, static_cast<cuuint64_t>(seq) * d * bytes};  // [bytes]
    const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(rows), 1};
    const CUresult r = sm90::encode_tiled_swizzle128(map, type, 3, ptr, dims, strides, box);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

constexpr int block_rows = 128;

struct plan {
    int splits = 1;
    std::size_t workspace_bytes = 0;
};

plan make_plan(const attention_shape& s, const wgmma_fp8qk_options& opt) {
    int dev = 0, sms = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    check_call(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
    plan pl;
    const long long blocks = static_cast<long long>((s.seq_q + block_rows - 1) / block_rows) * s.heads_q * s.batch;
    const int tiles = (s.seq_kv + opt.bn - 1) / opt.bn;
    pl.splits = opt.split_kv ? wgmma_tma_choose_splits(blocks, tiles, sms) : 1;
    if (pl.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * s.seq_q;
        pl.workspace_bytes = align256(pl.splits * rows * s.head_dim * sizeof(float)) + align256(pl.splits * rows * sizeof(float));
    }
    return pl;
}

template <int D, int BN, int STAGES>
void launch_config(const attention_shape& s, const plan& pl, const std::uint8_t* q, const float* q_scale, const std::uint8_t* k,
                   const float* k_scale, const void* v, void* o, float* lse, void* workspace, cudaStream_t stream) {
    using cfg = fp8_config<D, BN, STAGES>;
    static_assert(cfg::bm == block_rows, "the plan counts blocks of block_rows rows");
    fa_params p = flash::make_params(s, q, k, v, o, lse);
    p.q_blocks = (p.seq_q + cfg::bm - 1) / cfg::bm;
    p.bh = s.batch * p.heads_q;
    if (pl.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        p.splits = pl.splits;
        p.part_o = static_cast<float*>(workspace);
        p.part_lse = reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + align256(pl.splits * rows * D * sizeof(float)));
    }
    const int bh_kv = s.batch * s.heads_kv;
    CUtensorMap mq, mk, mv;
    check_call(make_map(&mq, q, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.bh, p.seq_q, D, 128, cfg::bm), "cuTensorMapEncodeTiled(Q e4m3)");
    check_call(make_map(&mk, k, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, bh_kv, s.seq_kv, D, 128, BN), "cuTensorMapEncodeTiled(K e4m3)");
    check_call(make_map(&mv, v, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, bh_kv, s.seq_kv, D, 64, BN), "cuTensorMapEncodeTiled(V)");
    check_call(cudaFuncSetAttribute(attention_wgmma_fp8qk_kernel<D, BN, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    cfg::smem_bytes),
               "cudaFuncSetAttribute(attention wgmma_fp8qk shared memory)");
    const dim3 grid(static_cast<unsigned>(p.q_blocks * p.splits), static_cast<unsigned>(p.heads_q), static_cast<unsigned>(s.batch));
    attention_wgmma_fp8qk_kernel<D, BN, STAGES><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(mq, mk, mv, p, q_scale, k_scale);
    check_launch("attention wgmma_fp8qk kernel");
    if (p.splits > 1) {
        const std::size_t rows = static_cast<std::size_t>(p.bh) * p.seq_q;
        flash::combine_splits<T, D><<<static_cast<unsigned>((rows + 7) / 8), 256, 0, stream>>>(p);
        check_launch("attention wgmma_fp8qk split merge");
    }
}

}  // namespace
}  // namespace hopper_fp8

const char* attention_wgmma_fp8qk_unsupported(const attention_shape& s, elem type, const wgmma_fp8qk_options& opt) {
    if (type != elem::bf16) return "bf16 V and O only";
    if (s.head_dim != 128) return "head_dim 128 only (an E4M3 row of 64 needs the 64-byte swizzle, not written yet)";
    if (opt.bn != 128 || (opt.stages != 2 && opt.stages != 3)) return "(bn, stages) must be (128, 2) or (128, 3)";
    // The device checks (compute capability 9.0, the loader picked the sm_90a code) are wgmma_tma's:
    // this file is built with the same gencode flags.
    return attention_wgmma_tma_unsupported(s, type);
}

std::size_t attention_wgmma_fp8qk_workspace_bytes(const attention_shape& s, elem type, const wgmma_fp8qk_options& opt) {
    validate_attention_shape(s, type);
    if (const char* why = attention_wgmma_fp8qk_unsupported(s, type, opt)) {
        throw std::invalid_argument(std::string("attention wgmma_fp8qk: ") + why);
    }
    return hopper_fp8::make_plan(s, opt).workspace_bytes;
}

void launch_attention_wgmma_fp8qk(const attention_shape& s, const std::uint8_t* q, const float* q_scale, const std::uint8_t* k,
                                  const float* k_scale, const void* v, void* o, float* lse, void* workspace,
                                  std::size_t workspace_bytes, cudaStream_t stream, const wgmma_fp8qk_options& opt) {
    validate_attention_shape(s, elem::bf16);
    if (const char* why = attention_wgmma_fp8qk_unsupported(s, elem::bf16, opt)) {
        throw std::invalid_argument(std::string("attention wgmma_fp8qk: ") + why);
    }
    const hopper_fp8::plan pl = hopper_fp8::make_plan(s, opt);
    if (pl.splits > 1 && (workspace == nullptr || workspace_bytes < pl.workspace_bytes)) {
        throw std::invalid_argument("attention wgmma_fp8qk: this shape splits the keys " + std::to_string(pl.splits) +
                                    " ways and needs a workspace of " + std::to_string(pl.workspace_bytes) + " bytes, got " +
                                    std::to_string(workspace == nullptr ? 0 : workspace_bytes));
    }
    if (opt.stages == 2) hopper_fp8::launch_config<128, 128, 2>(s, pl, q, q_scale, k, k_scale, v, o, lse, workspace, stream);
    else hopper_fp8::launch_config<128, 128, 3>(s, pl, q, q_scale, k, k_scale, v, o, lse, workspace, stream);
}

}  // namespace fusebench::kernels
