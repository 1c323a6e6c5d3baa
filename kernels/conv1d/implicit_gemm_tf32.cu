// Dense conv1d (kernel 3, padding 1, stride 1 or 2) + bias + GELU on fp32 tensors through TF32
// tensor cores. TF32, not fp32-exact: x and w are rounded to TF32 (tf32_rna in naive.cuh) before
// they are multiplied; products and sums are fp32; the bias is added in fp32, unrounded. Its
// same-precision baseline, naive_tf32, is conv1d.cu's dense naive pipeline with the operands so
// rounded (launch_conv1d_dense_naive_tf32).
//
// - implicit_gemm_tf32: implicit_gemm.cu's implicit GEMM (the shared parts in implicit_gemm.cuh:
//   tiles, weight packing, chunk loop, epilogue, launch) with fp32 operands in shared memory and
//   mma.sync m16n8k8 .tf32 (fp32 accumulation). Same byte geometry as the 16-bit kernel: 16 fp32
//   channels per K chunk (64 bytes a row, the 16-bit kernel's 32 channels), 80-byte pitch, so
//   ldmatrix on 32-bit words gives the TF32 fragments conflict-free (a b16 8 x 8 matrix row is four
//   fp32 words). Rounding happens once per element on its way into shared memory: the weight packing
//   kernel rounds Wp, the x staging rounds as it transposes. The tensor cores' own sum is not IEEE
//   (it truncates; Fasi et al. 2021, Khattak and Mikaitis 2025), so each tap's two k-steps (16
//   products) start from a zero accumulator and are added to the running fp32 sum by an IEEE add:
//   the truncating chain is 2 instructions long instead of 3 C_in / 8 (a CPU emulation of a
//   truncating 8-term block sum put the chained form's max error at 2x the naive baseline's at
//   C_in = 512 and the split form's at 0.25x).
#include "kernels/conv1d/implicit_gemm.cuh"
#include "kernels/conv1d/naive.cuh"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusebench::kernels {

namespace {

__global__ void round_tf32_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        y[i] = tf32_rna(x[i]);
}

// ------------------------------------------------------------------ implicit_gemm_tf32
constexpr int tg_ci = ig_tile<float>::ci;        // input channels per K chunk (K = 3 x 16 per chunk)
constexpr int tg_pitch = ig_tile<float>::pitch;  // shared row pitch [floats]: 80 bytes, conflict-free ldmatrix
static_assert(tg_ci == 16 && tg_pitch == 20, "fp32 tile geometry");

// d = a b + c on TF32 operands (already rounded: the tensor core reads their 19 high bits).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1,
                                         const float (&c)[4]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// One block: 128 output channels x 128 positions of one batch, two shared-memory stages (the next
