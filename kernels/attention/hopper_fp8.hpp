// Hopper (sm_90a) attention forward with FP8 Q K^T: variant `wgmma_fp8qk` of the attention suite.
// Same contract as launch_attention_wgmma_tma (hopper.hpp) for V, O and lse (layout [batch, heads,
// seq, head_dim], bf16 V and O, fp32 lse, bottom-right aligned causal mask, GQA, deterministic),
// but Q and K arrive quantized: E4M3 codes in the same layout, with one fp32 scale per
// (batch, head) (q_scale [batch, heads_q], k_scale [batch, heads_kv]), so that
//   Q = q_scale[b, h] * e4m3(q codes),  K = k_scale[b, h_kv] * e4m3(k codes).
// The kernel computes softmax(scale * Q K^T + mask) V of those dequantized Q and K: Q K^T runs on
// the E4M3 tensor cores (exact products, fp32 accumulation), q_scale * k_scale is folded into the
// softmax scale, P V stays bf16 as in wgmma_tma.
#pragma once

#include "kernels/attention/attention.hpp"

#include <cstddef>
#include <cstdint>

namespace fusebench::kernels {

struct wgmma_fp8qk_options {
    int bn = 128;          // keys per KV tile: 128 only
    int stages = 3;        // depth of the K/V ring: 2 or 3 (3 fits: the E4M3 K tile is half wgmma_tma's)
    bool split_kv = true;  // split the KV tiles over CTAs where the grid leaves SMs idle (as wgmma_tma)
};

// nullptr where supported, else the reason: bf16 V / O only, head_dim 128 only (a 128-byte E4M3
// row is one 128-byte swizzle atom; 64 would need the 64-byte swizzle, not written), a known
// (bn, stages), and a device that runs this build's sm_90a code (attention_wgmma_tma_unsupported's
// probe). GQA heads are not packed into one block (the rows of a block would need different Q
// scales), so GQA decode runs one block per query head.
const char* attention_wgmma_fp8qk_unsupported(const attention_shape& s, elem type, const wgmma_fp8qk_options& opt = {});
// fp32 partial O and lse of the split-KV plan; 0 without splits. Throws std::invalid_argument
// outside the supported domain.
std::size_t attention_wgmma_fp8qk_workspace_bytes(const attention_shape& s, elem type, const wgmma_fp8qk_options& opt = {});
// q, k: E4M3 codes; q_scale, k_scale: fp32 device arrays as above; v, o: bf16. Throws
// std::invalid_argument outside the domain or with too small a workspace.
void launch_attention_wgmma_fp8qk(const attention_shape& s, const std::uint8_t* q, const float* q_scale, const std::uint8_t* k,
                                  const float* k_scale, const void* v, void* o, float* lse, void* workspace,
                                  std::size_t workspace_bytes, cudaStream_t stream, const wgmma_fp8qk_options& opt = {});

}  // namespace fusebench::kernels
