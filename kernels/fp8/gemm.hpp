// Block-scaled FP8 GEMM, the DeepSeek-V3 layout (issue 19):
//   D [m, n] bf16, row-major = (A * a_scale) (B * b_scale)^T, fp32 accumulation, where
//   A [m, k] E4M3 codes, row-major (activations), a_scale [m, ceil(k / 128)] fp32: one scale per
//     1 x 128 run of a row (row-major, the K blocks of a row contiguous);
//   B [n, k] E4M3 codes, row-major (weights stored out x in: the "TN" GEMM),
//     b_scale [ceil(n / 128), ceil(k / 128)] fp32, row-major: one scale per 128 x 128 tile;
//   edge blocks may be partial (k or n not a multiple of 128).
// The fp64 reference is references/fp8_gemm_reference.hpp. Launchers check their launches and
// throw std::runtime_error (std::invalid_argument for a bad shape or a too small workspace).
#pragma once

#include "kernels/fp8/split_plan.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace fusebench::kernels {

struct fp8_gemm_shape {
    std::size_t m = 0, n = 0, k = 0;
};

constexpr std::size_t fp8_gemm_block = 128;  // the scale block along k (and n, for B's tiles)

// ---- naive: the unfused baseline. A dequantize kernel writes A and B as bf16 (e4m3(code) *
// scale, rounded to bf16: one rounding of 2^-9 relative per element), then a cuBLAS bf16 GEMM
// (fp32 accumulation, bf16 out). Workspace: the two bf16 copies.
std::size_t fp8_gemm_naive_workspace_bytes(const fp8_gemm_shape& s);
void launch_fp8_gemm_naive(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale, const std::uint8_t* b,
                           const float* b_scale, void* d, void* workspace, std::size_t workspace_bytes,
                           cudaStream_t stream);

// ---- cuBLASLt FP8 peer: E4M3 x E4M3 -> bf16 with cuBLASLt's own block scaling
// (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F for the weights, VEC128_32F for the activations;
// cuBLAS >= 12.9, Hopper). cuBLASLt wants the activation scales outer-dimension-major ([k / 128]
// rows of m) and the tile scales with a 16-byte aligned row pitch, so a small kernel first
// rewrites both into the workspace (part of the launch, and of its time). Workspace: those two
// tables plus cuBLASLt's own 32 MiB.
std::size_t fp8_gemm_cublaslt_workspace_bytes(const fp8_gemm_shape& s);
// nullptr when the shape runs, else why not (a string that lives as long as the program): the
// documented FP8 layout rules first (k and n multiples of 16), then, on a CUDA device, whether
// cuBLASLt's heuristic returns a block-scaled algorithm for the shape (asked once per shape and
// device, and cached).
const char* fp8_gemm_cublaslt_unsupported(const fp8_gemm_shape& s);
// "cuBLASLt 130100 (runtime), built against 130100".
std::string fp8_gemm_cublaslt_describe();
void launch_fp8_gemm_cublaslt(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale, const std::uint8_t* b,
                              const float* b_scale, void* d, void* workspace, std::size_t workspace_bytes,
                              cudaStream_t stream);

