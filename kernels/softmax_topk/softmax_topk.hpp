// Fused softmax + top-k: logits [rows, V] in, per row the K largest probabilities softmax(x)_i
// (float32, descending) and their int32 indices out. Equal logits are ordered by lower index.
// A row that contains NaN or +inf, or whose entries are all -inf, has no finite softmax
// (PyTorch's softmax gives NaN everywhere for it): every variant that handles it writes NaN
// probabilities and indices 0..K-1 (NaN ranks above every number and ties among NaN keep the
// lower index). Rows are contiguous, row r starts at element r * V.
//
// Launchers throw std::invalid_argument for K < 1, K > V, K > max_k or V < 1 (usage errors),
// std::runtime_error when a launch fails, and never synchronize.
#pragma once

#include "kernels/common/elem.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fusebench::kernels {

// Largest K the selection variants (naive baseline and fused) support: one bitonic sort of K
// composites in shared memory.
constexpr std::int64_t softmax_topk_max_k = 1024;

struct softmax_topk_args {
    elem type = elem::f32;             // logits element type
    const void* d_logits = nullptr;    // [rows, V] of `type`
    float* d_probs = nullptr;          // [rows, K]
    std::int32_t* d_indices = nullptr; // [rows, K]
    std::int64_t rows = 0;
    std::int64_t V = 0;
    std::int64_t K = 0;
};

// Naive unfused baseline, the way an unfused framework runs it: a softmax kernel (block per row,
// three passes: max, sum of exp, write) writes the full [rows, V] float32 probabilities to the
// workspace, then a top-k kernel (block per row) finds the K-th largest by an 8-bit radix select
// over the stored row (one pass per digit), gathers the K winners and sorts them.
std::size_t softmax_topk_naive_workspace_bytes(std::int64_t rows, std::int64_t V);
void launch_softmax_topk_naive(const softmax_topk_args& a, void* d_workspace,
                               std::size_t workspace_bytes, cudaStream_t stream);

// Seed 000, v1: block of 256 per row, three passes (max, sum of exp, softmax + per-thread top-16
// of probabilities in registers), the 256 thread lists merged warp by warp into a shared-memory
// min-heap of K by thread 0, which then sorts the heap (O(K^2)). float32 logits only.
// Exact only for K <= 16: a per-thread list of 16 cannot hold a top-K concentrated in one
// thread's elements (indices congruent mod 256). The heap caps K at seed_heap_max_k.
constexpr std::int64_t seed_local_k = 16;
constexpr std::int64_t seed_heap_max_k = 256;
void launch_softmax_topk_seed_block(const softmax_topk_args& a, cudaStream_t stream);

// Seed 000, v2: v1 with float4 loads (requires V % 4 == 0 and a 16-byte aligned logits pointer:
// row starts are then 16-byte aligned) and a warp-level merge of the lane lists (K rounds of
// warp arg-max) before the heap. float32 only; exact only for K <= 16.
void launch_softmax_topk_seed_block_vec(const softmax_topk_args& a, cudaStream_t stream);

// Seed 003: one warp per row (8 rows per block of 256), one pass with online max/sum rescaling
// per element and a per-lane top-K list of logits in registers (capacity seed_warp_max_k), the 32
// lane lists merged in shared memory by lane 0 with sorted insertion. float32 only. Needs rows
// without -inf entries (exp(-inf - -inf) is NaN in its rescaling) and a finite softmax.
constexpr std::int64_t seed_warp_max_k = 32;
void launch_softmax_topk_seed_warp(const softmax_topk_args& a, cudaStream_t stream);

// Fused, one pass over the logits (block of 256 per row, any V, fp32/fp16/bf16, any K up to
// softmax_topk_max_k): 16-byte loads, per-thread online max/sum, a first threshold from tile 0
// (a bound on its K-th largest), and candidates at or above the running threshold appended to a
// shared-memory buffer; a radix select over 64-bit (value, -index) composites keeps the exact top
// K whenever candidates pile up, raising the threshold. A final bitonic sort orders the K winners.
enum class fused_version {
    v1,  // 16 elements per thread per tile, loads issued at the top of each tile
    v2,  // v1 + the next tile's loads issued before the current tile's math (register double
         // buffer): keeps each thread's bytes in flight across the per-tile barrier
    v3,  // tiles streamed by the bulk-copy engine into a shared-memory ring (3 stages fp32, 4
         // for 16-bit types) on mbarriers: bytes in flight no longer cost registers, and stay in
         // flight while the block selects. Needs sm_90.
};
void launch_softmax_topk_fused(const softmax_topk_args& a, fused_version version,
                               cudaStream_t stream);

// v4, one warp per row (kernels/softmax_topk/fused_warp.cu): no block barriers, so each SM keeps
// ~30 rows in flight and one row's selection overlaps the others' streaming. Per lane 16-byte
// loads (4 in flight) with online max/sum; per warp a running threshold and a shared-memory buffer
// of (logit, -index) keys filled through ballots and compacted by a warp bitonic sort. Any V,
// fp32/fp16/bf16, K <= softmax_topk_warp_max_k (the buffer holds K + one step of appends).
constexpr std::int64_t softmax_topk_warp_max_k = 256;
void launch_softmax_topk_fused_warp(const softmax_topk_args& a, cudaStream_t stream);

