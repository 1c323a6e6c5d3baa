// Dense conv1d (kernel 3, padding 1, stride 1 or 2) + bias + GELU as an implicit GEMM on the tensor
// cores (mma.sync m16n8k16, bf16 / fp16 inputs, fp32 accumulation).
//
// GEMM view, per batch: M = C_out, N = L_out, K = 3 C_in, ordered tap-major inside each chunk of 32
// input channels, so that every tap is a plain GEMM step against a shifted view of the same input
// tile:  Y[o, t] = sum_tap sum_ci W[o, ci, tap] X[ci, t s + tap - 1].
// - A (weights): repacked once per call by a small kernel into Wp[tap][M_pad][K_pad] (K-contiguous
//   per tap, zero padding to the tile grid), then loaded with cp.async and read with ldmatrix.
// - B (inputs): the tile of x for 32 channels and the positions the block needs is transposed on
//   its way into shared memory to X[plane][row][ci] (channels contiguous). ldmatrix takes one row
//   address per lane, so the im2col gather of every tap and both strides is only an address: output
//   position n of tap k reads window offset q = n s + k, stored at plane q % s, row q / s (strided
//   positions de-interleaved into s planes keep the 8 rows of an ldmatrix consecutive, hence
//   conflict-free at an 80-byte pitch).
// - Epilogue: bias + GELU (erf) in fp32, rounded once to the storage type.
#include "kernels/conv1d/implicit_gemm.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {

namespace {

constexpr int ig_ci = ig_tile<__half>::ci;        // input channels per K chunk (K = 3 x 32 per chunk)
constexpr int ig_pitch = ig_tile<__half>::pitch;  // shared row pitch [elements]: 80 bytes, conflict-free ldmatrix
static_assert(ig_ci == 32 && ig_pitch == 40 && ig_tile<__nv_bfloat16>::ci == ig_ci, "16-bit tile geometry");

template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1);
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                          std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One block: 128 output channels x 128 positions of one batch. Two shared-memory stages: the next
// chunk's weights arrive by cp.async and its inputs through registers while the current chunk is
// multiplied. VEC: 16-byte loads of x (rows on the 16-byte grid: length % 8 == 0, aligned x).
template <typename T, int S, bool VEC>
__global__ void __launch_bounds__(ig_threads, 2)
    ig_conv_gelu(const T* __restrict__ x, const T* __restrict__ wp, const T* __restrict__ bias, T* __restrict__ y, int cin,
                 int cout, int length, int lout, int k_pad, int m_pad, bool y_pairs) {
    using G = ig_geometry<T, S>;
    extern __shared__ __align__(16) unsigned char ig_smem[];
    T* smem = reinterpret_cast<T*>(ig_smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp & 1, wn = warp >> 1;
    const int m0 = blockIdx.x * ig_bm, t0 = blockIdx.y * ig_bn, b = blockIdx.z;
    const int p_first = t0 * S - 1;        // input position of window offset q = 0
    const int g_first = (t0 * S) / 8 - 1;  // first 8-position group loaded (t0 s is a multiple of 8)
    const T* xb = x + static_cast<std::size_t>(b) * cin * length;
    const int chunks = k_pad / ig_ci;

    auto a_stage = [&](int st) { return smem + st * G::stage_elems; };
    auto x_stage = [&](int st) { return smem + st * G::stage_elems + G::a_elems; };

    auto load_a = [&](int st, int chunk) { ig_load_a(a_stage(st), wp, tid, m0, m_pad, k_pad, chunk); };

    // x staging: item = pair * 32 + channel, so a warp's lanes are 32 channels (conflict-free
    // transposed stores) and each lane reads 32 contiguous bytes (one sector) of its row.
    uint4 xr[G::x_iters][2];
    auto load_x = [&](int chunk) {
        const int ci0 = chunk * ig_ci;
#pragma unroll
        for (int it = 0; it < G::x_iters; ++it) {
            const int item = tid + it * ig_threads;
            const int c = item % ig_ci, pair = item / ig_ci;
            const int ci = ci0 + c;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                uint4 v = make_uint4(0, 0, 0, 0);
                const int g = g_first + 2 * pair + h;
                if (item < G::x_items && ci < cin) {
                    const T* row = xb + static_cast<std::size_t>(ci) * length;
                    if (VEC) {
                        if (g >= 0 && 8 * g + 8 <= length) v = *reinterpret_cast<const uint4*>(row + 8 * g);
                    } else {
                        T e8[8];
#pragma unroll
                        for (int e = 0; e < 8; ++e) {
                            const int p = 8 * g + e;
                            e8[e] = p >= 0 && p < length ? row[p] : from_f32<T>(0.0f);
                        }
                        v = *reinterpret_cast<const uint4*>(e8);
                    }
                }
                xr[it][h] = v;
            }
        }
    };
    auto store_x = [&](int st) {
        T* xs = x_stage(st);
#pragma unroll
        for (int it = 0; it < G::x_iters; ++it) {
            const int item = tid + it * ig_threads;
            if (item >= G::x_items) continue;
            const int c = item % ig_ci, pair = item / ig_ci;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int g = g_first + 2 * pair + h;
                const T* e8 = reinterpret_cast<const T*>(&xr[it][h]);
#pragma unroll
                for (int e = 0; e < 8; ++e) {
                    const int q = 8 * g + e - p_first;
                    if (q >= 0 && q < ig_bn * S + 2) xs[((q % S) * G::x_rows + q / S) * ig_pitch + c] = e8[e];
                }
            }
        }
    };

    float acc[4][4][4] = {};

    // Per-lane ldmatrix offsets. A: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15) in a0..a3 order.
    const int a_row = wm * 64 + (lane & 15), a_k = (lane >> 4) * 8;
    // B: matrices (n-tile j, k 0-7), (j, k 8-15), (j + 1, k 0-7), (j + 1, k 8-15).
    const int b_n = wn * 32 + (lane >> 4) * 8 + (lane & 7), b_k = ((lane >> 3) & 1) * 8;

    auto compute = [&](int st) {
        const T* as = a_stage(st);
        const T* xs = x_stage(st);
#pragma unroll
        for (int tap = 0; tap < 3; ++tap) {
#pragma unroll
            for (int kk = 0; kk < ig_ci; kk += 16) {
                std::uint32_t af[4][4], bf[4][2];
#pragma unroll
                for (int i = 0; i < 4; ++i) ldsm_x4(af[i], smem_u32(as + (tap * ig_bm + a_row + i * 16) * ig_pitch + kk + a_k));
#pragma unroll
                for (int jp = 0; jp < 2; ++jp) {
                    const int q = (b_n + jp * 16) * S + tap;
                    std::uint32_t r[4];
                    ldsm_x4(r, smem_u32(xs + ((q % S) * G::x_rows + q / S) * ig_pitch + kk + b_k));
                    bf[2 * jp][0] = r[0];
                    bf[2 * jp][1] = r[1];
                    bf[2 * jp + 1][0] = r[2];
                    bf[2 * jp + 1][1] = r[3];
                }
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) mma_16816<T>(acc[i][j], af[i], bf[j][0], bf[j][1]);
            }
        }
    };

    ig_chunk_loop(chunks, load_a, load_x, store_x, compute);
    ig_epilogue(acc, bias, y, cout, lout, m0, t0, b, wm, wn, lane, y_pairs);
}

