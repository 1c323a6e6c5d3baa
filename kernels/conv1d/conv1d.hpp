// conv1d kernels (semantics: references/conv1d_reference.hpp). Layout [batch, channels, length];
// x, w, bias, y and states in one storage type (fp32, bf16, fp16); accumulation in fp32.
// Launchers validate sizes (std::invalid_argument), enqueue on `stream` and check the launch.
#pragma once

#include "kernels/common/elem.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fusebench::kernels {

struct conv1d_dense_shape {
    int batch = 1, cin = 1, cout = 1, length = 1, stride = 1;  // kernel 3, padding 1
    int out_length() const { return (length - 1) / stride + 1; }
};
struct conv1d_depthwise_shape {
    int batch = 1, channels = 1, length = 1, width = 4;  // causal, width 2..4
};

// Unfused baseline: convolution to an fp32 workspace, bias added in place, then the activation
// written in the storage type (three kernels). Workspace: batch * cout * out_length floats.
std::size_t conv1d_dense_naive_workspace_bytes(const conv1d_dense_shape& s);
void launch_conv1d_dense_naive(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                               const conv1d_dense_shape& s, cudaStream_t stream);
// Fused direct convolution: 64 output channels x 64 positions per block from shared-memory tiles
// of x and w, bias and GELU in the epilogue.
void launch_conv1d_dense_direct(elem t, const void* x, const void* w, const void* bias, void* y,
                                const conv1d_dense_shape& s, cudaStream_t stream);

// Fused implicit GEMM on the tensor cores (kernels/conv1d/implicit_gemm.cu): bf16 / fp16 only,
// fp32 accumulation (mma.sync m16n8k16), bias and GELU in the epilogue. Any sizes (ragged tiles
// are masked). Workspace: the weights repacked tap-major and padded to the tile grid, written by a
// first kernel of every call. unsupported(): nullptr when the case runs, else why not.
const char* conv1d_dense_implicit_gemm_unsupported(elem t, const conv1d_dense_shape& s);
std::size_t conv1d_dense_implicit_gemm_workspace_bytes(elem t, const conv1d_dense_shape& s);
void launch_conv1d_dense_implicit_gemm(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                                       const conv1d_dense_shape& s, cudaStream_t stream);

// TF32 on fp32 tensors (kernels/conv1d/implicit_gemm_tf32.cu; naive_tf32 in conv1d.cu): TF32, not fp32-exact. x and w are
// rounded to TF32 (cvt.rna.tf32.f32: 10 mantissa bits, nearest, ties away) before they are
// multiplied; products and sums in fp32, the bias added unrounded in fp32.
// round_tf32: y[i] = that rounding of x[i] (for tests of the rounding against its host model).
void launch_round_tf32(const float* x, float* y, std::size_t n, cudaStream_t stream);
// The TF32 variants' same-precision baseline: the naive pipeline (convolution to an fp32 workspace
// with rounded operands, bias, GELU: three kernels). Workspace: batch * cout * out_length floats.
std::size_t conv1d_dense_naive_tf32_workspace_bytes(const conv1d_dense_shape& s);
void launch_conv1d_dense_naive_tf32(const float* x, const float* w, const float* bias, float* y, void* workspace,
                                    const conv1d_dense_shape& s, cudaStream_t stream);
// The implicit GEMM on TF32 tensor cores (mma.sync m16n8k8, sm_80+): implicit_gemm's structure with
// fp32 operands in shared memory, each tap's 16 products summed from zero in the tensor core and
// added to the fp32 accumulator. Any sizes, stride 1 or 2. Workspace: the rounded weights repacked
// tap-major, Wp[3][C_out rounded to 128][C_in rounded to 16] floats, written by a first kernel.
const char* conv1d_dense_implicit_gemm_tf32_unsupported(const conv1d_dense_shape& s);
std::size_t conv1d_dense_implicit_gemm_tf32_workspace_bytes(const conv1d_dense_shape& s);
void launch_conv1d_dense_implicit_gemm_tf32(const float* x, const float* w, const float* bias, float* y, void* workspace,
                                            const conv1d_dense_shape& s, cudaStream_t stream);