// chunk's weights by cp.async, its inputs through registers, while the current chunk multiplies).
// VEC: 16-byte loads of x (length % 4 == 0, x 16-byte aligned).
template <int S, bool VEC>
__global__ void __launch_bounds__(ig_threads, 2)
    tg_conv_gelu(const float* __restrict__ x, const float* __restrict__ wp, const float* __restrict__ bias, float* __restrict__ y,
                 int cin, int cout, int length, int lout, int k_pad, int m_pad, bool y_pairs) {
    using G = ig_geometry<float, S>;
    extern __shared__ __align__(16) unsigned char tg_smem[];
    float* smem = reinterpret_cast<float*>(tg_smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp & 1, wn = warp >> 1;
    const int m0 = blockIdx.x * ig_bm, t0 = blockIdx.y * ig_bn, b = blockIdx.z;
    const int p_first = t0 * S - 1;        // input position of window offset q = 0
    const int g_first = (t0 * S) / 4 - 1;  // first 4-position group loaded (t0 s is a multiple of 4)
    const float* xb = x + static_cast<std::size_t>(b) * cin * length;
    const int chunks = k_pad / tg_ci;

    auto a_stage = [&](int st) { return smem + st * G::stage_elems; };
    auto x_stage = [&](int st) { return smem + st * G::stage_elems + G::a_elems; };

    auto load_a = [&](int st, int chunk) { ig_load_a(a_stage(st), wp, tid, m0, m_pad, k_pad, chunk); };

    // x staging: item = pair * 16 + channel; each lane reads 32 contiguous bytes of its row.
    float4 xr[G::x_iters][2];
    auto load_x = [&](int chunk) {
        const int ci0 = chunk * tg_ci;
#pragma unroll
        for (int it = 0; it < G::x_iters; ++it) {
            const int item = tid + it * ig_threads;
            const int c = item % tg_ci, pair = item / tg_ci;
            const int ci = ci0 + c;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                const int g = g_first + 2 * pair + h;
                if (item < G::x_items && ci < cin) {
                    const float* row = xb + static_cast<std::size_t>(ci) * length;
                    if (VEC) {
                        if (g >= 0 && 4 * g + 4 <= length) v = *reinterpret_cast<const float4*>(row + 4 * g);
                    } else {
                        const int p = 4 * g;
                        v.x = p >= 0 && p < length ? row[p] : 0.f;
                        v.y = p + 1 >= 0 && p + 1 < length ? row[p + 1] : 0.f;
                        v.z = p + 2 >= 0 && p + 2 < length ? row[p + 2] : 0.f;
                        v.w = p + 3 >= 0 && p + 3 < length ? row[p + 3] : 0.f;
                    }
                }
                xr[it][h] = v;
            }
        }
    };
    auto store_x = [&](int st) {
        float* xs = x_stage(st);
#pragma unroll
        for (int it = 0; it < G::x_iters; ++it) {
            const int item = tid + it * ig_threads;
            if (item >= G::x_items) continue;
            const int c = item % tg_ci, pair = item / tg_ci;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int g = g_first + 2 * pair + h;
                const float e4[4] = {xr[it][h].x, xr[it][h].y, xr[it][h].z, xr[it][h].w};
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int q = 4 * g + e - p_first;
                    if (q >= 0 && q < ig_bn * S + 2) xs[((q % S) * G::x_rows + q / S) * tg_pitch + c] = tf32_rna(e4[e]);
                }
            }
        }
    };

    float acc[4][4][4] = {};
    const float zero4[4] = {0.f, 0.f, 0.f, 0.f};

    // ldmatrix on 32-bit words: a b16 8 x 8 matrix is 8 rows of 4 fp32 words; lane l receives word
    // l % 4 of row l / 4. A (m16 x k8, K-contiguous rows): matrices (rows 0-7 | 8-15) x (k 0-3 | 4-7)
    // in a0..a3 order. B (k8 x n8 as [n][k] rows): (n-tile j, k 0-3), (j, k 4-7), (j + 1, k 0-3), (j + 1, k 4-7).
    const int a_row = wm * 64 + (lane & 15), a_k = (lane >> 4) * 4;
    const int b_n = wn * 32 + (lane >> 4) * 8 + (lane & 7), b_k = ((lane >> 3) & 1) * 4;

    auto compute = [&](int st) {
        const float* as = a_stage(st);
        const float* xs = x_stage(st);
#pragma unroll
        for (int tap = 0; tap < 3; ++tap) {
            std::uint32_t bf[2][4][2];
#pragma unroll
            for (int ks = 0; ks < 2; ++ks) {
#pragma unroll
                for (int jp = 0; jp < 2; ++jp) {
                    const int q = (b_n + jp * 16) * S + tap;
                    std::uint32_t r[4];
                    ldsm_x4(r, smem_u32(xs + ((q % S) * G::x_rows + q / S) * tg_pitch + ks * 8 + b_k));
                    bf[ks][2 * jp][0] = r[0];
                    bf[ks][2 * jp][1] = r[1];
                    bf[ks][2 * jp + 1][0] = r[2];
                    bf[ks][2 * jp + 1][1] = r[3];
                }
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                std::uint32_t af[2][4];
#pragma unroll
                for (int ks = 0; ks < 2; ++ks) ldsm_x4(af[ks], smem_u32(as + (tap * ig_bm + a_row + i * 16) * tg_pitch + ks * 8 + a_k));
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    // This tap's 16 products from zero in the tensor core, then one IEEE add per element.
                    float part[4];
                    mma_tf32(part, af[0], bf[0][j][0], bf[0][j][1], zero4);
                    mma_tf32(part, af[1], bf[1][j][0], bf[1][j][1], part);
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] += part[e];
                }
            }
        }
    };

    ig_chunk_loop(chunks, load_a, load_x, store_x, compute);
    ig_epilogue(acc, bias, y, cout, lout, m0, t0, b, wm, wn, lane, y_pairs);
}

template <int S>
void launch_tg(const float* x, const float* w, const float* bias, float* y, void* workspace, const conv1d_dense_shape& s,
               cudaStream_t stream) {
    ig_launch<float, S, tf32_operand>(tg_conv_gelu<S, true>, tg_conv_gelu<S, false>, x, w, bias, y, workspace, s, stream,
                                      "conv1d implicit GEMM TF32");
}

}  // namespace

void launch_round_tf32(const float* x, float* y, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    round_tf32_kernel<<<grid_for(n, 256), 256, 0, stream>>>(x, y, n);
    check_launch("round to TF32");
}

const char* conv1d_dense_implicit_gemm_tf32_unsupported(const conv1d_dense_shape& s) {
    return ig_grid_unsupported(s);
}

std::size_t conv1d_dense_implicit_gemm_tf32_workspace_bytes(const conv1d_dense_shape& s) {
    return ig_workspace_bytes<float>(s);
}

void launch_conv1d_dense_implicit_gemm_tf32(const float* x, const float* w, const float* bias, float* y, void* workspace,
                                            const conv1d_dense_shape& s, cudaStream_t stream) {
    ig_check_shape(s, "conv1d implicit GEMM TF32");
    if (const char* why = conv1d_dense_implicit_gemm_tf32_unsupported(s))
        throw std::invalid_argument(std::string("conv1d implicit GEMM TF32: ") + why);
    if (workspace == nullptr || reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0)
        throw std::invalid_argument("conv1d implicit GEMM TF32: needs a 16-byte aligned workspace for the packed weights");
    if (s.stride == 1) launch_tg<1>(x, w, bias, y, workspace, s, stream);
    else launch_tg<2>(x, w, bias, y, workspace, s, stream);
}

}  // namespace fusebench::kernels