// v5, one warp per row (kernels/softmax_topk/fused_stream.cu): v4's shape with the per-element
// path cut to unpack, max, exp and add (one max and one candidate vote per 16-byte vector, NaN/+inf
// found from the sum) and a warp radix select instead of a bitonic sort to compact the candidates.
// K <= 32: rows in order, a rolling pipeline of 3 vectors per lane in flight, a threshold seeded
// from the first batch. K > 32: rows in stratified order, a sample of 1/P of the row first
// (P = 5K/128) whose 64th largest element is the threshold for the rest, candidates compared as
// (value, index) composites, candidate vectors parked in a shared list and sorted out 32 at a time,
// loads in batches of 3 (fp32) or 2 (16-bit) vectors per lane; a row where fewer than K pass the
// sample's threshold is read again in order (exact either way). Which of the two a 16-bit row with
// K <= 32 takes depends on the device and the row (fused_stream.cu, stream_small_max_k): at 4 TB/s
// or more (H200) the K > 32 kernel from K = 16; below (H100) from K = 20 at V <= 32768, K = 31 (bf16)
// / 28 (fp16) at V <= 65536, never for longer rows. Any V, fp32/fp16/bf16, K <= softmax_topk_max_k.
void launch_softmax_topk_fused_stream(const softmax_topk_args& a, cudaStream_t stream);
// fused_stream with a resample for K <= 32: after a compaction of more than half a batch of
// candidates, the threshold is raised to the K-th largest of a sample spread over the rest of the
// row. Rows in ascending order then cost 1.1-1.3x a random row instead of 5-12x; random rows pay
// 2-3.5% in bf16 for the code in the loop (H100). K > 32: fused_stream's sampling kernel, then a
// second kernel that reads again the rows given up with a route (rows that rise along the index:
// a sample keeping its top K, which cannot fail; rows whose top ties: in order with a vote aware
// of indices); two launches on the stream, the second with programmatic stream serialization.
void launch_softmax_topk_fused_stream_resample(const softmax_topk_args& a, cudaStream_t stream);

// v9e, the order-free bound in a warp a row (kernels/softmax_topk/fused_bound.cu): the stream votes each
// 16-byte vector's maximum against the K-th best vector so far, the K best held as 32-bit (key, index)
// composites in registers; at the row's end the K vectors are read again and their elements at or above the
// K-th held key ordered. Exact in any order of the row; bf16 / fp16 logits, V <= softmax_topk_bound_max_v,
// K <= softmax_topk_bound_max_k (K <= 32: one lane a held vector; above, the list kernel: the joining vectors
// appended to a per-warp list in shared memory, compacted exactly to the top K vectors when full). Session k's probe: 1.03-1.26x fused_stream's speed
// at K <= 32 (H100 / H200), rows rising along the index 2.2-3.0x its random-logit time.
constexpr std::int64_t softmax_topk_bound_max_v = 65536;
constexpr std::int64_t softmax_topk_bound_max_k = 256;
void launch_softmax_topk_fused_bound(const softmax_topk_args& a, cudaStream_t stream);

// v6, a radix select (kernels/softmax_topk/fused_radix.cu): one thread-block cluster per row (C
// blocks of 256, each a contiguous chunk of the row; C from the row's bytes, 96 KB a block, and
// C >= 4K / 1024, at most 8). One DRAM read computes max / sum and the maximum of each of the
// cluster's 1024 C slots (a thread's vectors at one batch position, or one half of them for 16-bit
// logits: they partition the row). Each block's K-th and ceil(K / C)-th largest slot maxima b1, b2
// (block-local selects, exchanged once with the max / sum) give L = max(max b1, min b2), a lower
// bound of the row's K-th largest in any order; a second read (L2) by the slots that reach it
// appends the elements above it and those equal to it. When the elements at or above it fit 2048
// candidates they are selected; fewer than K above it make it the exact K-th key and the ties of
// lowest index join; more than 2048 above it take the digit path: 11-bit histograms of the keys
// (11, 11, 10 bits) until the candidates fit, ties at the exact K-th key in index order. Block 0
// selects the exact top K of the candidates and sorts them (at most 32: one warp, in registers).
// Any V, fp32/bf16/fp16, K <= softmax_topk_max_k. Needs sm_90.
void launch_softmax_topk_fused_radix(const softmax_topk_args& a, cudaStream_t stream);

// v7, the row in shared memory (kernels/softmax_topk/fused_smem.cu): a persistent grid of
// thread-block clusters (C blocks a row, one a SM, C from the row's bytes: each block's chunk fits
// one of two shared-memory buffers), clusters looping over rows. Bulk copies stream the next
// row's chunk into the free buffer while the block selects the current one from shared memory: one pass
// for max / sum and slot maxima (a lower bound L of the row's K-th largest in any order, from one
// cluster exchange), one pass appending the elements above L and counting those at it; fewer than K
// above make L the exact K-th key (ties of lowest index join), more than 2048 above take 8-bit digit
// histograms of the chunks. A leader block, rotating by row, gathers, selects and sorts the exact
// top K. Any V up to 16 chunks of ~95 KB, fp32/bf16/fp16, K <= softmax_topk_max_k. Needs sm_90.
// Rows longer than this take more than the 16 blocks a cluster may have (launch: invalid_argument).
constexpr std::int64_t softmax_topk_smem_max_row_bytes = 16 * 90 * 1024;
void launch_softmax_topk_fused_smem(const softmax_topk_args& a, cudaStream_t stream);

}  // namespace fusebench::kernels