// Fused Hopper variant (kernels/conv1d/wgmma_tma.cu): sm_90a only (H100 / H200; the loader must
// pick this build's sm_90a code), bf16 / fp16, fp32 accumulation. Three accumulated GEMMs, one per
// tap, by wgmma from TMA-loaded tiles; bias and GELU in the epilogue. Workspace: the weights
// repacked tap-major and x transposed to [batch][L][C_in rounded up to 8] (one kernel before the
// GEMMs in every call), so that TMA can shift a box by a tap and stride it by the convolution's stride.
// shape_unsupported(): the shape's part only (no device query); unsupported(): also the device.
const char* conv1d_dense_wgmma_tma_shape_unsupported(elem t, const conv1d_dense_shape& s);
const char* conv1d_dense_wgmma_tma_unsupported(elem t, const conv1d_dense_shape& s);
std::size_t conv1d_dense_wgmma_tma_workspace_bytes(elem t, const conv1d_dense_shape& s);
// The part of that workspace holding the transposed copy of x [bytes].
std::size_t conv1d_dense_wgmma_tma_xt_bytes(const conv1d_dense_shape& s);
// cooperative: both consumer warpgroups on each 128 x 128 tile (64 channels each); pingpong: they
// take alternate tiles (128 channels each), one's epilogue under the other's main loop; automatic
// (the default): conv1d_wgmma_schedule_for's choice.
enum class conv1d_wgmma_schedule { cooperative, pingpong, automatic };
// pingpong where every CTA of the persistent grid (min(tiles, SMs) CTAs) has two tiles to alternate
// and the main loop is long enough for an epilogue to hide under (tiles >= 2 x sm_count and
// C_in >= 256; tiles = batch x ceil(C_out / 128) x ceil(L_out / 128)), else cooperative. Measured on
// an H200 over the Whisper shapes in bf16 and fp16 (kernels/conv1d/NOTES.md): pingpong 12-15% faster
// at C -> C with b8 / b16, coop 15-33% faster at b1 (one tile a CTA: one warpgroup idle), within
// +-2.4% either way at C_in = 80.
conv1d_wgmma_schedule conv1d_wgmma_schedule_for(const conv1d_dense_shape& s, int sm_count);
void launch_conv1d_dense_wgmma_tma(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                                   const conv1d_dense_shape& s, cudaStream_t stream,
                                   conv1d_wgmma_schedule schedule = conv1d_wgmma_schedule::automatic);

// TF32 on Hopper (kernels/conv1d/wgmma_tma_tf32.cu): wgmma_tma's pipeline on fp32 tensors, sm_90a
// only. TF32, not fp32-exact (as implicit_gemm_tf32): x and w rounded to TF32 by the operand
// preparation, wgmma.mma_async m64nNk8 .tf32 from TMA-loaded shared memory, fp32 accumulation;
// bias and GELU in the epilogue. Workspace: the rounded weights Wp[3][C_out][C_in rounded up to 4]
// and x transposed to [batch][L][C_in rounded up to 4], fp32, written by a first kernel of every call.
// Configurations (report keys in the suite), both 128 x 128 tiles and 6 stages: split_chunk
// (default): each 32-channel chunk's 96 products (3 taps, 12 chained k8 instructions) summed from
// zero in a partial register accumulator and added to the fp32 sum by IEEE adds; split: the same
// per stage (32 products, 4 instructions): less error, 4-12 % slower at 512 channels.
enum class conv1d_wgmma_tf32_config { split_chunk, split };
const char* conv1d_dense_wgmma_tma_tf32_shape_unsupported(const conv1d_dense_shape& s);
const char* conv1d_dense_wgmma_tma_tf32_unsupported(const conv1d_dense_shape& s);
std::size_t conv1d_dense_wgmma_tma_tf32_workspace_bytes(const conv1d_dense_shape& s);
// The part of that workspace holding the transposed copy of x [bytes].
std::size_t conv1d_dense_wgmma_tma_tf32_xt_bytes(const conv1d_dense_shape& s);
void launch_conv1d_dense_wgmma_tma_tf32(const float* x, const float* w, const float* bias, float* y, void* workspace,
                                        const conv1d_dense_shape& s, cudaStream_t stream,
                                        conv1d_wgmma_tf32_config cfg = conv1d_wgmma_tf32_config::split_chunk);

// y = gelu_erf(z + bias[channel]) over [batch, cout, lout]: the epilogue for a library convolution
// that cannot fuse it (the cuDNN peer). z is fp32 when z_f32, else in the storage type t.
void launch_conv1d_bias_gelu(elem t, const void* z, bool z_f32, const void* bias, void* y, int batch, int cout, int lout,
                             cudaStream_t stream);

// Depthwise causal conv1d + bias + SiLU. Naive: three kernels through an fp32 workspace of
// batch * channels * length floats. Fused: one pass; rows of whole 16-byte vectors (length a
// multiple of 4 fp32 / 8 bf16, fp16 elements, 16-byte aligned x and y) by blocks that each stream
// one contiguous stretch of a row, 16-byte loads in flight per thread (two for fp32, one for bf16 /
// fp16), the width - 1 earlier inputs from the neighbouring lane by a warp shuffle; other rows 8
// outputs per thread by scalar loads. bf16 / fp16 outputs take a fast SiLU (conv1d.cu, silu_log2e).
std::size_t conv1d_depthwise_naive_workspace_bytes(const conv1d_depthwise_shape& s);
void launch_conv1d_depthwise_naive(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                                   const conv1d_depthwise_shape& s, cudaStream_t stream);
void launch_conv1d_depthwise_fused(elem t, const void* x, const void* w, const void* bias, void* y,
                                   const conv1d_depthwise_shape& s, cudaStream_t stream);

// Decode step (length ignored): x [batch, channels], state / state_out [batch, channels, width-1].
// Naive: convolution to an fp32 workspace (batch * channels floats), bias + SiLU, state shift.
std::size_t conv1d_decode_naive_workspace_bytes(const conv1d_depthwise_shape& s);
void launch_conv1d_decode_naive(elem t, const void* x, const void* state, const void* w, const void* bias, void* y,
                                void* state_out, void* workspace, const conv1d_depthwise_shape& s, cudaStream_t stream);
void launch_conv1d_decode_fused(elem t, const void* x, const void* state, const void* w, const void* bias, void* y,
                                void* state_out, const conv1d_depthwise_shape& s, cudaStream_t stream);

}  // namespace fusebench::kernels