template <typename T, int S>
void launch_ig(const void* x, const void* w, const void* bias, void* y, void* workspace, const conv1d_dense_shape& s,
               cudaStream_t stream) {
    ig_launch<T, S, ig_as_is>(ig_conv_gelu<T, S, true>, ig_conv_gelu<T, S, false>, static_cast<const T*>(x), static_cast<const T*>(w),
                              static_cast<const T*>(bias), static_cast<T*>(y), workspace, s, stream, "conv1d implicit GEMM");
}

}  // namespace

const char* conv1d_dense_implicit_gemm_unsupported(elem t, const conv1d_dense_shape& s) {
    if (t == elem::f32) return "tensor-core implicit GEMM takes bf16 or fp16 (fp32 keeps the direct kernel: no TF32)";
    return ig_grid_unsupported(s);
}

std::size_t conv1d_dense_implicit_gemm_workspace_bytes(elem t, const conv1d_dense_shape& s) {
    const std::size_t es = t == elem::f32 ? 4 : 2;
    return static_cast<std::size_t>(3) * round_up(s.cout, ig_bm) * round_up(s.cin, ig_ci) * es;
}

void launch_conv1d_dense_implicit_gemm(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                                       const conv1d_dense_shape& s, cudaStream_t stream) {
    ig_check_shape(s, "conv1d implicit GEMM");
    if (const char* why = conv1d_dense_implicit_gemm_unsupported(t, s)) throw std::invalid_argument(std::string("conv1d implicit GEMM: ") + why);
    if (workspace == nullptr || reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0)
        throw std::invalid_argument("conv1d implicit GEMM: needs a 16-byte aligned workspace for the packed weights");
    if (t == elem::bf16) {
        if (s.stride == 1) launch_ig<__nv_bfloat16, 1>(x, w, bias, y, workspace, s, stream);
        else launch_ig<__nv_bfloat16, 2>(x, w, bias, y, workspace, s, stream);
    } else {
        if (s.stride == 1) launch_ig<__half, 1>(x, w, bias, y, workspace, s, stream);
        else launch_ig<__half, 2>(x, w, bias, y, workspace, s, stream);
    }
}

}  // namespace fusebench::kernels