// ---- wgmma_block: the fused Hopper kernel (gemm_wgmma.cu, sm_90a). TMA loads of the E4M3 tiles of
// A and B into a shared-memory ring, wgmma m64n128k32 e4m3 x e4m3 -> fp32 per 128-wide K block,
// each block's product promoted into the fp32 accumulator times a_scale * b_scale, bf16 out;
// persistent (one CTA per SM), D through TMA stores; options below. Every shape runs; where K is not a multiple of 16 (TMA needs a
// 16-byte row pitch) A and B are first copied with a padded pitch into the workspace (0 bytes
// otherwise). A and B must start on 16-byte boundaries.
std::size_t fp8_gemm_wgmma_workspace_bytes(const fp8_gemm_shape& s);
// nullptr when the shape is in the kernel's domain (no device needed), else why not.
const char* fp8_gemm_wgmma_shape_unsupported(const fp8_gemm_shape& s);
// nullptr when the shape runs on the current device (the shape, compute capability 9.0, and a
// probe that the loader picked this build's sm_90a code), else why not.
const char* fp8_gemm_wgmma_unsupported(const fp8_gemm_shape& s);
struct fp8_gemm_wgmma_options {
    // CTAs per cluster along M, 1 or 2 (128-wide tiles; 144 and 192: 1, 2 or 4, see cluster_n). 2
    // multicasts each half of B's tile to both CTAs of a pair of row blocks (meant to halve the L2 ->
    // shared-memory traffic for B); with 128-wide tiles correct, measured about 2x slower than 1 on
    // an H100 until run 9 removed a cluster-scope memory barrier from every remote stage release, now
    // 1.7-2.1% slower at 4096^3 (kernels/fp8/NOTES.md run 9), hence not the default.
    int cluster = 1;
    // D through shared memory and TMA stores where n % 8 == 0 (a 16-byte row pitch) and D is
    // 16-byte aligned; false, or any other shape: bf16 stores straight from the registers.
    bool tma_store = true;
    // Two block accumulators per thread: K block kb + 1's wgmma run while block kb is promoted
    // into the fp32 accumulator, and each tile's epilogue runs while the next tile's first block
    // is on the tensor cores. The same arithmetic in the same order: bit-identical D. 5-10% faster
    // than without on every timed fp8_gemm case measured on an H100, M = 1 and 128 included
    // (kernels/fp8/NOTES.md, run 4): the suite's default configuration c1_overlap (with tile_n 192,
    // c1_n192_overlap, where the wave-efficiency rule below picks it). With tile_n 192 this is the
    // half-split form described at tile_n.
    bool overlap = false;
    // cluster 2: a persistent grid of SMs / 2 clusters instead of the count that
    // cudaOccupancyMaxActiveClusters reports. Measured the same as without (H100): that count was
    // not what made cluster 2 ~2x slower (NOTES.md run 9 found what did); kept as a configuration to
    // measure.
    bool cluster_grid_from_sms = false;
    // K order (kernels/fp8/NOTES.md, run 4). k_stagger > 0: the tile at block coordinates
    // (m_blk, n_blk) starts at K block (m_blk + n_blk) % k_stagger and wraps around, so the CTAs
    // that share a row panel of A (or a column panel of B) do not all request the same K block of
    // it at the same time (measured 3-6% slower at M = 4096 with stagger 8 or 32 on an H100).
    // k_serpentine: every second tile of a CTA walks its K order backwards, so a wave starts on the
    // K blocks that the previous wave read last, still in L2 (measured: 10% fewer DRAM bytes on the
    // long-K shapes, 0.8-2.5% faster on their down projections, equal elsewhere). Either changes
    // the order in which the block products are summed (fixed per tile: still deterministic).
    int k_stagger = 0;
    bool k_serpentine = false;
    // Columns of a tile of D: 128, 256 (cluster 1, the overlap, no split: four 64-column pieces per K
    // block, see pieces64; 14% fewer L2 -> shared bytes per FLOP than 192, a 3-stage ring of 48 KiB), or 192 (cluster 1 only): two consumer warpgroups of m64n192,
    // 17% fewer L2 -> shared-memory bytes per FLOP than 128 x 128, a 4-stage ring (40 KiB a stage).
    // A 192-wide tile straddles two 128-column scale blocks of B (the kernel picks the block per
    // 8-column group). With overlap, each K block's product is taken in two halves of 96 columns
    // (one promoted while the other is on the tensor cores): two whole block accumulators do not
    // fit the registers at this width. Measured in kernels/fp8/NOTES.md, run 5.
    // 144 (cluster 1, no split, no pieces): for N = 576 (DeepSeek-V3 kv_a: 4 column blocks = N
    // exactly; M = 4096 is 128 tiles for 132 SMs where 192 gives 96): two consumer warpgroups of
    // m64n144, a 5-stage ring of 34 KiB, each tile straddling two 128-column scale blocks of B (the
    // block picked per 8-column group); with overlap, each K block's product in two halves of 72
    // columns as at 192 (two whole 72-register block accumulators spill). D: two 64-column TMA
    // stores per warpgroup, the last 16 columns from the registers. Measured in
    // kernels/fp8/NOTES.md, run 8; with the overlap the tile's scale boundary is a compile-time
    // constant per n_blk % 8 (no select in the promotion) since run 10.
    int tile_n = 128;
    // Split the tail (tile_n 192 with overlap, no serpentine; kernels/fp8/split_plan.hpp): where
    // the tiles do not fill whole waves of the SMs, each tile of the partial last wave is cut along
    // K into pieces of whole 128-wide K blocks run by otherwise idle CTAs (split-K on the last wave
    // only, the piece count from a cost model), so the last wave takes a fraction of a tile's time;
    // the CTA holding a tile's first piece adds the others' fp32 partials from the workspace in a
    // fixed order (deterministic: no atomics on data). Two launches: the plain kernel over the whole
    // waves, then one CTA per piece. Where no split is modelled to gain, the plain kernel alone.
    // Needs fp8_gemm_wgmma_workspace_bytes(shape, options, SMs). Measured: NOTES.md run 6.
    bool split = false;
    // tile_n 192 with the overlap: each K block's product in three pieces of 64 columns
    // (m64n64k32) instead of two halves of 96, each piece's promotion under the next piece's wgmma
    // (all of the promotion overlapped, against half with the halves; A's slice read once per
    // piece). tile_n 256 always runs this form (four pieces; the overlap required). Measured:
    // kernels/fp8/NOTES.md run 7.
    bool pieces64 = false;
    // The 64-column pieces' order (tile_n 256, or 192 with pieces64). false (form 1): each piece
    // drained (wait_group 0) before the next is issued, the next promoted under it, one piece in
    // flight across K blocks: all of the promotion overlapped, the tensor queue of the warpgroup
    // empty at each piece's turn. true (form 2): piece q + 1 issued before piece q is waited for
    // (wait_group 1) within a K block, the block's last piece drained and promoted before the next
    // block's first goes in (ptxas 13.0 serializes every wgmma when a group is kept in flight
    // across the K loop with wait_group 1: C7514). Measured: kernels/fp8/NOTES.md run 7.
    bool pieces_lookahead = false;
    // Multicast clusters of the 144- and 192-wide tiles (the overlap, no split, no pieces; issue 19,
    // kernels/fp8/NOTES.md run 9): `cluster` (1, 2 or 4) CTAs along M share B's tile and cluster_n
    // (1, 2 or 4) along N share A's tile; each CTA loads a 1 / cluster slice of B's tile and a
    // 1 / cluster_n slice of A's into every CTA that shares it (TMA multicast), so the L2 ->
    // shared-memory bytes per tile fall by those factors. Instantiated: 192 with cluster 2 or 4
    // (cluster_n 1); 144 with cluster x cluster_n = 2 x 1, 1 x 2, 1 x 4, 2 x 2. Other values throw.
    // Measured on kv_a (N = 576, H100): 3-7% slower than without a cluster at M = 4096, 0.5-3.3% at
    // M = 8192 (clusters of 2); clusters of 4 of the 144-wide tile 1.4-1.9x slower (30 resident on 132
    // SMs, 32 needed at M = 4096). Not a default.
    int cluster_n = 1;
    // > 0 (tile_n 144 or 192, the overlap, no cluster, split or pieces): the producer also asks the
    // TMA unit to prefetch A's and B's tiles this many K blocks ahead of the load it is about to
    // issue into L2 (cp.async.bulk.prefetch.tensor; no shared memory), so that where one wave streams
    // its K panels from DRAM (kv_a: every tile's A read once, all CTAs at the same K) a ring load
    // finds its data in L2. Measured 48-68% slower than without on kv_a (H100, NOTES.md run 9): not
    // a default.
    int l2_prefetch = 0;
    // tile_n 144 with the overlap, no cluster, split, pieces or prefetch (issue 19, kernels/fp8/NOTES.md
    // run 13): each K block's product in three pieces of 48 columns (m64n48k32, A from shared memory)
    // into three 24-register buffers, the block's last piece issued under the first one's promotion
    // and promoted under the next block's first two, so that a consumer warpgroup's queue is empty
    // only between a block's last wait and the next block's first issue. The same arithmetic in the
    // same order: bit-identical D. Measured 3.5-4.0% slower than the default c1_n144_overlap on kv_a
    // at M = 4096 and 4.5% at M = 8192 (H100, same binary and board): not a default, not a suite
    // configuration; the exact kernel test covers it.
    bool thirds_ahead = false;
};
void launch_fp8_gemm_wgmma(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale, const std::uint8_t* b,
                           const float* b_scale, void* d, void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
                           const fp8_gemm_wgmma_options& opt = {});
