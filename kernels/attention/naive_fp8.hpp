// The unfused FP8 attention baseline (variant `naive_fp8` of the attention_fp8 suite): the naive
// path (attention.hpp) with the scores GEMM on the E4M3 tensor cores. Q and K arrive as
// wgmma_fp8qk takes them (hopper_fp8.hpp): E4M3 codes in the layout [batch, heads, seq, head_dim]
// with one fp32 scale per (batch, head), Q = q_scale[b, h] * e4m3(q), K = k_scale[b, h_kv] * e4m3(k).
//   1. S = scale * q_scale * k_scale * (q codes) (k codes)^T, fp32, per (batch, q head): one
//      cuBLASLt matmul, E4M3 x E4M3 -> fp32 in code units with CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1
//      (the tensor cores' own reduced-precision accumulation, no periodic promotion to fp32: the
//      accumulator wgmma_fp8qk's m64n128k32 e4m3 wgmma uses), then a pass multiplying each head's
//      scores by scale_eff = scale * q_scale * k_scale (exact: the scales are powers of two), as
//      wgmma_fp8qk folds it into its softmax (cuBLASLt 13.1 rejected the per-tensor scale pointers
//      for this matmul on an H100: see naive.cu). The keys are rounded up to 16 in the GEMM (K
//      staged with zero rows where seq_kv is not a multiple);
//   2. P = softmax(S + mask) in bf16 and the lse, and 3. O = P V in bf16 (cuBLAS, fp32
//      accumulation): the naive kernels themselves.
// Its error is what the same arithmetic costs without fusion: the same-precision baseline of
// wgmma_fp8qk (a bf16 baseline, whose scores are fp32-accumulated, would hold the FP8 kernel to an
// accumulator it does not have). V and O bf16 only.
#pragma once

#include "kernels/attention/attention.hpp"

#include <cstddef>
#include <cstdint>

namespace fusebench::kernels {

// nullptr where supported, else the reason: a shape validate_attention_shape rejects, an element
// type other than bf16, head_dim not a multiple of 16 (cuBLASLt's FP8 operands need 16-byte
// leading dimensions), no CUDA device, or no cuBLASLt algorithm for the per-head scores GEMM
// (the reason names cuBLASLt's version and status). Asks cuBLASLt once per shape and device.
const char* attention_naive_fp8_unsupported(const attention_shape& s, elem type);
std::size_t attention_naive_fp8_workspace_bytes(const attention_shape& s, elem type);
// Throws std::invalid_argument outside the domain or with too small a workspace, std::runtime_error
// when cuBLASLt rejects the shape or a call fails.
void launch_attention_naive_fp8(const attention_shape& s, elem type, const std::uint8_t* q, const float* q_scale,
                                const std::uint8_t* k, const float* k_scale, const void* v, void* o, float* lse,
                                void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace fusebench::kernels
