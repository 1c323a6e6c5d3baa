// Hopper (sm_90a) attention forward: variant `wgmma_tma` of the attention suite. Same contract as
// the launchers of attention.hpp: layout [batch, heads, seq, head_dim], bf16 or fp16 Q, K, V and O,
// fp32 lse (natural log), GQA, bottom-right aligned causal mask; deterministic; no workspace.
#pragma once

#include "kernels/attention/attention.hpp"

namespace fusebench::kernels {

// Flash attention forward, warp-specialized: a producer warpgroup loads Q and a 2-stage ring of K/V
// tiles with TMA (mbarrier full/empty handshakes), two consumer warpgroups (64 query rows each, 128
// keys per step) run Q K^T and P V with wgmma.mma_async, the online softmax in registers overlapping
// the previous tile's P V; causal tiles above the diagonal are never loaded.
// Returns nullptr where supported, else the reason: bf16/fp16 only, head_dim 64 or 128, and a
// current device of compute capability 9.0 that runs this file's sm_90a code (checked once per
// device with a probe kernel, which synchronizes the device the first time).
const char* attention_wgmma_tma_unsupported(const attention_shape& s, elem type);
// Builds three tensor maps on the host (cuTensorMapEncodeTiled through the runtime's driver entry
// point) and launches one kernel on `stream`.
void launch_attention_wgmma_tma(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                                float* lse, cudaStream_t stream);

}  // namespace fusebench::kernels
