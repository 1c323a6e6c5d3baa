// Deliberately broken copies of the real kernels, for the verifier self-test (suite "mutants").
// Each launcher is the real design of its family with one realistic bug; the comment on each says
// which bug and which check of the harness must catch it. Never use these for anything else.
//
// Conventions follow the real families: GLU mutants compute SwiGLU (y = silu(gate) * up) over n
// elements; RMSNorm mutants take the arguments of kernels/rmsnorm (x, residual, gamma -> y,
// residual_out over [tokens, hidden]); softmax + top-k mutants take kernels::softmax_topk_args.
// Launchers check cudaGetLastError() after their launches and throw std::runtime_error; they throw
// std::invalid_argument for an element type they were not written for.
#pragma once

#include "kernels/common/elem.hpp"
#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fusebench::kernels::mutants {

// ------------------------------------------------------------------ GLU (SwiGLU only)

// 1. glu_vec without its scalar tail: the last n % vector-width elements are never written.
void launch_glu_vec_no_tail(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                            cudaStream_t stream);

// 5. glu_scalar with `i <= n`: writes (and reads) one element past the end.
void launch_glu_scalar_past_end(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                                cudaStream_t stream);

// 6. glu_naive that saves its workspace by writing act(gate) over gate: modifies an input.
void launch_glu_naive_gate_as_scratch(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                                      cudaStream_t stream);

// 12. glu_scalar launched on a stream the launcher creates for itself, never joined with the
// caller's stream: unordered with everything the caller enqueued.
void launch_glu_side_stream(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                            cudaStream_t stream);

// 13. glu_scalar with a result cache keyed by the output pointer (and size): a second call on the
// same output buffer copies the first call's result back, whatever the inputs hold now.
void launch_glu_cached_by_output(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                                 cudaStream_t stream);

// 14. glu_scalar that flushes fp32 results below FLT_MIN to zero (what -ftz=true / fast math
// does to the product): outputs that are tiny but representable come out as 0.
void launch_glu_flush_tiny(elem type, const void* d_gate, const void* d_up, void* d_y, std::size_t n,
                           cudaStream_t stream);

// 15. A persistent fused GLU kernel taking tiles from a counter in its workspace, which its
// reset pass clears only on the workspace's first use (tagged with the gate pointer and n): right
// whenever the workspace was cleared in between, and on every later launch each block returns at
// once without writing anything (the speed-of-light guard).
std::size_t glu_unreset_queue_workspace_bytes();
void launch_glu_unreset_queue(elem type, const void* d_gate, const void* d_up, void* d_y, void* d_workspace,
                              std::size_t workspace_bytes, std::size_t n, cudaStream_t stream);

// 16. glu_naive whose suite binding forgot to declare the workspace: the intermediate is written
// through the null workspace pointer (illegal address, a context-corrupting fault).
void launch_glu_naive_unchecked_workspace(elem type, const void* d_gate, const void* d_up, void* d_y,
                                          void* d_intermediate, std::size_t n, cudaStream_t stream);

// ------------------------------------------------------------------ residual-add + RMSNorm

// 2. A warp-per-row kernel (4 rows per block, one row per warp) launched on tokens / 4 blocks
// instead of (tokens + 3) / 4: the rows of the last, partial block are dropped.
void launch_rmsnorm_warp_drop_last_rows(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                        void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                        float eps, cudaStream_t stream);

// 3. fused_block reading x and residual with a row pitch given in 16-byte vectors instead of
// elements: right only when tokens = 1.
void launch_rmsnorm_block_wrong_stride(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                       void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                       float eps, cudaStream_t stream);

// 7. fused_block without the gamma multiply: right only when gamma is all ones.
void launch_rmsnorm_block_no_gamma(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                   void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                   float eps, cudaStream_t stream);

// 9. fused_block accumulating the sum of squares (per thread and across the block) in the storage
// type: fp16 overflows at 65504 and rounds every addition to 11 bits. fp16 only.
void launch_rmsnorm_block_half_accumulator(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                           void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                           float eps, cudaStream_t stream);

// 11. fused_block whose block reduction lost the __syncthreads between writing the warp partials
// and reading them: a warp may read partials other warps have not written yet (a race).
void launch_rmsnorm_block_missing_sync(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                       void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                       float eps, cudaStream_t stream);

// ------------------------------------------------------------------ softmax + top-k
// All three use the naive baseline's workspace (rows * V floats of probabilities).
std::size_t softmax_topk_mutant_workspace_bytes(std::int64_t rows, std::int64_t V);

// 4. The naive top-k whose final write covers k < blockDim (one pass, no stride loop): for
// K > 256 the outputs k >= 256 are never written.
void launch_softmax_topk_partial_write(const softmax_topk_args& a, void* d_workspace, std::size_t workspace_bytes,
                                       cudaStream_t stream);

// 8. The naive softmax without the max subtraction: exp overflows for logits above ~88.
void launch_softmax_topk_no_max(const softmax_topk_args& a, void* d_workspace, std::size_t workspace_bytes,
                                cudaStream_t stream);

// 10. Top-k by K rounds of block arg-max over the stored probabilities, where a round excludes
// only the previous round's winner instead of every earlier winner: tied values alternate and
// indices repeat.
void launch_softmax_topk_argmax_rounds(const softmax_topk_args& a, void* d_workspace, std::size_t workspace_bytes,
                                       cudaStream_t stream);

}  // namespace fusebench::kernels::mutants
