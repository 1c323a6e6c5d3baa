// Hopper (sm_90a) attention forward: variant `wgmma_tma` of the attention suite. Same contract as
// the launchers of attention.hpp: layout [batch, heads, seq, head_dim], bf16 or fp16 Q, K, V and O,
// fp32 lse (natural log), GQA, bottom-right aligned causal mask; deterministic.
#pragma once

#include "kernels/attention/attention.hpp"

#include <cstddef>

namespace fusebench::kernels {

// Flash attention forward, warp-specialized: a producer warpgroup loads Q and a ring of K/V tiles
// with TMA (mbarrier full/empty handshakes), two consumer warpgroups (64 query rows each) run Q K^T
// and P V with wgmma.mma_async, the online softmax in registers overlapping the previous tile's
// P V; causal tiles above the diagonal are never loaded.
//
// Split-KV (flash-decoding): where the launch's blocks (query blocks x heads x batch) leave SMs
// idle, each block's KV tiles are cut into `splits` runs of equal length, one CTA per run; each
// writes its normalized fp32 partial O and partial lse to the workspace, and a second kernel merges
// the splits of every row in split order (deterministic: fixed boundaries, fixed order, no atomics).
// The number of splits (wgmma_tma_plan) is a heuristic of the SM count, the grid and the KV length.
// GQA: where the query heads of one KV head hold at most one block of rows together (decode), one
// block computes all of them, so each K/V tile is read once per KV head.
//
// Tuning knobs, each combination a configuration of the suite's variant.
// head_dim 64 and 128: (bn, stages) = (128, 2), (128, 3) or (64, 3); head_dim 256: (64, 2) only
// (what fits 227 KB of shared memory). pingpong: (128, 2) at head_dim 64 and 128, (64, 2) at 256.
struct wgmma_tma_options {
    int bn = 128;          // keys per KV tile: 128 or 64
    int stages = 2;        // depth of the K/V ring: 2 or 3
    bool split_kv = true;  // false: one CTA per (query block, head) whatever the grid
    bool pingpong = false; // the consumer warpgroups take turns issuing their GEMMs (the (bn, stages) of the head_dim, 2 stages)
};

// What a launch does on the current device: GQA heads packed or not, splits, workspace.
struct wgmma_tma_plan {
    bool packed = false;
    int splits = 1;
    long long blocks = 0;             // CTAs per split: query blocks x heads x batch
    std::size_t workspace_bytes = 0;  // partial O and lse, fp32; 0 without splits
};

// The split-KV heuristic alone, what the plan applies with the current device's SM count: the
// splits for `blocks` CTAs (query blocks x heads x batch) of `tiles` KV tiles each on `sms` SMs.
// 1 where the blocks fill the SMs or the KV is short; else the smallest split count whose wave
// occupancy reaches 85% (hopper.cu says why).
int wgmma_tma_choose_splits(long long blocks, int tiles, int sms);

// The head_dim and tiling part of the check below, independent of the device: nullptr where the
// kernel is instantiated for (head_dim, opt.bn, opt.stages), else the reason.
const char* wgmma_tma_tiling_unsupported(int head_dim, const wgmma_tma_options& opt);
// Returns nullptr where supported, else the reason: bf16/fp16 only, head_dim 64, 128 or 256, a
// (bn, stages) pair known for that head_dim, and a current device of compute capability 9.0 that
// runs this file's sm_90a code (checked once per device with a probe kernel, which synchronizes the
// device the first time).
const char* attention_wgmma_tma_unsupported(const attention_shape& s, elem type, const wgmma_tma_options& opt = {});
// The plan for a shape on the current device (its SM count); throws std::invalid_argument outside
// the supported domain.
wgmma_tma_plan attention_wgmma_tma_plan(const attention_shape& s, elem type, const wgmma_tma_options& opt = {});
std::size_t attention_wgmma_tma_workspace_bytes(const attention_shape& s, elem type, const wgmma_tma_options& opt = {});
// Builds three tensor maps on the host (cuTensorMapEncodeTiled through the runtime's driver entry
// point) and launches the kernel, plus the merge of the splits where the plan splits, on `stream`.
// Throws std::invalid_argument where the plan splits and the workspace is smaller than it needs.
void launch_attention_wgmma_tma(const attention_shape& s, elem type, const void* q, const void* k, const void* v, void* o,
                                float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
                                const wgmma_tma_options& opt = {});

}  // namespace fusebench::kernels
