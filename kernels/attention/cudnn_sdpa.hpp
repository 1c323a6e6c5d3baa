// cuDNN 9 scaled-dot-product attention forward, the vendor peer of the attention suite.
//
//   O   = softmax(scale * Q K^T + mask) V        per (batch, q-head), fp32 accumulation
//   LSE = log(sum_j exp(scale * q.k_j + mask_j))  natural log, fp32 (cuDNN's training "stats")
//
// Layout [batch, heads, seq, head_dim], contiguous: Q [B,Hq,Sq,D]; K, V [B,Hkv,Skv,D] (grouped-query
// attention when Hkv < Hq, q-head h reads kv-head h / (Hq/Hkv)); O [B,Hq,Sq,D] in the input type;
// LSE [B,Hq,Sq] fp32. Causal is bottom-right aligned: row i sees keys j <= i + (Skv - Sq), which
// needs Sq <= Skv.
//
// Built on the cuDNN backend (graph) API, no cudnn-frontend: the graph is the pattern cuDNN's fused
// flash-attention engine recognises (BMM1 -> scale -> causal select -> softmax with stats -> BMM2).
// One execution plan per (shape, element type, device) is built on first use (seconds: the engine is
// compiled at run time) and cached. Compiled without cuDNN (FUSEBENCH_HAVE_CUDNN 0 or undefined)
// the same functions exist: available() is false, unsupported() says why, launch throws.
#pragma once

#include "kernels/attention/attention.hpp"
#include "kernels/common/elem.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace fusebench::kernels {

// Same fields as attention_shape (kernels/attention/attention.hpp), declared here so that this
// wrapper stands alone.
// Compiled with cuDNN and the library loads (cudnnGetVersion answers a major version 9).
bool cudnn_sdpa_available();

// "cuDNN 9.14.0 (runtime), built against 9.19.0", or why it is unavailable.
std::string cudnn_sdpa_describe();

// nullptr when the shape runs, else the reason (a string that lives as long as the program).
// Cheap checks first (element type, GQA ratio, causal with Sq > Skv, head_dim); then the plan for
// the current device is built and its outcome cached, so a shape cuDNN rejects says so here.
const char* cudnn_sdpa_unsupported(const attention_shape& s, elem type);

// Workspace the cached plan needs on the current device (builds the plan; throws when unsupported).
std::size_t cudnn_sdpa_workspace_bytes(const attention_shape& s, elem type);

// Runs the cached plan (built on first call) on `stream`. q/k/v/o/lse are device pointers in the
// layout above; workspace must hold cudnn_sdpa_workspace_bytes(s, type) bytes (may be null when 0).
// Throws std::runtime_error naming the cuDNN step and status on any failure.
void launch_cudnn_sdpa(const attention_shape& s, elem type, const void* q, const void* k, const void* v,
                       void* o, float* lse, void* workspace, std::size_t workspace_bytes,
                       cudaStream_t stream);

// The cached plan for the current device in words: engine global index, configs tried, workspace,
// build time, mask; or "unsupported: <reason>". Builds the plan like workspace_bytes().
std::string cudnn_sdpa_plan_describe(const attention_shape& s, elem type);

// Drops every cached plan (the per-device handles stay). Reasons already returned stay valid.
void cudnn_sdpa_clear_cache();

}  // namespace fusebench::kernels