// The work split that a launch with these options runs on `sms` SMs (grid, whole tiles, tail tiles
// and their pieces); a plan with grid 0 for a shape outside the domain or sms <= 0.
fp8_gemm_split_plan fp8_gemm_wgmma_split_plan(const fp8_gemm_shape& s, const fp8_gemm_wgmma_options& opt, int sms);
// The workspace a launch with these options needs on a device of `sms` SMs: the padded copies
// (fp8_gemm_wgmma_workspace_bytes(s)) plus, with split where the plan has stream-K iterations, one
// 128 x tile_n fp32 partial tile and two 8-byte flags per piece after the first of a cut tile.
std::size_t fp8_gemm_wgmma_workspace_bytes(const fp8_gemm_shape& s, const fp8_gemm_wgmma_options& opt, int sms);
// Wave efficiency of the persistent grid on `sms` SMs with tiles of 128 x tile_n: M N over
// (waves x sms x 128 x tile_n), waves = ceil(tiles / sms): the share of the grid's tile slots that
// does useful work (partial edge tiles and a partly empty last wave are the waste).
double fp8_gemm_wgmma_wave_efficiency(const fp8_gemm_shape& s, int tile_n, int sms);
// The same with the tail split of options.split (split_plan.hpp): the partial last wave counts as
// the modelled time of its pieces (fp8_gemm_split_tail_cost / k_blocks of a wave) instead of a
// whole wave.
double fp8_gemm_wgmma_split_wave_efficiency(const fp8_gemm_shape& s, int tile_n, int sms);
// Whether the suite's default runs the tail split for a shape (kernels/fp8/NOTES.md run 6): where
// M >= 4096 and K >= 8192 (64 K blocks or more), and the default tile width is 192. On an H100
// (132 SMs, run 6 call 3) the split was 0.2-5.5% faster than the same tiles without it on the six
// M = 4096 projections with K >= 8192 (Llama-3-8B down +5.5%, DeepSeek-V3 o +4.5%, dense_down
// +3.6%, Llama-3-70B down +2.3%, q/o +0.5%, gate/up +0.2%) and 1.7-9.2% slower on the four with a
// tail and K <= 4096 (4096^3, Llama-3-8B gate/up, the expert down projection, q_b): its second
// launch and its pieces cost far more than modelled (NOTES.md run 6), which only a long tail wave
// repays.
bool fp8_gemm_wgmma_split_pays(const fp8_gemm_shape& s);
// The tile width of the suite's default configuration for a shape on `sms` SMs (kernels/fp8/NOTES.md,
// runs 5-7): where M >= 4096, 256 (the 64-column pieces with pieces_lookahead) where the 128 x 256
// tile's wave efficiency is at least 0.91 of the 128 x 128 tile's and 0.95 of the 128 x 192 tile's
// (with the tail split where fp8_gemm_wgmma_split_pays); else 192 where the 128 x 192 tile's is at
// least 0.91 of 128 x 128's; else 128. On an H100 (132 SMs, run 7 call 2) 256 was the fastest
// wgmma configuration, or within 1.8% of it, on 22 of the 24 M = 4096 / 8192 projections (ratio to
// 192 0.98-1.13), 1-15% faster than the earlier default on 17 of them; kv_a (N = 576: 3 column
// blocks, ratio 0.75) keeps 192. Below M = 4096 it is measured only at M = 1 and 128 (128 faster),
// so 128 stays there. Where the rule picks 192 and the tail split does not pay
// (fp8_gemm_wgmma_split_pays false), 144 where the 128 x 144 tile's wave efficiency is at least 1.2
// times the 128 x 192 tile's (on 132 SMs only kv_a, N = 576, ratio 1.33; kernels/fp8/NOTES.md run 10:
// measured 6.8% faster than 192 at M = 4096 and 7.4% at M = 8192; before run 10's compile-time scale
// boundary it was 0.4% slower at M = 4096, run 8, and the rule took 144 from M = 8192 only).
int fp8_gemm_wgmma_default_tile_n(const fp8_gemm_shape& s, int sms);
// Whether the suite's default configuration is the 128 x 192 tile with the tail split
// (c1_n192_overlap_sk): the default tile width is 192 and fp8_gemm_wgmma_split_pays.
bool fp8_gemm_wgmma_default_split(const fp8_gemm_shape& s, int sms);
// SMs of the current CUDA device (0 without one).
int fp8_gemm_wgmma_device_sms();

}  // namespace fusebench::kernels
