// Scaled dot-product attention, forward: O = softmax(scale * Q K^T + mask) V per (batch, q head),
// with lse = the natural-log logsumexp of each row's scaled, masked logits (fp32).
//
// Layout [batch, heads, seq, head_dim], contiguous; bf16 or fp16 Q, K, V and O, fp32 accumulation.
// K and V have heads_kv heads, each shared by heads_q / heads_kv consecutive query heads (GQA).
// Causal masks are bottom-right aligned: query row i sees keys j <= i + (seq_kv - seq_q); defined
// for seq_q <= seq_kv, so no row is empty (decode, seq_q = 1, sees every key).
//
// Launchers validate the shape (std::invalid_argument), enqueue on `stream` and check the launch
// (std::runtime_error). Every launcher is deterministic: the same inputs give bitwise equal outputs.
#pragma once

#include "kernels/common/elem.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fusebench::kernels {

struct attention_shape {
    int batch = 1, heads_q = 1, heads_kv = 1, seq_q = 1, seq_kv = 1, head_dim = 64;
    bool causal = true;
    float scale = 0.125f;  // usually 1 / sqrt(head_dim)
};

// Throws std::invalid_argument naming the first problem: non-positive sizes, heads_q not a multiple
// of heads_kv, causal with seq_q > seq_kv, a non-finite or non-positive scale, f32 elements.
void validate_attention_shape(const attention_shape& s, elem type);

// ------------------------------------------------------------------ naive (the unfused baseline)
// cuBLAS strided-batched GEMM writes the fp32 scores scale * Q K^T, a masked-softmax kernel writes P
// (input dtype) and the lse, a cuBLAS GEMM computes O = P V. Scores and P are materialized for as
// many (batch, kv head) groups at once as fit in the workspace the sizing function returns (at
// most 2 GiB, or one group where a group alone is larger).
std::size_t attention_naive_workspace_bytes(const attention_shape& s, elem type);
void launch_attention_naive(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                            float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

// ------------------------------------------------------------------ fused (the seed's first design)
// Flash attention forward on tensor cores: warp-level 16x8x16 MMAs (the instructions WMMA compiles
// to, issued directly so the score accumulators feed P V from registers), online softmax with quad
// shuffles, cp.async double-buffered K/V tiles, causal tiles above the diagonal skipped.
// Launches of fewer query blocks than the device has SMs (decode: one query row against a long
// KV) split the keys over several blocks per row, each writing a partial O and lse to the
// workspace, merged in split order by a second kernel (still deterministic); the workspace size
// depends on the shape and the current device's SM count, and is 0 where nothing is split.
// Returns nullptr where supported, else the reason (head_dim other than 64, 128, 256; f32).
const char* attention_wmma_unsupported(const attention_shape& s, elem type);
std::size_t attention_wmma_workspace_bytes(const attention_shape& s, elem type);
void launch_attention_wmma(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                           float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace fusebench::kernels
