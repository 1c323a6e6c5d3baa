// Hopper block-scaled FP8 GEMM (variant `wgmma_block`, issue 19 item 2). Versus `naive` (a
// dequantize kernel writes bf16 copies of A and B, then a cuBLAS bf16 GEMM):
// - the E4M3 codes go straight into the tensor cores: wgmma.mma_async m64n128k32 e4m3 x e4m3 ->
//   fp32 at twice the bf16 rate, and no bf16 copies written and read back (3 bytes per element
//   of A and B less traffic);
// - scales in fp32 registers, per K block: each 128-wide block of K is multiplied into a block
//   accumulator (4 wgmma k-steps), then promoted into the main fp32 accumulator times
//   a_scale[row, kb] * b_scale[n_tile, kb] (DeepGEMM's scheme: the block scales stay exact, and
//   the tensor core's limited-precision FP8 accumulation never runs over more than 128 products);
// - TMA: one producer thread loads 128 x 128-byte tiles of A and B (both K-major, 128-byte
//   swizzle) into a ring of STAGES stages, full/empty mbarriers per stage; rows and columns past
//   the ends of A and B (ragged M, N, K) arrive as zeros, so edge tiles need no separate path;
// - two consumer warpgroups, 64 rows each of a 128 x 128 tile of D; setmaxnreg gives the producer
//   warpgroup's registers to them (40 / 232 per thread);
// - persistent: one CTA per SM walks the tiles (grouped raster, group_m row blocks at a time, so
//   a wave reuses a few row blocks of A and a band of B from L2), and the producer loads the next
//   tile's stages while the consumers run the previous tile's epilogue;
// - epilogue through shared memory (128-byte swizzled bf16 staging, conflict-free) and TMA stores
//   that the consumers do not wait for: 11-24% faster than bf16 stores from the registers on the
//   M = 4096 shapes (H100, NOTES.md);
// - optional 2-CTA clusters with B multicast (options.cluster = 2): verified; ~2x slower until run 9
//   found why (a cluster-scope memory barrier before every remote stage release, see
//   mbar_arrive_cluster), now 1.7-2.1% slower than without on 4096^3 (H100, NOTES.md run 9), so off
//   by default;
// - optional overlap (options.overlap): two block accumulators, so that the next K block's wgmma
//   run while the previous block is promoted, and each tile's epilogue runs after the next tile's
//   first block is issued: 5-10% faster on every timed case of run 4 (H100, NOTES.md), the
//   suite's default configuration;
// - optional K orders (options.k_stagger, options.k_serpentine): a per-tile rotated start, and
//   every second tile of a CTA backwards (NOTES.md run 4: the stagger is slower, the serpentine
//   saves DRAM bytes).
// - optional 128 x 192 tiles (options.tile_n = 192): two consumer warpgroups of m64n192, a 4-stage
//   ring of 40 KiB, each tile straddling two 128-column scale blocks of B; with the overlap, each
//   K block's product in two m64n96 halves (half 0 promoted under half 1). 2-41% faster than the
//   128 x 128 overlap on the nine M = 4096 projections whose waves it fills, 2-4% slower on
//   N = 2048 / 4096 (NOTES.md run 5): the suite's default where fp8_gemm_wgmma_default_tile_n
//   picks it.
// - optional tail split (options.split, 128 x 192 with the overlap; kernels/fp8/split_plan.hpp):
//   the whole waves run in the plain kernel, then a second launch cuts each tile of the partial
//   last wave along K into pieces of whole K blocks, the piece-0 CTA adding the others' fp32
//   partials in a fixed order (deterministic); 0.2-5.5% faster on the M = 4096 projections with
//   K >= 8192, slower on shorter K (NOTES.md run 6): the suite's default where
//   fp8_gemm_wgmma_default_split holds.
// - optional 128 x 256 tiles (options.tile_n = 256; consume_pieces): each K block's product in four
//   m64n64 pieces into two 32-register buffers (a whole block accumulator does not fit beside the 128
//   accumulators), B's two scale blocks split between the pieces; with options.pieces_lookahead the
//   next piece is issued before the current one is waited for within a block. 14% fewer L2 -> shared
//   bytes per FLOP than 128 x 192 and whole waves where N is a multiple of 1024 on 132 SMs:
//   0.3-11.3% faster than the run-6 default on 9 of the 12 M = 4096 projections, 0.8-1.0% slower on
//   two, in an A/B against main's build on an H100 (NOTES.md run 7); the suite's default where
//   fp8_gemm_wgmma_default_tile_n picks 256.
// - optional 128 x 144 tiles (options.tile_n = 144; consume_n144): for N = 576 (DeepSeek-V3 kv_a),
//   4 column blocks = N exactly, 128 tiles at M = 4096 for 132 SMs where 128 x 192 runs 96 (one
//   partial wave); an m64n144 block accumulator (with the overlap, two m64n72 halves as at 192),
//   B's two scale blocks picked per 8-column group (with the overlap a compile-time boundary, one
//   instantiation of the tile body per n_blk % 8). Measured in NOTES.md runs 8 and 10: since the
//   compile-time boundary 6.8% faster than 128 x 192 at M = 4096 and 7.4% at M = 8192 (H100), the
//   suite's default on kv_a. Since run 11 the overlapped, non-cluster consumer takes A from
//   registers (ldmatrix once per K block, RS wgmma) on a 4-stage ring: 7.5% / 9.6% faster again on
//   kv_a at M = 4096 / 8192 (H100, bitwise the same D).
// - a diagnostic build (FUSEBENCH_FP8_WGMMA_TRACE, kernels/fp8/probes/kv_trace.cu; off in the
//   library): per-K-block clock64 stamps of the producer, a landing watcher and the consumer
//   warpgroups (NOTES.md run 10).
// - optional multicast clusters of the 144- and 192-wide tiles (options.cluster x options.cluster_n:
//   CTAs along M share B's tile, along N A's, each loading a slice of them into all that share it):
//   verified; on kv_a (N = 576) 3-7% slower than without at M = 4096 and 0.5-3.3% at M = 8192 in
//   clusters of 2 (H100, NOTES.md run 9: the L2's throughput is not what bounds that shape), and
//   clusters of 4 lose a second round where fewer are resident than the grid needs.
// - optional L2 prefetch (options.l2_prefetch, 144- and 192-wide): measured 48-68% slower on kv_a
//   (NOTES.md run 9), kept to measure.
// - optional 48-column pieces of the 144-wide tile (options.thirds_ahead; consume_n144's
//   run_tile_ahead): three m64n48 buffers, the warpgroup's queue drained once per K block only
//   between the block's last wait and the next block's first issue; measured 3.5-4.5% slower than
//   the default on kv_a (NOTES.md run 13), kept to measure (the exact test covers it).
// K rows whose pitch is not a multiple of 16 bytes (TMA's rule for a global stride) are first
// copied into the workspace with the pitch rounded up (zero pad columns; part of the launch).
//
// wgmma and setmaxnreg exist only for the architecture-specific sm_90a target: CMakeLists.txt adds
// -gencode arch=compute_90a,code=sm_90a to this file, and the plain sm_90 pass compiles the kernel
// body away. A probe kernel checks at run time which of the two the loader picked.
#include "kernels/common/launch_check.hpp"
#include "kernels/common/sm90_host.hpp"
#include "kernels/common/workspace.hpp"
#include "kernels/fp8/gemm.hpp"
#include "kernels/fp8/split_plan.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

// Switches of kernels/fp8/NOTES.md run 11 (the probe kernels/fp8/probes/kv_trace.cu builds each
// both ways; the library uses these defaults):
// FUSEBENCH_FP8_WGMMA_N144_RS (1): the overlapped, non-cluster 128 x 144 consumer takes A from
//   registers (one ldmatrix pass per K block, RS wgmma; consume_n144's run_tile_rs); 0: A from
//   shared memory (run_tile, as the cluster kernels). With the 4-stage ring
//   (FUSEBENCH_FP8_WGMMA_STAGES_N144, was 5) 7.5% faster on kv_a at M = 4096 in the suite (the two
//   measured together there).
// FUSEBENCH_FP8_WGMMA_EARLY_FILLS (0): the producer thread initialises the barriers and issues its
//   first tile's first ring fills before the CTA's barrier, after prefetching the tensor maps
//   (non-cluster, non-split kernels without the L2 prefetch).
// FUSEBENCH_FP8_WGMMA_STORE_WAIT_READ (0): the CTA's last TMA-store wait is .read (its staging has
//   been read) instead of the stores' completion.
// The last two are exact (bitwise-equal D); in the suite on one board (NOTES.md run 13, two rounds)
//   EARLY_FILLS + STORE_WAIT_READ took 35.86 / 35.70 us on kv_a at M = 4096 against the default's
//   35.51 / 35.99 (the same within the noise): off.
// FUSEBENCH_FP8_WGMMA_N144_SCALES (0; with N144_RS only): the scale factors of the 144-wide
//   consumer with A from registers are staged per ring stage by an idle producer warp (warp 10:
//   a_scale * b_scale for the tile's 128 rows and B's two scale blocks, 1 KiB a stage, credited
//   on the stage's full barrier), so the consumer's chain per K block reads two float2 from shared
//   memory instead of index math, four global loads and four products. Exact (bitwise-equal D);
//   4% faster on kv_a in the probe (NOTES.md run 12), but 2.9% slower in the suite against the
//   default on one board (run 13: 36.53 / 36.63 us against 35.51 / 35.99 at M = 4096, two rounds;
//   with EARLY_FILLS + STORE_WAIT_READ 36.82 / 36.70): off. 0: the .text of every kernel is run 11's.
#if !defined(FUSEBENCH_FP8_WGMMA_N144_RS)
#define FUSEBENCH_FP8_WGMMA_N144_RS 1
#endif
#if !defined(FUSEBENCH_FP8_WGMMA_EARLY_FILLS)
#define FUSEBENCH_FP8_WGMMA_EARLY_FILLS 0
#endif
#if !defined(FUSEBENCH_FP8_WGMMA_STORE_WAIT_READ)
#define FUSEBENCH_FP8_WGMMA_STORE_WAIT_READ 0
#endif
#if !defined(FUSEBENCH_FP8_WGMMA_N144_SCALES)
#define FUSEBENCH_FP8_WGMMA_N144_SCALES 0
#endif

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FUSEBENCH_FP8_WGMMA_DEVICE_CODE 1
#include "kernels/common/sm90.cuh"
#endif

namespace fusebench::kernels {
namespace fp8_wgmma {
namespace {

constexpr int bm = 128, bk = 128;  // rows of a tile of D; K block [bytes = elements]
// Columns of a tile of D (BN, a template parameter): 128, or 192 (options.tile_n; two consumer
// warpgroups of m64n192: 17% fewer L2 -> shared bytes per FLOP, NOTES.md run 5).
[[maybe_unused]] constexpr int group_m = 8;                   // row blocks per raster group
constexpr int threads = 384;                 // warpgroups 0, 1: consumers; 2: producer

template <int BN, int STAGES>
struct config {
    static constexpr int a_bytes = bm * bk, b_bytes = BN * bk;  // one stage's tiles [bytes]
    static constexpr int stage_bytes = a_bytes + b_bytes;
    static constexpr int c_offset = STAGES * stage_bytes;     // bf16 staging of D for the TMA store
    static constexpr int c_bytes = bm * BN * 2;               // per warpgroup: BN / 64 [64 rows][128 B] pieces
    static constexpr int bar_offset = c_offset + c_bytes;
    // FUSEBENCH_FP8_WGMMA_N144_SCALES (128 x 144 tiles): per stage the staged scale factors, a float2
    // (a_scale * b_scale of B's scale blocks lo and lo + 1) per row of the tile.
    static constexpr int scl_offset = bar_offset + 16 * STAGES;
    static constexpr int scl_bytes = BN == 144 && FUSEBENCH_FP8_WGMMA_N144_SCALES && FUSEBENCH_FP8_WGMMA_N144_RS ? STAGES * bm * 8 : 0;
    static constexpr int smem_bytes = scl_offset + scl_bytes + 1024;  // + full/empty barriers (+ scales) + alignment slack
    static_assert(smem_bytes <= 232448, "more than the 227 KB of shared memory a block may have");
    static_assert(a_bytes % 1024 == 0 && b_bytes % 1024 == 0, "tiles 1024-byte aligned (swizzle atoms)");
};
// The kernels whose scale factors are staged in shared memory (FUSEBENCH_FP8_WGMMA_N144_SCALES): the
// overlapped non-cluster 128 x 144 kernels, whose consumer takes A from registers (run_tile_rs).
// Their full barriers take 33 arrivals a phase: the producer's (with the TMA bytes) and the 32 lanes
// of the scale warp.
[[maybe_unused]] constexpr bool staged_scales_n144(int bn, int ctas, bool overlap) {
    return FUSEBENCH_FP8_WGMMA_N144_SCALES != 0 && FUSEBENCH_FP8_WGMMA_N144_RS != 0 && bn == 144 && ctas == 1 && overlap;
}

struct params {
    const float* a_scale;  // [m][k_blocks]
    const float* b_scale;  // [n_blocks][k_blocks]
    __nv_bfloat16* d;      // [m][n]
    int m, n, k_blocks, m_blocks, n_blocks;  // n_blocks: column blocks of BN (tiles), not of 128
    int n_scale_blocks;                       // ceil(n / 128): rows of b_scale
    // The scheduler's units: a cluster of CLUSTER CTAs takes CLUSTER vertically adjacent tiles
    // (the same column block of B) at a time; sched_m_blocks = ceil(m_blocks / CLUSTER).
    int sched_m_blocks, sched_tiles;
    int tma_store;  // 1: D through shared memory and a TMA store (n % 8 == 0, D 16-byte aligned)
    // The K order of a tile (options.k_stagger, options.k_serpentine): a tile starts at K block
    // (mp + n_blk) % k_stagger (scheduler unit coordinates; 0: at 0) and wraps around; with k_serpentine every second tile
    // of a CTA walks that order backwards.
    int k_stagger, k_serpentine;
    // options.split (kernels/fp8/split_plan.hpp): the work split over the grid; the stream-K
    // partial sums, [grid][2 warpgroups][BN / 8][128 threads] float4 (each thread's accumulator
    // fragment as it is in its registers), and their ready flags [grid][2]: a flag holds sk_token
    // once its partial is written, and its reader puts it back to 0 (so the workspace is clean
    // after every launch, and a flag left by an earlier launch never reads as this one's).
    fp8_gemm_split_plan plan;
    float4* sk_partial;
    unsigned long long* sk_flag;
    unsigned long long sk_token;
    // The multicast clusters of the 144- and 192-wide tiles (options.cluster x options.cluster_n
    // CTAs): a cluster takes cluster x cluster_n tiles at a time; sched_n_blocks = ceil(n_blocks /
    // cluster_n) (the scheduler's column units; 128-wide tiles: n_blocks).
    int sched_n_blocks;
    // options.l2_prefetch (the kernels instantiated with L2PF): K blocks ahead of the ring's loads
    // that the producer asks the TMA unit to bring into L2.
    int l2_prefetch;
};

#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
// Per-K-block time stamps, a diagnostic build only (kernels/fp8/probes/kv_trace.cu defines
// FUSEBENCH_FP8_WGMMA_TRACE and includes this file; off in the library, whose machine code does
// not change). Non-cluster kernels of 144, 192 and 256 columns with the overlap (consume_n144,
// consume_n192, consume_pieces form 2) and their producer: per CTA, trace_header words
// (trace_hdr_*), then for each K block `it` the CTA consumes (over all its tiles) trace_slots
// clock64 values (trace_*): one thread each of the producer, a landing watcher (an otherwise idle
// producer warp that waits on every fill's full barrier) and each consumer warpgroup (its thread 0)
// writes its stamps. fp8_trace null: nothing is written.
constexpr int trace_header = 8, trace_slots = 18;
enum : int {
    trace_hdr_gt0 = 0,     // %globaltimer at the start (thread 0, after the barrier init)
    trace_hdr_clk0 = 1,    // clock64 at the same point
    trace_hdr_gt1 = 2,     // %globaltimer at the end (thread 0, after its TMA stores completed)
    trace_hdr_clk1 = 3,    // clock64 at the same point
    trace_hdr_smid = 4,    // %smid
    trace_hdr_fills = 5,   // K blocks consumed by warpgroup 0
    trace_hdr_epi0 = 6,    // warpgroup 0: clock64 before its last tile's store_block
    trace_hdr_epi1 = 7,    // ... after it
    trace_p_wait0 = 0,     // producer: before its wait on the stage's empty barrier
    trace_p_wait1 = 1,     // ... after it
    trace_p_issued = 2,    // ... after both TMA loads are issued
    trace_land = 3,        // watcher: the fill's full barrier completed (the stage landed)
    trace_wg = 4,          // consumer warpgroup w's stamps at trace_wg + trace_wg_n w + ...
    trace_wg_n = 7,
    trace_c_fw0 = 0,       // before the wait on the fill's full barrier
    trace_c_fw1 = 1,       // after it
    trace_c_i0 = 2,        // the first half (piece 0) of the block's wgmma issued (committed)
    trace_c_i1 = 3,        // the block's last half (piece) issued
    trace_c_p0 = 4,        // first half promoted (pieces: before the last piece's wait_group 0)
    trace_c_d = 5,         // the wait_group 0 that completes the block returned (then the release)
    trace_c_p1 = 6,        // the last half (piece) promoted
};
__device__ unsigned long long* fp8_trace = nullptr;
__device__ int fp8_trace_max_fills = 0;
#endif

#if defined(FUSEBENCH_FP8_WGMMA_DEVICE_CODE)

#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
__device__ __forceinline__ unsigned long long trace_clock() {
    unsigned long long c;
    asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(c)::"memory");
    return c;
}
__device__ __forceinline__ unsigned long long trace_globaltimer() {
    unsigned long long c;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(c)::"memory");
    return c;
}
// This CTA's row of the trace (null when off).
__device__ __forceinline__ unsigned long long* trace_row() {
    unsigned long long* t = fp8_trace;
    if (t == nullptr) return nullptr;
    return t + static_cast<std::size_t>(blockIdx.x) * (trace_header + static_cast<std::size_t>(fp8_trace_max_fills) * trace_slots);
}
// The clock is read unconditionally and the store predicated (`on`: the stamping thread, and a
// trace buffer set), so that a stamp adds no branch (a basic block boundary, across which ptxas
// would not interleave the surrounding instructions). The probe sizes the buffer for every fill.
__device__ __forceinline__ void trace_stamp(unsigned long long* row, bool on, int fill, int slot) {
    const unsigned long long c = trace_clock();
    if (on) row[trace_header + static_cast<std::size_t>(fill) * trace_slots + slot] = c;
}
// A consumer warpgroup's stamp (its thread 0); acc-writing FMAs before it are pinned by a
// reg_fence where the stamp is meant to follow them.
#define FP8_TRACE_WG(fill, what) trace_stamp(trace_row_, trace_on_, (fill), trace_wg + trace_wg_n * wg + (what))
#define FP8_TRACE_ROW                                     \
    unsigned long long* const trace_row_ = trace_row(); \
    const bool trace_on_ = (tid & 127) == 0 && trace_row_ != nullptr
#define FP8_TRACE_FENCE(x) reg_fence(x)
// Warpgroup 0's thread 0 writes header word `slot` (the value: an expression).
#define FP8_TRACE_HDR(slot, value)                                                 \
    do {                                                                           \
        if (tid == 0 && trace_row_ != nullptr) trace_row_[(slot)] = (value);       \
    } while (0)
#else
#define FP8_TRACE_HDR(slot, value) ((void)0)
#define FP8_TRACE_WG(fill, what) ((void)0)
#define FP8_TRACE_ROW
#define FP8_TRACE_FENCE(x) ((void)0)
#endif

// Unit t of a grouped raster of n_units columns: group_m (cluster) row units at a time, the row
// unit fastest.
__device__ __forceinline__ void raster_coords(const params& p, int n_units, int t, int& m_unit, int& n_unit) {
    const int per_group = group_m * n_units;
    const int g = t / per_group;
    const int first = g * group_m;
    const int rows = min(group_m, p.sched_m_blocks - first);
    const int r = t - g * per_group;
    m_unit = first + r % rows;
    n_unit = r / rows;
}

// Unit t of the grouped raster of tiles.
__device__ __forceinline__ void tile_coords(const params& p, int t, int& m_blk, int& n_blk) {
    raster_coords(p, p.n_blocks, t, m_blk, n_blk);
}

// Unit t of the multicast clusters' raster (p.sched_n_blocks column units of cluster_n tiles each);
// otherwise tile_coords's order.
__device__ __forceinline__ void sched_coords(const params& p, int t, int& mp, int& np) {
    raster_coords(p, p.sched_n_blocks, t, mp, np);
}

// K order of a tile: the K block at position j (0 <= j < k_blocks) of the scheduler unit at
// (mp, n_blk), the CTA's `local`-th tile. The producer and the consumers (of both CTAs of a
// cluster) walk the same order.
struct k_order {
    int first;  // the K block at position 0 (before reversal)
    bool reverse;
};
__device__ __forceinline__ k_order k_order_of(const params& p, int m_blk, int n_blk, int local) {
    k_order o;
    o.first = p.k_stagger > 0 ? ((m_blk + n_blk) % p.k_stagger) % p.k_blocks : 0;
    o.reverse = p.k_serpentine != 0 && (local & 1) != 0;
    return o;
}
__device__ __forceinline__ int k_block_at(const params& p, const k_order& o, int j) {
    int kb = (o.reverse ? p.k_blocks - 1 - j : j) + o.first;
    if (kb >= p.k_blocks) kb -= p.k_blocks;
    return kb;
}

// The tile a CTA takes at unit t and its K order: alone (CM = CN = 1) tile t of the grouped raster;
// in a CM x CN multicast cluster the tile at this CTA's rank (crank, CM fastest) of unit t of the
// clusters' raster, with one K order for the whole cluster.
template <int CM, int CN>
__device__ __forceinline__ void place_tile(const params& p, int t, int local, int crank, int& m_blk, int& n_blk,
                                           k_order& ko) {
    if constexpr (CM * CN > 1) {
        int mp, np;
        sched_coords(p, t, mp, np);
        m_blk = mp * CM + crank % CM;
        n_blk = np * CN + crank / CM;
        ko = k_order_of(p, mp, np, local);
    } else {
        tile_coords(p, t, m_blk, n_blk);
        ko = k_order_of(p, m_blk, n_blk, local);
    }
}

// A consumer thread's two accumulator rows of row block m_blk (r0 and r0 + 8, for warpgroup wg and
// its row in it) and their rows of A's scales: null past m (those rows arrive as zeros, scale 0).
__device__ __forceinline__ void a_rows_of(const params& p, int m_blk, int bm, int wg, int row_in_wg, int& r0, int& r1,
                                          const float*& as0, const float*& as1) {
    r0 = m_blk * bm + wg * 64 + row_in_wg;
    r1 = r0 + 8;
    as0 = r0 < p.m ? p.a_scale + static_cast<std::size_t>(r0) * p.k_blocks : nullptr;
    as1 = r1 < p.m ? p.a_scale + static_cast<std::size_t>(r1) * p.k_blocks : nullptr;
}

using sm90::mbar_arrive;
using sm90::mbar_expect_tx;
using sm90::mbar_init;
using sm90::mbar_wait;
using sm90::named_barrier_sync;
using sm90::reg_fence;
using sm90::smem_u32;
using sm90::tma_load_2d;
using sm90::wgmma_commit;
using sm90::wgmma_fence;
using sm90::wgmma_wait;
// Shared-memory matrix descriptor of a K-major tile with the 128-byte swizzle: stride byte offset
// 1024 (8 rows of 128 bytes); the leading byte offset is unused by this layout.
__device__ __forceinline__ std::uint64_t make_desc(std::uint32_t addr) { return sm90::make_desc(addr, 16, 1024); }
// B's half tile, multicast: written at the same offset of every CTA in `mask`, each CTA's
// barrier at that offset credited with the bytes it received.
__device__ __forceinline__ void tma_load_2d_multicast(std::uint32_t dst, const CUtensorMap* map, int c0, int c1, std::uint32_t bar,
                                                      std::uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], "
        "%5;\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}
// A box of the tensor map into L2 only (no shared memory, no barrier): options.l2_prefetch.
__device__ __forceinline__ void tma_prefetch_2d(const CUtensorMap* map, int c0, int c1) {
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, std::uint32_t src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                     reinterpret_cast<std::uint64_t>(map)),
                 "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}
__device__ __forceinline__ std::uint32_t cluster_rank() {
    std::uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Arrive on the barrier at the same offset in CTA `rank` of the cluster. The default semantics
// (release at CTA scope, as CUTLASS's ClusterBarrier::arrive): the stage's reads by this warp's
// wgmma are complete (wgmma.wait_group) before it arrives, and the peer's producer orders its TMA
// writes after its own wait. `.release.cluster` here (the form up to run 8) makes ptxas put a
// cluster-scope memory barrier before every arrive: Nsight Compute showed the consumer warps
// stalled on it (membar 6-18 cycles per issued instruction) and the cluster kernels 2.6-12x
// slower than without a cluster (c2's "2x", NOTES.md run 9).
__device__ __forceinline__ void mbar_arrive_cluster(std::uint32_t bar, std::uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, "
        "[remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}

// The stream-K ready flags (options.split): the writer's partial sum is visible to any thread that
// reads the flag's value with acquire semantics at GPU scope.
__device__ __forceinline__ unsigned long long ld_acquire_u64(const unsigned long long* f) {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(f) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_u64(unsigned long long* f, unsigned long long v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;\n" ::"l"(f), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_u64(unsigned long long* f, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;\n" ::"l"(f), "l"(v) : "memory");
}

// The consumers' D block of 64 x BN (one warpgroup's half of the tile) to global memory: through
// shared memory and TMA stores (p.tma_store), else bf16 stores straight from the registers.
template <int BN>
__device__ __forceinline__ void store_block(const float (&acc)[BN / 2], const params& p, const CUtensorMap* tm_d, std::uint32_t stage_c,
                                            int tid, int wg, int row_in_wg, int col_q, int m_blk, int n_blk, int r0, int r1) {
    if (p.tma_store) {
        // Epilogue through shared memory: the warpgroup's 64 x BN bf16 block as BN / 64
        // [64 rows][128 B] pieces in the 128-byte swizzle (16-byte chunk c of row r at
        // c ^ (r % 8): a warp's 8 rows of one chunk hit 8 different bank groups), then one
        // thread's TMA stores, which clip rows >= m and columns >= n. The staging is reused
        // once the previous tile's stores have read it.
        if ((tid & 127) == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        named_barrier_sync(1 + wg, 128);
        // BN % 64 != 0 (the 144-wide tile): the first BN / 64 pieces of 64 columns through the
        // staging and TMA stores, the last BN % 64 columns straight from the registers below (a
        // 64-column box would write into the next tile's columns).
        constexpr int staged_groups = BN / 64 * 8;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row_in_wg + 8 * h;
#pragma unroll
            for (int nb = 0; nb < staged_groups; ++nb) {
                __nv_bfloat162 v = __floats2bfloat162_rn(acc[nb * 4 + 2 * h], acc[nb * 4 + 2 * h + 1]);
                const std::uint32_t addr =
                    stage_c + static_cast<std::uint32_t>((nb >> 3) * (64 * 128) + row * 128 + (((nb & 7) ^ (row & 7)) << 4) + col_q * 2);
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(*reinterpret_cast<std::uint32_t*>(&v)) : "memory");
            }
        }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the writes, visible to the TMA engine
        named_barrier_sync(1 + wg, 128);
        if ((tid & 127) == 0) {
#pragma unroll
            for (int piece = 0; piece < BN / 64; ++piece) {
                tma_store_2d(tm_d, stage_c + piece * (64 * 128), n_blk * BN + piece * 64, m_blk * bm + wg * 64);
            }
            asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        }
        if constexpr (BN % 64 != 0) {
            // n % 8 == 0 here (the TMA-store condition): a pair at an even column is aligned and
            // lies wholly inside or wholly past n.
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = h ? r1 : r0;
                if (row >= p.m) continue;
                __nv_bfloat16* drow = p.d + static_cast<std::size_t>(row) * p.n;
#pragma unroll
                for (int nb = staged_groups; nb < BN / 8; ++nb) {
                    const int col = n_blk * BN + nb * 8 + col_q;
                    if (col < p.n) *reinterpret_cast<__nv_bfloat162*>(drow + col) = __floats2bfloat162_rn(acc[nb * 4 + 2 * h], acc[nb * 4 + 2 * h + 1]);
                }
            }
        }
    } else {
        // Epilogue straight from the registers (rows < m, columns < n; pairs as one 4-byte
        // store where n is even, so the pair is aligned).
        const int c_base = n_blk * BN + col_q;
        const bool pairs = (p.n & 1) == 0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = h ? r1 : r0;
            if (row >= p.m) continue;
            __nv_bfloat16* drow = p.d + static_cast<std::size_t>(row) * p.n;
#pragma unroll
            for (int nb = 0; nb < BN / 8; ++nb) {
                const int col = c_base + nb * 8;
                const float v0 = acc[nb * 4 + 2 * h], v1 = acc[nb * 4 + 2 * h + 1];
                if (pairs && col + 1 < p.n) {
                    *reinterpret_cast<__nv_bfloat162*>(drow + col) = __floats2bfloat162_rn(v0, v1);
                } else {
                    if (col < p.n) drow[col] = __float2bfloat16_rn(v0);
                    if (col + 1 < p.n) drow[col + 1] = __float2bfloat16_rn(v1);
                }
            }
        }
    }
}

// acc += f0 * blk on rows r0, f1 * blk on rows r1 (the wgmma m64nN fragment: elements 0, 1 of
// every group of 4 on row r0, elements 2, 3 on r1).
__device__ __forceinline__ void promote(float (&acc)[64], const float (&blk)[64], float f0, float f1) {
#pragma unroll
    for (int nb = 0; nb < 128 / 8; ++nb) {
        acc[nb * 4 + 0] = fmaf(f0, blk[nb * 4 + 0], acc[nb * 4 + 0]);
        acc[nb * 4 + 1] = fmaf(f0, blk[nb * 4 + 1], acc[nb * 4 + 1]);
        acc[nb * 4 + 2] = fmaf(f1, blk[nb * 4 + 2], acc[nb * 4 + 2]);
        acc[nb * 4 + 3] = fmaf(f1, blk[nb * 4 + 3], acc[nb * 4 + 3]);
    }
}

// acc += blk on the 8-column groups NB0 .. NB0 + NBS - 1 of a 64 x 192 fragment (blk holds those
// groups only, from group 0), group g scaled by the factors of its 64-column third g / 8: f0 on
// row r0 (elements 0, 1 of the group's 4), f1 on row r1 (elements 2, 3).
template <int NB0, int NBS, int BLK>
__device__ __forceinline__ void promote_thirds(float (&acc)[96], const float (&blk)[BLK], const float (&f0)[3], const float (&f1)[3]) {
    static_assert(NB0 >= 0 && NB0 + NBS <= 24 && NBS * 4 <= BLK, "groups of the 64 x 192 fragment");
#pragma unroll
    for (int i = 0; i < NBS; ++i) {
        const int nb = NB0 + i, third = nb / 8;
        acc[nb * 4 + 0] = fmaf(f0[third], blk[i * 4 + 0], acc[nb * 4 + 0]);
        acc[nb * 4 + 1] = fmaf(f0[third], blk[i * 4 + 1], acc[nb * 4 + 1]);
        acc[nb * 4 + 2] = fmaf(f1[third], blk[i * 4 + 2], acc[nb * 4 + 2]);
        acc[nb * 4 + 3] = fmaf(f1[third], blk[i * 4 + 3], acc[nb * 4 + 3]);
    }
}

// The consumer warpgroups of the 128 x 192 tile (options.tile_n = 192; no cluster). Each warpgroup
// owns 64 rows x 192 columns: 96 fp32 accumulators per thread, and per K block the product of
// four m64n192k32 wgmma (OVERLAP false: one 96-register block accumulator; 192 registers with acc)
// or of two halves of 96 columns (OVERLAP true, below).
//
// B's scales: a 192-wide column block n_blk starts at column 192 n_blk = 128 (3 n_blk / 2) +
// 64 (n_blk % 2), so it straddles exactly two 128-column scale blocks: its 8-column groups 0-7
// (columns 0-63) lie in block lo = 3 n_blk / 2, groups 16-23 (columns 128-191) in lo + 1, and
// groups 8-15 in lo where n_blk is even, in lo + 1 where it is odd. Past the last scale block
// (the tile's right part beyond n) lo's scale is used: B's rows there arrive as zeros and those
// columns are never stored, and b_scale is not read out of bounds.
//
// OVERLAP: two block accumulators of 96 registers (c1_overlap's scheme) plus acc would need 288
// registers, over the 232 of setmaxnreg; instead each K block's product is taken in two halves of
// 96 columns (m64n96k32, two commit groups, h0 and h1 of 48 registers; acc 96 + 48 + 48 = 192):
// half 0 of each block is promoted while its half 1 is on the tensor cores; half 1 after a drain,
// with the next block's half 0 already issued (so half of the promotion runs under this
// warpgroup's own wgmma; the other warpgroup's keep the tensor cores busy during the rest). The
// same FMAs in the same order as OVERLAP false: bit-identical D. As in the 128-wide kernel, no
// wgmma group is in flight across the tile loop's back edge (C7514) and the K loop issues
// unconditionally; each tile's epilogue runs after the next tile's first block is issued.
//
// SPLIT (options.split, OVERLAP only): the CTA walks the work items of kernels/fp8/split_plan.hpp
// (whole tiles, then its stream-K range) instead of every grid-th tile; see consume_items below.
//
// CM x CN > 1 (options.cluster x options.cluster_n, OVERLAP only, no SPLIT): the CTA is rank
// rm + CM rn of a cluster that takes CM x CN adjacent tiles at a time (sched_coords), its tile at
// row block CM mp + rm, column block CN np + rn; the CTAs of one column (same rn) share B's tile,
// those of one row (same rm) A's tile, each loading a slice of both into all that share it (TMA
// multicast, the producer in fp8_gemm_wgmma_kernel). Each stage is written by the other CTAs'
// producers, so every consumer warp frees it in every CTA of the cluster. Tiles past M or N (a
// ragged cluster) compute zeros and store nothing.
template <int STAGES, bool OVERLAP, bool SPLIT, int CM = 1, int CN = 1>
__device__ __forceinline__ void consume_n192(const params& p, const CUtensorMap* tm_d, std::uint32_t base, int tid, int wg, int first_tile,
                                             int tile_step) {
    constexpr int BN = 192;
    static_assert(CM * CN == 1 || (OVERLAP && !SPLIT), "the multicast clusters run the overlapped consumer without the split");
    [[maybe_unused]] const int crank = CM * CN > 1 ? static_cast<int>(cluster_rank()) : 0;
    using cfg = config<BN, STAGES>;
    const std::uint32_t bar = base + cfg::bar_offset;
    auto stage_a = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes); };
    auto stage_b = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes + cfg::a_bytes); };
    auto full = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(s); };
    auto empty = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(STAGES + s); };
    const int lane = tid & 31, warp = (tid >> 5) & 3;
    const int row_in_wg = warp * 16 + (lane >> 2);  // and + 8
    const int col_q = (lane & 3) * 2;
    const std::uint32_t stage_c = base + cfg::c_offset + static_cast<std::uint32_t>(wg * (64 * BN * 2));
    struct tile_info {
        int m_blk, n_blk, r0, r1;
        const float *as0, *as1, *bs_lo, *bs_hi;
        bool odd;  // n_blk odd: groups 8-15 take bs_hi's scale
        k_order ko;
    };
    auto tile_at = [&](int t, int local) {
        tile_info ti;
        place_tile<CM, CN>(p, t, local, crank, ti.m_blk, ti.n_blk, ti.ko);
        a_rows_of(p, ti.m_blk, bm, wg, row_in_wg, ti.r0, ti.r1, ti.as0, ti.as1);
        int lo = (3 * ti.n_blk) / 2;
        if constexpr (CN > 1) lo = min(lo, p.n_scale_blocks - 1);  // a tile past N (ragged cluster): any scale row
        const int hi = lo + 1 < p.n_scale_blocks ? lo + 1 : lo;
        ti.bs_lo = p.b_scale + static_cast<std::size_t>(lo) * p.k_blocks;
        ti.bs_hi = p.b_scale + static_cast<std::size_t>(hi) * p.k_blocks;
        ti.odd = (ti.n_blk & 1) != 0;
        return ti;
    };
    // The scales of the K block at position j of the tile's K order (loads only; the products are
    // taken where they are used, so the loads stay in flight under the barrier wait and the wgmma).
    struct scales {
        float sa0, sa1, lo, hi;
    };
    auto block_scales = [&](const tile_info& ti, int j) {
        const int kb = k_block_at(p, ti.ko, j);
        scales sc;
        sc.lo = __ldg(ti.bs_lo + kb);
        sc.hi = __ldg(ti.bs_hi + kb);
        sc.sa0 = ti.as0 ? __ldg(ti.as0 + kb) : 0.f;
        sc.sa1 = ti.as1 ? __ldg(ti.as1 + kb) : 0.f;
        return sc;
    };
    // a_scale * b_scale per 64-column third, rows r0 (f0) and r1 (f1).
    struct factors {
        float f0[3], f1[3];
    };
    auto factors_of = [](const scales& sc, bool odd) {
        factors f;
        const float mid = odd ? sc.hi : sc.lo;
        f.f0[0] = sc.sa0 * sc.lo;
        f.f1[0] = sc.sa1 * sc.lo;
        f.f0[1] = sc.sa0 * mid;
        f.f1[1] = sc.sa1 * mid;
        f.f0[2] = sc.sa0 * sc.hi;
        f.f1[2] = sc.sa1 * sc.hi;
        return f;
    };
    auto release = [&](int fill) {
        if constexpr (CM * CN > 1) {
            if (lane == 0) {
#pragma unroll
                for (int r = 0; r < CM * CN; ++r) mbar_arrive_cluster(empty(fill % STAGES), static_cast<std::uint32_t>(r));
            }
        } else {
            if (lane == 0) mbar_arrive(empty(fill % STAGES));
        }
    };
    int it = 0;  // K blocks consumed by this CTA, over all its tiles
    if constexpr (!OVERLAP) {
        for (int t = first_tile, local = 0; t < p.sched_tiles; t += tile_step, ++local) {
            const tile_info ti = tile_at(t, local);
            float acc[96];
#pragma unroll
            for (int i = 0; i < 96; ++i) acc[i] = 0.f;
            for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                const scales sc = block_scales(ti, kb);
                float blk[96];
                const int s = it % STAGES;
                mbar_wait(full(s), (it / STAGES) & 1);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < bk / 32; ++ks) {
                    const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
                    const std::uint64_t db = make_desc(stage_b(s) + ks * 32);
                    sm90::wgmma_fp8_op<192>::ss(blk, da, db, ks > 0 ? 1 : 0);
                }
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(blk);
                release(it);
                const factors f = factors_of(sc, ti.odd);
                promote_thirds<0, 24>(acc, blk, f.f0, f.f1);
            }
            store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, ti.m_blk, ti.n_blk, ti.r0, ti.r1);
        }
    } else {
        // Half h (0: columns 0-95, 1: 96-191) of fill `fill`'s product into hh (one commit group);
        // half 0 first waits for the fill to arrive.
        FP8_TRACE_ROW;
        auto issue_h0 = [&](float (&hh)[48], int fill) {
            const int s = fill % STAGES;
            FP8_TRACE_WG(fill, trace_c_fw0);
            mbar_wait(full(s), (fill / STAGES) & 1);
            FP8_TRACE_WG(fill, trace_c_fw1);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < bk / 32; ++ks) {
                const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
                const std::uint64_t db = make_desc(stage_b(s) + ks * 32);
                sm90::wgmma_fp8_op<96>::ss(hh, da, db, ks > 0 ? 1 : 0);
            }
            wgmma_commit();
            FP8_TRACE_WG(fill, trace_c_i0);
        };
        auto issue_h1 = [&](float (&hh)[48], int fill) {
            const int s = fill % STAGES;
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < bk / 32; ++ks) {
                const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
                const std::uint64_t db = make_desc(stage_b(s) + 96 * bk + ks * 32);  // B's rows 96-191 (1024-byte aligned)
                sm90::wgmma_fp8_op<96>::ss(hh, da, db, ks > 0 ? 1 : 0);
            }
            wgmma_commit();
            FP8_TRACE_WG(fill, trace_c_i1);
        };
        float h0[48], h1[48], acc[96];
        tile_info prev{};
        // SPLIT: the tail kernel (split_plan.hpp): no whole tiles (the plain kernel runs those in a
        // launch of its own), only the CTA's tail piece below.
        const int whole_end = SPLIT ? 0 : p.sched_tiles;
        for (int t = first_tile, local = 0; t < whole_end; t += tile_step, ++local) {
            const tile_info ti = tile_at(t, local);
            scales sc = block_scales(ti, 0);
            issue_h0(h0, it);
            issue_h1(h1, it);
            if (t != first_tile && (CM * CN == 1 || (prev.m_blk < p.m_blocks && prev.n_blk < p.n_blocks))) {
                store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
            }
#pragma unroll
            for (int i = 0; i < 96; ++i) acc[i] = 0.f;
            // Half 0 of block 0 is retired under its half 1; then, with half 1 of block j in flight
            // at the loop's head: block j + 1's half 0 goes in, both drain (wait_group 0), half 1
            // of block j is promoted (only the other warpgroup's wgmma run meanwhile), block
            // j + 1's half 1 goes in and its half 0 is promoted under it. So half of the promotion
            // FMAs run under this warpgroup's own wgmma. Promoting half 1 under block j + 1's half
            // 0 (wait_group 1), in every order tried (NOTES.md run 5), makes ptxas 13.0 serialize
            // every wgmma of the kernel (C7514).
            factors f = factors_of(sc, ti.odd);
            wgmma_wait<1>();
            reg_fence(h0);
            promote_thirds<0, 12>(acc, h0, f.f0, f.f1);
            FP8_TRACE_FENCE(acc);
            FP8_TRACE_WG(it, trace_c_p0);
            for (int j = 0; j + 1 < p.k_blocks; ++j, ++it) {
                sc = block_scales(ti, j + 1);
                issue_h0(h0, it + 1);
                wgmma_wait<0>();  // half 1 of block j (its stage is free) and half 0 of block j + 1
                FP8_TRACE_WG(it, trace_c_d);
                reg_fence(h1);
                release(it);
                promote_thirds<12, 12>(acc, h1, f.f0, f.f1);
                FP8_TRACE_FENCE(acc);
                FP8_TRACE_WG(it, trace_c_p1);
                f = factors_of(sc, ti.odd);
                issue_h1(h1, it + 1);
                reg_fence(h0);
                promote_thirds<0, 12>(acc, h0, f.f0, f.f1);
                FP8_TRACE_FENCE(acc);
                FP8_TRACE_WG(it + 1, trace_c_p0);
            }
            // Half 1 of the tile's last block.
            wgmma_wait<0>();
            FP8_TRACE_WG(it, trace_c_d);
            reg_fence(h1);
            release(it);
            promote_thirds<12, 12>(acc, h1, f.f0, f.f1);
            FP8_TRACE_FENCE(acc);
            FP8_TRACE_WG(it, trace_c_p1);
            ++it;
            prev = ti;
        }
        if constexpr (SPLIT) {
            // The CTA's tail piece: K positions [j0, j1) of a tail tile, walked as a whole tile is
            // above, then:
            // - piece s >= 1 (j0 > 0): its partial sum into its slot of the workspace, then the
            //   ready flag;
            // - piece 0: pieces 1, 2, ... added in that order (a fixed order: deterministic), each
            //   once its flag is up, then D stored.
            fp8_gemm_work w;
            if (!fp8_gemm_split_piece(p.plan, first_tile, w)) return;
            const tile_info ti = tile_at(w.tile, 0);
            scales sc = block_scales(ti, w.j0);
            issue_h0(h0, it);
            issue_h1(h1, it);
#pragma unroll
            for (int i = 0; i < 96; ++i) acc[i] = 0.f;
            factors f = factors_of(sc, ti.odd);
            wgmma_wait<1>();
            reg_fence(h0);
            promote_thirds<0, 12>(acc, h0, f.f0, f.f1);
            for (int j = w.j0; j + 1 < w.j1; ++j, ++it) {
                sc = block_scales(ti, j + 1);
                issue_h0(h0, it + 1);
                wgmma_wait<0>();
                reg_fence(h1);
                release(it);
                promote_thirds<12, 12>(acc, h1, f.f0, f.f1);
                f = factors_of(sc, ti.odd);
                issue_h1(h1, it + 1);
                reg_fence(h0);
                promote_thirds<0, 12>(acc, h0, f.f0, f.f1);
            }
            wgmma_wait<0>();
            reg_fence(h1);
            release(it);
            promote_thirds<12, 12>(acc, h1, f.f0, f.f1);
            const int tw = tid & 127;
            if (w.j0 > 0) {
                const int own = first_tile - p.plan.tail_tiles;  // fp8_gemm_split_slot of this piece
                float4* slot = p.sk_partial + (static_cast<std::size_t>(own) * 2 + static_cast<std::size_t>(wg)) * (BN / 8 * 128) + tw;
#pragma unroll
                for (int q = 0; q < BN / 8; ++q) __stcg(slot + q * 128, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
                named_barrier_sync(1 + wg, 128);  // every thread's part written
                if (tw == 0) {
                    __threadfence();
                    st_release_u64(p.sk_flag + 2 * own + wg, p.sk_token);
                }
                return;
            }
            for (int piece = 1; piece < p.plan.splits; ++piece) {
                const int c = fp8_gemm_split_slot(p.plan, first_tile, piece);
                if (tw == 0) {
                    unsigned long long* flag = p.sk_flag + 2 * c + wg;
                    while (ld_acquire_u64(flag) != p.sk_token) __nanosleep(64);
                    st_relaxed_u64(flag, 0ull);  // clean for the next launch
                }
                named_barrier_sync(1 + wg, 128);
                const float4* slot = p.sk_partial + (static_cast<std::size_t>(c) * 2 + static_cast<std::size_t>(wg)) * (BN / 8 * 128) + tw;
#pragma unroll
                for (int q = 0; q < BN / 8; ++q) {
                    const float4 v = __ldcg(slot + q * 128);
                    acc[4 * q] += v.x;
                    acc[4 * q + 1] += v.y;
                    acc[4 * q + 2] += v.z;
                    acc[4 * q + 3] += v.w;
                }
            }
            store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, ti.m_blk, ti.n_blk, ti.r0, ti.r1);
            return;
        }
        if (first_tile < p.sched_tiles && (CM * CN == 1 || (prev.m_blk < p.m_blocks && prev.n_blk < p.n_blocks))) {
            FP8_TRACE_HDR(trace_hdr_fills, static_cast<unsigned long long>(it));
            FP8_TRACE_HDR(trace_hdr_epi0, trace_clock());
            store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
            FP8_TRACE_HDR(trace_hdr_epi1, trace_clock());
        }
    }
}

// acc += f0 * blk on rows r0, f1 * blk on rows r1, for the 8-column groups 8 q .. 8 q + 7 of a
// 64 x BN fragment (blk: one m64n64 piece, whose 64 columns lie in one scale block of B).
template <int BN>
__device__ __forceinline__ void promote_piece(float (&acc)[BN / 2], const float (&blk)[32], int q, float f0, float f1) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int nb = 8 * q + i;
        acc[nb * 4 + 0] = fmaf(f0, blk[i * 4 + 0], acc[nb * 4 + 0]);
        acc[nb * 4 + 1] = fmaf(f0, blk[i * 4 + 1], acc[nb * 4 + 1]);
        acc[nb * 4 + 2] = fmaf(f1, blk[i * 4 + 2], acc[nb * 4 + 2]);
        acc[nb * 4 + 3] = fmaf(f1, blk[i * 4 + 3], acc[nb * 4 + 3]);
    }
}

// The consumer warpgroups in 64-column pieces (options.tile_n = 256, or 192 with
// options.pieces64; the overlap, no cluster, no split). Each warpgroup owns 64 rows x BN columns:
// BN / 2 fp32 accumulators per thread. For BN = 256 a whole block accumulator (another 128) does
// not fit the 232 registers of setmaxnreg, nor do two halves of 64; so each K block's product is
// taken in BN / 64 pieces of 64 columns (m64n64k32, one commit group each) into 32-register
// buffers used in turn (two for 4 pieces: acc 128 + 64 = 192 registers; three for 192's 3 pieces, so
// that piece q of every block uses the same buffer: 96 + 96). Each step drains the piece in flight
// (wait_group 0), issues the next piece (the next block's first after the last) into the next
// buffer and promotes the drained one under it: every piece's promotion runs while the tensor
// cores work on the next, where the 128 x 192 half-split form hides only half of it. (Issuing the
// next piece before waiting for the older one, wait_group 1, made ptxas 13.0 serialize every
// wgmma of the 256-wide kernel: C7514.) The cost: A's 64-row slice is read from shared memory once
// per piece. Scale blocks: a 256-wide tile starts at column 128 (2 n_blk): pieces 0, 1 lie in B's
// scale block 2 n_blk, pieces 2, 3 in 2 n_blk + 1; a 192-wide tile as in consume_n192 (piece 0 in
// lo, piece 2 in lo + 1, piece 1 in lo or lo + 1 for n_blk even / odd); past the last scale block
// (B's rows there arrive as zeros, those columns are never stored) the last one is read. 128 x 256
// against 128 x 192: 14% fewer L2 -> shared bytes per FLOP (48 KiB per 8.4 MFLOP), and whole waves
// on 132 SMs where N is a multiple of 1024 (M = 4096: 4096^3 3.88 waves, N = 2048 1.94, N = 7168
// 6.79); 3 stages of 48 KiB + 64 KiB of D staging. The same FMAs in the same order as the other
// forms: bit-identical D on the exact test.
template <int BN, int STAGES, int FORM>
__device__ __forceinline__ void consume_pieces(const params& p, const CUtensorMap* tm_d, std::uint32_t base, int tid, int wg, int first_tile,
                                               int tile_step) {
    static_assert(BN == 192 || BN == 256, "64-column pieces of 192- or 256-wide tiles");
    constexpr int NP = BN / 64;             // pieces per K block
    // Buffers: piece q of every block in buffer q % NB (FORM 1 keeps a piece in flight across
    // blocks, so an odd piece count needs three; FORM 2 drains at each block's end).
    constexpr int NB = FORM == 1 && NP % 2 != 0 ? 3 : 2;
    using cfg = config<BN, STAGES>;
    const std::uint32_t bar = base + cfg::bar_offset;
    auto stage_a = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes); };
    auto stage_b = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes + cfg::a_bytes); };
    auto full = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(s); };
    auto empty = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(STAGES + s); };
    const int lane = tid & 31, warp = (tid >> 5) & 3;
    const int row_in_wg = warp * 16 + (lane >> 2);  // and + 8
    const int col_q = (lane & 3) * 2;
    const std::uint32_t stage_c = base + cfg::c_offset + static_cast<std::uint32_t>(wg * (64 * BN * 2));
    struct tile_info {
        int m_blk, n_blk, r0, r1;
        const float *as0, *as1, *bs_lo, *bs_hi;
        bool mid_hi;  // piece 1 of a 192-wide tile at an odd column block: scale block lo + 1
        k_order ko;
    };
    auto tile_at = [&](int t, int local) {
        tile_info ti;
        place_tile<1, 1>(p, t, local, 0, ti.m_blk, ti.n_blk, ti.ko);
        a_rows_of(p, ti.m_blk, bm, wg, row_in_wg, ti.r0, ti.r1, ti.as0, ti.as1);
        const int lo = BN == 256 ? 2 * ti.n_blk : (3 * ti.n_blk) / 2, hi = lo + 1 < p.n_scale_blocks ? lo + 1 : lo;
        ti.bs_lo = p.b_scale + static_cast<std::size_t>(lo) * p.k_blocks;
        ti.bs_hi = p.b_scale + static_cast<std::size_t>(hi) * p.k_blocks;
        ti.mid_hi = BN == 192 && (ti.n_blk & 1) != 0;
        return ti;
    };
    struct scales {
        float sa0, sa1, lo, hi;
    };
    auto block_scales = [&](const tile_info& ti, int j) {
        const int kb = k_block_at(p, ti.ko, j);
        scales sc;
        sc.lo = __ldg(ti.bs_lo + kb);
        sc.hi = __ldg(ti.bs_hi + kb);
        sc.sa0 = ti.as0 ? __ldg(ti.as0 + kb) : 0.f;
        sc.sa1 = ti.as1 ? __ldg(ti.as1 + kb) : 0.f;
        return sc;
    };
    // a_scale * b_scale of piece q, rows r0 (f0) and r1 (f1).
    struct factors {
        float f0[NP], f1[NP];
    };
    auto factors_of = [](const scales& sc, bool mid_hi) {
        factors f;
#pragma unroll
        for (int q = 0; q < NP; ++q) {
            const float b = BN == 256 ? (q < 2 ? sc.lo : sc.hi) : (q == 0 ? sc.lo : q == 2 ? sc.hi : (mid_hi ? sc.hi : sc.lo));
            f.f0[q] = sc.sa0 * b;
            f.f1[q] = sc.sa1 * b;
        }
        return f;
    };
    auto release = [&](int fill) {
        if (lane == 0) mbar_arrive(empty(fill % STAGES));
    };
    // Piece q (columns 64 q .. 64 q + 63) of fill `fill`'s product into qq (one commit group);
    // piece 0 first waits for the fill to arrive.
    FP8_TRACE_ROW;
    auto issue_piece = [&](float (&qq)[32], int fill, int q) {
        const int s = fill % STAGES;
        if (q == 0) {
            FP8_TRACE_WG(fill, trace_c_fw0);
            mbar_wait(full(s), (fill / STAGES) & 1);
            FP8_TRACE_WG(fill, trace_c_fw1);
        }
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < bk / 32; ++ks) {
            const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
            const std::uint64_t db = make_desc(stage_b(s) + q * (64 * bk) + ks * 32);  // B's rows 64 q .. (1024-byte aligned)
            sm90::wgmma_fp8_op<64>::ss(qq, da, db, ks > 0 ? 1 : 0);
        }
        wgmma_commit();
        if (FORM == 2 && (q == 0 || q == NP - 1)) FP8_TRACE_WG(fill, q == 0 ? trace_c_i0 : trace_c_i1);
    };
    float buf[NB][32], acc[BN / 2];
    tile_info prev{};
    int it = 0;  // K blocks consumed by this CTA, over all its tiles
    for (int t = first_tile, local = 0; t < p.sched_tiles; t += tile_step, ++local) {
        const tile_info ti = tile_at(t, local);
        scales sc = block_scales(ti, 0);
        issue_piece(buf[0], it, 0);
        if (t != first_tile) store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
        factors f = factors_of(sc, ti.mid_hi);
        if constexpr (FORM == 1) {
            // Piece 0 of block j in flight at the loop's head; the loop issues block j + 1's piece 0
            // unconditionally, the tile's last block is peeled below.
            for (int j = 0; j + 1 < p.k_blocks; ++j, ++it) {
                sc = block_scales(ti, j + 1);
#pragma unroll
                for (int q = 0; q < NP; ++q) {
                    wgmma_wait<0>();
                    reg_fence(buf[q % NB]);
                    if (q + 1 < NP) {
                        issue_piece(buf[(q + 1) % NB], it, q + 1);
                    } else {
                        release(it);  // the block's last piece done: the stage is free
                        issue_piece(buf[0], it + 1, 0);
                    }
                    promote_piece<BN>(acc, buf[q % NB], q, f.f0[q], f.f1[q]);
                }
                f = factors_of(sc, ti.mid_hi);
            }
#pragma unroll
            for (int q = 0; q < NP; ++q) {
                wgmma_wait<0>();
                reg_fence(buf[q % NB]);
                if (q + 1 < NP) issue_piece(buf[(q + 1) % NB], it, q + 1);
                else release(it);
                promote_piece<BN>(acc, buf[q % NB], q, f.f0[q], f.f1[q]);
            }
        } else {
            // The rest of block j once its piece 0 is issued: piece q + 1 goes in before piece q is
            // waited for (wait_group 1), the last piece drains (wait_group 0), so no group is in flight
            // across the K loop's back edge.
            auto rest_of_block = [&]() {
#pragma unroll
                for (int q = 0; q < NP; ++q) {
                    if (q + 1 < NP) {
                        issue_piece(buf[(q + 1) % NB], it, q + 1);
                        wgmma_wait<1>();
                    } else {
                        FP8_TRACE_FENCE(acc);
                        FP8_TRACE_WG(it, trace_c_p0);
                        wgmma_wait<0>();
                        FP8_TRACE_WG(it, trace_c_d);
                        release(it);
                    }
                    reg_fence(buf[q % NB]);
                    promote_piece<BN>(acc, buf[q % NB], q, f.f0[q], f.f1[q]);
                }
                FP8_TRACE_FENCE(acc);
                FP8_TRACE_WG(it, trace_c_p1);
            };
            if (p.k_blocks > 1) sc = block_scales(ti, 1);
            rest_of_block();
            for (int j = 1; j < p.k_blocks; ++j) {
                ++it;
                f = factors_of(sc, ti.mid_hi);
                issue_piece(buf[0], it, 0);
                if (j + 1 < p.k_blocks) sc = block_scales(ti, j + 1);
                rest_of_block();
            }
        }
        ++it;
        prev = ti;
    }
    if (first_tile < p.sched_tiles) {
        FP8_TRACE_HDR(trace_hdr_fills, static_cast<unsigned long long>(it));
        FP8_TRACE_HDR(trace_hdr_epi0, trace_clock());
        store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
        FP8_TRACE_HDR(trace_hdr_epi1, trace_clock());
    }
}

// acc += blk on a 64 x 144 fragment (18 groups of 8 columns), group g scaled by the factors of B's
// scale block lo (f0_lo on row r0, f1_lo on r1) where g < gb, of lo + 1 (f0_hi, f1_hi) from gb on.
// blk holds the groups NB0 .. NB0 + NBS - 1 from its group 0 (a whole block: NB0 0, NBS 18; a half
// of 72 columns: NBS 9).
// GBC >= 0: the boundary group known at compile time (gb unused): no compare and select per group.
template <int NB0, int NBS, int BLK, int GBC = -1>
__device__ __forceinline__ void promote_n144(float (&acc)[72], const float (&blk)[BLK], int gb, float f0_lo, float f1_lo, float f0_hi,
                                             float f1_hi) {
    static_assert(NB0 >= 0 && NB0 + NBS <= 18 && NBS * 4 <= BLK, "groups of the 64 x 144 fragment");
#pragma unroll
    for (int i = 0; i < NBS; ++i) {
        const int nb = NB0 + i;
        const bool hi = GBC >= 0 ? nb >= GBC : nb >= gb;
        const float f0 = hi ? f0_hi : f0_lo, f1 = hi ? f1_hi : f1_lo;
        acc[nb * 4 + 0] = fmaf(f0, blk[i * 4 + 0], acc[nb * 4 + 0]);
        acc[nb * 4 + 1] = fmaf(f0, blk[i * 4 + 1], acc[nb * 4 + 1]);
        acc[nb * 4 + 2] = fmaf(f1, blk[i * 4 + 2], acc[nb * 4 + 2]);
        acc[nb * 4 + 3] = fmaf(f1, blk[i * 4 + 3], acc[nb * 4 + 3]);
    }
}

// FUSEBENCH_FP8_WGMMA_N144_SCALES: the scale warp of the staged 128 x 144 kernels (warp 10, idle
// otherwise; all 32 lanes). It walks the consumers' tiles and K orders, fill by fill as the producer:
// once the fill's stage is free (the consumers need it ~STAGES - 1 K blocks later) it loads the
// fill's scales and writes, per row of the tile (lane + 32 i), a_scale * b_scale
// of B's scale blocks lo and lo + 1 (the products factors_of forms: the same bits) into the stage's
// slot, and each lane arrives on the stage's full barrier (release: its stores are seen by the
// consumers that pass the barrier). Rows past m: factor 0 * b_scale, as block_scales' sa = 0.
template <int STAGES>
__device__ __forceinline__ void stage_scales_n144(const params& p, std::uint32_t base, int lane, int first_tile, int tile_step) {
    using cfg = config<144, STAGES>;
    const std::uint32_t bar = base + cfg::bar_offset;
    int it = 0;
    for (int t = first_tile, local = 0; t < p.sched_tiles; t += tile_step, ++local) {
        int m_blk, n_blk;
        k_order ko;
        place_tile<1, 1>(p, t, local, 0, m_blk, n_blk, ko);
        const int lo = (9 * n_blk) / 8, hi = lo + 1 < p.n_scale_blocks ? lo + 1 : lo;
        // 32-bit element offsets (few registers: this warp runs under setmaxnreg 40).
        const int b_lo = lo * p.k_blocks, b_hi = hi * p.k_blocks;
        const int row0 = m_blk * bm + lane;
        const int a_row0 = row0 * p.k_blocks, a_step = 32 * p.k_blocks;
        for (int j = 0; j < p.k_blocks; ++j, ++it) {
            const int kb = k_block_at(p, ko, j);
            const int s = it % STAGES;
            if (it >= STAGES) mbar_wait(bar + 8u * static_cast<std::uint32_t>(STAGES + s), ((it / STAGES) & 1) ^ 1);
            const float f_lo = __ldg(p.b_scale + (b_lo + kb)), f_hi = __ldg(p.b_scale + (b_hi + kb));
            const std::uint32_t slot = base + static_cast<std::uint32_t>(cfg::scl_offset + s * (bm * 8) + lane * 8);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float sa = row0 + 32 * i < p.m ? __ldg(p.a_scale + (a_row0 + i * a_step + kb)) : 0.f;
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(slot + static_cast<std::uint32_t>(i * 32 * 8)), "f"(sa * f_lo),
                             "f"(sa * f_hi)
                             : "memory");
            }
            mbar_arrive(bar + 8u * static_cast<std::uint32_t>(s));
        }
    }
}

// The consumer warpgroups of the 128 x 144 tile (options.tile_n = 144; no cluster, no split): for
// N = 576 (DeepSeek-V3 kv_a) 4 column blocks = N exactly, so M = 4096 is 128 tiles for 132 SMs
// (0.97 of the SMs busy) where 128 x 192 gives 96 (0.73). Each warpgroup owns 64 rows x 144 columns:
// 72 fp32 accumulators per thread, each K block's product from four m64n144k32 into a 72-register
// block accumulator; OVERLAP: in two halves of 72 columns as consume_n192 (half of the promotion
// under this warpgroup's own wgmma), each tile's epilogue after the next tile's first block is
// issued.
// B's scales: column block n_blk starts at column 144 n_blk, inside scale block lo = 144 n_blk / 128,
// and 144 > 128, so every tile straddles lo and lo + 1; the boundary lies at column
// 128 (lo + 1) - 144 n_blk of the tile = 8-column group gb = 16 - 2 (n_blk % 8), from 2 to 16 (a
// multiple of 8 columns: no group straddles). Past the last scale block lo's scale is used (B's
// rows there arrive as zeros and those columns are never stored).
// CM x CN > 1: a multicast cluster, as in consume_n192 (OVERLAP only).
template <int STAGES, bool OVERLAP, int CM = 1, int CN = 1, bool AHEAD = false>
__device__ __forceinline__ void consume_n144(const params& p, const CUtensorMap* tm_d, std::uint32_t base, int tid, int wg, int first_tile,
                                             int tile_step) {
    constexpr int BN = 144;
    static_assert(CM * CN == 1 || OVERLAP, "the multicast clusters run the overlapped consumer");
    static_assert(!AHEAD || (OVERLAP && CM * CN == 1), "the 48-column pieces (options.thirds_ahead): the overlapped consumer without a cluster");
    [[maybe_unused]] const int crank = CM * CN > 1 ? static_cast<int>(cluster_rank()) : 0;
    using cfg = config<BN, STAGES>;
    const std::uint32_t bar = base + cfg::bar_offset;
    auto stage_a = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes); };
    auto stage_b = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes + cfg::a_bytes); };
    auto full = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(s); };
    auto empty = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(STAGES + s); };
    const int lane = tid & 31, warp = (tid >> 5) & 3;
    const int row_in_wg = warp * 16 + (lane >> 2);  // and + 8
    const int col_q = (lane & 3) * 2;
    const std::uint32_t stage_c = base + cfg::c_offset + static_cast<std::uint32_t>(wg * (64 * BN * 2));
    struct tile_info {
        int m_blk, n_blk, r0, r1, gb;
        const float *as0, *as1, *bs_lo, *bs_hi;
        k_order ko;
    };
    auto tile_at = [&](int t, int local) {
        tile_info ti;
        place_tile<CM, CN>(p, t, local, crank, ti.m_blk, ti.n_blk, ti.ko);
        a_rows_of(p, ti.m_blk, bm, wg, row_in_wg, ti.r0, ti.r1, ti.as0, ti.as1);
        int lo = (9 * ti.n_blk) / 8;
        if constexpr (CN > 1) lo = min(lo, p.n_scale_blocks - 1);  // a tile past N (ragged cluster): any scale row
        const int hi = lo + 1 < p.n_scale_blocks ? lo + 1 : lo;
        ti.gb = 16 - 2 * (ti.n_blk & 7);
        ti.bs_lo = p.b_scale + static_cast<std::size_t>(lo) * p.k_blocks;
        ti.bs_hi = p.b_scale + static_cast<std::size_t>(hi) * p.k_blocks;
        return ti;
    };
    struct scales {
        float sa0, sa1, lo, hi;
    };
    auto block_scales = [&](const tile_info& ti, int j) {
        const int kb = k_block_at(p, ti.ko, j);
        scales sc;
        sc.lo = __ldg(ti.bs_lo + kb);
        sc.hi = __ldg(ti.bs_hi + kb);
        sc.sa0 = ti.as0 ? __ldg(ti.as0 + kb) : 0.f;
        sc.sa1 = ti.as1 ? __ldg(ti.as1 + kb) : 0.f;
        return sc;
    };
    auto issue_block = [&](float (&blk)[72], int fill) {
        const int s = fill % STAGES;
        mbar_wait(full(s), (fill / STAGES) & 1);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < bk / 32; ++ks) {
            const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
            const std::uint64_t db = make_desc(stage_b(s) + ks * 32);
            sm90::wgmma_fp8_op<144>::ss(blk, da, db, ks > 0 ? 1 : 0);
        }
        wgmma_commit();
    };
    auto release = [&](int fill) {
        if constexpr (CM * CN > 1) {
            if (lane == 0) {
#pragma unroll
                for (int r = 0; r < CM * CN; ++r) mbar_arrive_cluster(empty(fill % STAGES), static_cast<std::uint32_t>(r));
            }
        } else {
            if (lane == 0) mbar_arrive(empty(fill % STAGES));
        }
    };
    float acc[72];
    auto promote_block = [&](const float (&blk)[72], const tile_info& ti, const scales& sc) {
        promote_n144<0, 18>(acc, blk, ti.gb, sc.sa0 * sc.lo, sc.sa1 * sc.lo, sc.sa0 * sc.hi, sc.sa1 * sc.hi);
    };
    int it = 0;  // K blocks consumed by this CTA, over all its tiles
    if constexpr (!OVERLAP) {
        for (int t = first_tile, local = 0; t < p.sched_tiles; t += tile_step, ++local) {
            const tile_info ti = tile_at(t, local);
#pragma unroll
            for (int i = 0; i < 72; ++i) acc[i] = 0.f;
            for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                const scales sc = block_scales(ti, kb);
                float blk[72];
                issue_block(blk, it);
                wgmma_wait<0>();
                reg_fence(blk);
                release(it);
                promote_block(blk, ti, sc);
            }
            store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, ti.m_blk, ti.n_blk, ti.r0, ti.r1);
        }
    } else {
        // Halves of 72 columns (m64n72k32 into h0, h1: acc 72 + 36 + 36 registers), in
        // consume_n192's order: half 0 of block j promoted under its half 1, half 1 after a drain
        // with block j + 1's half 0 already issued. (c1_overlap's two whole 72-register block
        // accumulators spill: 260 bytes with ptxas 13.0 under setmaxnreg 232.)
        FP8_TRACE_ROW;
        auto issue_h = [&](float (&hh)[36], int fill, int h) {
            const int s = fill % STAGES;
            if (h == 0) {
                FP8_TRACE_WG(fill, trace_c_fw0);
                mbar_wait(full(s), (fill / STAGES) & 1);
                FP8_TRACE_WG(fill, trace_c_fw1);
            }
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < bk / 32; ++ks) {
                const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
                const std::uint64_t db = make_desc(stage_b(s) + h * (72 * bk) + ks * 32);  // B's rows 72 h .. (1024-byte aligned)
                sm90::wgmma_fp8_op<72>::ss(hh, da, db, ks > 0 ? 1 : 0);
            }
            wgmma_commit();
            FP8_TRACE_WG(fill, h == 0 ? trace_c_i0 : trace_c_i1);
        };
        struct factors {
            float f0_lo, f1_lo, f0_hi, f1_hi;
        };
        auto factors_of = [](const scales& sc) { return factors{sc.sa0 * sc.lo, sc.sa1 * sc.lo, sc.sa0 * sc.hi, sc.sa1 * sc.hi}; };
        float h0[36], h1[36];
        tile_info prev{};
        // One tile (its first block issued before the previous tile's epilogue). GBC: the tile's
        // scale boundary group as a compile-time constant (8 instantiations, one per n_blk % 8, picked
        // per tile), so that the promotion needs no compare and select per 8-column group (NOTES.md
        // run 10: with the select each half's promotion took ~45% longer than the 192-wide tile's);
        // -1 (the multicast clusters): ti.gb at run time.
        auto run_tile = [&](auto gbc, const tile_info& ti, bool store_prev) {
            constexpr int GBC = decltype(gbc)::value;
            scales sc = block_scales(ti, 0);
            issue_h(h0, it, 0);
            issue_h(h1, it, 1);
            if (store_prev && (CM * CN == 1 || (prev.m_blk < p.m_blocks && prev.n_blk < p.n_blocks))) {
                store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
            }
#pragma unroll
            for (int i = 0; i < 72; ++i) acc[i] = 0.f;
            factors f = factors_of(sc);
            wgmma_wait<1>();
            reg_fence(h0);
            promote_n144<0, 9, 36, GBC>(acc, h0, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
            FP8_TRACE_FENCE(acc);
            FP8_TRACE_WG(it, trace_c_p0);
            for (int j = 0; j + 1 < p.k_blocks; ++j, ++it) {
                sc = block_scales(ti, j + 1);
                issue_h(h0, it + 1, 0);
                wgmma_wait<0>();  // half 1 of block j (its stage is free) and half 0 of block j + 1
                FP8_TRACE_WG(it, trace_c_d);
                reg_fence(h1);
                release(it);
                promote_n144<9, 9, 36, GBC>(acc, h1, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
                FP8_TRACE_FENCE(acc);
                FP8_TRACE_WG(it, trace_c_p1);
                f = factors_of(sc);
                issue_h(h1, it + 1, 1);
                reg_fence(h0);
                promote_n144<0, 9, 36, GBC>(acc, h0, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
                FP8_TRACE_FENCE(acc);
                FP8_TRACE_WG(it + 1, trace_c_p0);
            }
            wgmma_wait<0>();
            FP8_TRACE_WG(it, trace_c_d);
            reg_fence(h1);
            release(it);
            promote_n144<9, 9, 36, GBC>(acc, h1, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
            FP8_TRACE_FENCE(acc);
            FP8_TRACE_WG(it, trace_c_p1);
            ++it;
        };
#if FUSEBENCH_FP8_WGMMA_N144_RS
        // FUSEBENCH_FP8_WGMMA_N144_RS (no cluster): A from registers. Each K block's A fragments
        // (this warp's 16 rows, all four k steps: 16 registers) are read from the stage once, by
        // ldmatrix, and both halves' wgmma take them from the registers: the warpgroup reads its
        // 64 x 128 A slice from shared memory once per K block instead of once per half (NOTES.md
        // run 10's estimate: ~810 cycles of shared-memory operand traffic per K block at 144 for
        // 576 of tensor work). Order per K block j + 1: block j's half 1 drains (wait_group 0; the
        // stage and the fragments are free), j + 1's fragments are loaded and its half 0 issued,
        // block j's half 1 is promoted under it, j + 1's half 1 is issued, its half 0 waited for
        // (wait_group 1) and promoted under half 1. No wgmma group is in flight across the K
        // loop's back edge: with A from registers, one in flight there (run_tile's order, with one
        // or two fragment sets) makes ptxas 13.0 serialize every wgmma (C7512). The same FMAs in
        // the same order as run_tile: the same D (bitwise, NOTES.md run 11).
        std::uint32_t af[16];
        auto load_a = [&](int s) {
            // ldmatrix .x4 per k step: lanes 8 q .. 8 q + 7 address block q (rows 8 (q % 2) .., the k
            // step's 16-byte chunk 2 ks + q / 2), the 128-byte swizzle (chunk c of row r at c ^ (r % 8)).
            const int r = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
            const std::uint32_t row_addr = stage_a(s) + static_cast<std::uint32_t>((wg * 64 + r) * bk);
#pragma unroll
            for (int ks = 0; ks < bk / 32; ++ks) {
                const int c = 2 * ks + (lane >> 4);
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                             : "=r"(af[4 * ks]), "=r"(af[4 * ks + 1]), "=r"(af[4 * ks + 2]), "=r"(af[4 * ks + 3])
                             : "r"(row_addr + static_cast<std::uint32_t>((c ^ (lane & 7)) << 4)));
            }
        };
        auto full_wait = [&](int fill) {
            FP8_TRACE_WG(fill, trace_c_fw0);
            mbar_wait(full(fill % STAGES), (fill / STAGES) & 1);
            FP8_TRACE_WG(fill, trace_c_fw1);
        };
        // Half h of fill `fill` (its stage landed; h == 0: its A fragments loaded here).
        auto issue_rs = [&](float (&hh)[36], int fill, int h) {
            const int s = fill % STAGES;
            if (h == 0) load_a(s);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < bk / 32; ++ks) {
                const std::uint64_t db = make_desc(stage_b(s) + h * (72 * bk) + ks * 32);
                sm90::wgmma_fp8_op<72>::rs(hh, af[4 * ks], af[4 * ks + 1], af[4 * ks + 2], af[4 * ks + 3], db, ks > 0 ? 1 : 0);
            }
            wgmma_commit();
            FP8_TRACE_WG(fill, h == 0 ? trace_c_i0 : trace_c_i1);
        };
        // FUSEBENCH_FP8_WGMMA_N144_SCALES: the factors of fill `fill` from its stage's slot (the
        // scale warp wrote them before its arrival on the full barrier, which this warpgroup has
        // passed; the stage is released only after its half 0 is promoted with them).
        constexpr bool staged = staged_scales_n144(BN, CM * CN, OVERLAP);
        auto staged_factors = [&](int fill) {
            const std::uint32_t slot =
                base + static_cast<std::uint32_t>(cfg::scl_offset + (fill % STAGES) * (bm * 8) + (wg * 64 + row_in_wg) * 8);
            factors fs;
            asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(fs.f0_lo), "=f"(fs.f0_hi) : "r"(slot) : "memory");
            asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(fs.f1_lo), "=f"(fs.f1_hi) : "r"(slot + 64u) : "memory");
            return fs;
        };
        auto run_tile_rs = [&](auto gbc, const tile_info& ti, bool store_prev) {
            constexpr int GBC = decltype(gbc)::value;
            [[maybe_unused]] scales sc;
            if constexpr (!staged) sc = block_scales(ti, 0);
            full_wait(it);
            issue_rs(h0, it, 0);
            if (store_prev) store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
#pragma unroll
            for (int i = 0; i < 72; ++i) acc[i] = 0.f;
            issue_rs(h1, it, 1);
            factors f;
            if constexpr (staged) f = staged_factors(it);
            else f = factors_of(sc);
            wgmma_wait<1>();
            reg_fence(h0);
            promote_n144<0, 9, 36, GBC>(acc, h0, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
            FP8_TRACE_FENCE(acc);
            FP8_TRACE_WG(it, trace_c_p0);
            if (p.k_blocks > 1) {
                if constexpr (!staged) sc = block_scales(ti, 1);
                full_wait(it + 1);
            }
            // No wgmma is in flight across the K loop's back edge: with A from registers, one in
            // flight there makes ptxas 13.0 serialize them all (C7512).
            wgmma_wait<0>();  // half 1 of block 0: its stage and the fragments are free
            FP8_TRACE_WG(it, trace_c_d);
            reg_fence(h1);
            for (int j = 0; j + 1 < p.k_blocks; ++j, ++it) {
                issue_rs(h0, it + 1, 0);
                release(it);
                promote_n144<9, 9, 36, GBC>(acc, h1, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
                FP8_TRACE_FENCE(acc);
                FP8_TRACE_WG(it, trace_c_p1);
                if constexpr (staged) f = staged_factors(it + 1);  // read where factors_of formed them: nothing more live
                else f = factors_of(sc);
                issue_rs(h1, it + 1, 1);
                wgmma_wait<1>();  // half 0 of block j + 1
                reg_fence(h0);
                promote_n144<0, 9, 36, GBC>(acc, h0, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
                FP8_TRACE_FENCE(acc);
                FP8_TRACE_WG(it + 1, trace_c_p0);
                if (j + 2 < p.k_blocks) {
                    if constexpr (!staged) sc = block_scales(ti, j + 2);
                    full_wait(it + 2);
                }
                wgmma_wait<0>();  // half 1 of block j + 1
                FP8_TRACE_WG(it + 1, trace_c_d);
                reg_fence(h1);
            }
            release(it);
            promote_n144<9, 9, 36, GBC>(acc, h1, ti.gb, f.f0_lo, f.f1_lo, f.f0_hi, f.f1_hi);
            FP8_TRACE_FENCE(acc);
            FP8_TRACE_WG(it, trace_c_p1);
            ++it;
        };
#endif
        // AHEAD (options.thirds_ahead; no cluster): each K block's product in three pieces of 48
        // columns (m64n48k32) into three 24-register buffers t0, t1, t2 (piece q in t q). Per block j:
        // pieces 0 and 1 issued, block j - 1's piece 2 promoted under them, piece 0 waited for (wait_group
        // 1), piece 2 issued, piece 0 promoted under pieces 1 and 2, piece 1 waited for and promoted
        // under piece 2, piece 2 waited for (wait_group 0) and the stage released: the warpgroup's queue
        // is empty only from there to the next block's first issue, where run_tile and run_tile_rs leave
        // it empty for a promotion and the scales as well (NOTES.md run 10: ~350 cycles a block).
        // Nothing is in flight across the K loop's back edge: with a group in flight there and
        // wait_group 1, ptxas 13.0 serializes every wgmma (C7514, NOTES.md run 7; tried again here with
        // three 48-column buffers, two pieces in flight). Three 36-register halves (acc 72 + 108) do
        // not fit: ptxas allocates at most 168 registers a thread in this kernel (384 threads:
        // setmaxnreg does not raise that budget, nor does a 288-thread launch bound; 14-22 KB of
        // spills). A from shared memory. The same FMAs in the same order as run_tile: the same D.
        [[maybe_unused]] float t0[24], t1[24], t2[24];
        auto issue_piece = [&](float (&tt)[24], int fill, int q) {
            const int s = fill % STAGES;
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < bk / 32; ++ks) {
                const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
                const std::uint64_t db = make_desc(stage_b(s) + q * (48 * bk) + ks * 32);  // B's rows 48 q .. (6 swizzle atoms)
                sm90::wgmma_fp8_op<48>::ss(tt, da, db, ks > 0 ? 1 : 0);
            }
            wgmma_commit();
        };
        // always_inline: one instantiation per n_blk % 8, each too large for the inliner's budget (a call
        // makes ptxas serialize every wgmma: C7510).
        [[maybe_unused]] auto run_tile_ahead = [&](auto gbc, const tile_info& ti, bool store_prev) __attribute__((always_inline)) {
            constexpr int GBC = decltype(gbc)::value;
            const int kbs = p.k_blocks, it0 = it;
            auto promote_piece = [&](auto qq, const float(&tt)[24], const factors& fq) __attribute__((always_inline)) {
                constexpr int Q = decltype(qq)::value;
                promote_n144<6 * Q, 6, 24, GBC>(acc, tt, ti.gb, fq.f0_lo, fq.f1_lo, fq.f0_hi, fq.f1_hi);
            };
            const std::integral_constant<int, 0> p0{};
            const std::integral_constant<int, 1> p1{};
            const std::integral_constant<int, 2> p2{};
            // Pieces 0 and 1 of block j issued; before and after: nothing in flight.
            auto issue_first = [&](int j) __attribute__((always_inline)) {
                mbar_wait(full((it0 + j) % STAGES), ((it0 + j) / STAGES) & 1);
                issue_piece(t0, it0 + j, 0);
                issue_piece(t1, it0 + j, 1);
            };
            // The rest of block j (factors fj): pieces 0 and 1 in flight on entry, nothing on exit
            // (piece 2 complete in t2, not promoted).
            auto finish_block = [&](int j, const factors& fj) __attribute__((always_inline)) {
                wgmma_wait<1>();  // piece 0
                reg_fence(t0);
                issue_piece(t2, it0 + j, 2);
                promote_piece(p0, t0, fj);
                wgmma_wait<1>();  // piece 1
                reg_fence(t1);
                promote_piece(p1, t1, fj);
                wgmma_wait<0>();  // piece 2: the stage is free
                reg_fence(t2);
                release(it0 + j);
            };
            // f: the factors of block j; sc: the raw scales of block j + 1, loaded a block ahead
            // (clamped to the last block: a load that is not used, never one past K).
            factors f = factors_of(block_scales(ti, 0));
            scales sc = block_scales(ti, kbs > 1 ? 1 : 0);
            issue_first(0);
            // The previous tile's epilogue under this tile's first block.
            if (store_prev) store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
#pragma unroll
            for (int i = 0; i < 72; ++i) acc[i] = 0.f;
            finish_block(0, f);
            for (int j = 1; j < kbs; ++j) {
                issue_first(j);
                promote_piece(p2, t2, f);  // block j - 1's piece 2
                f = factors_of(sc);
                sc = block_scales(ti, min(j + 1, kbs - 1));
                finish_block(j, f);
            }
            promote_piece(p2, t2, f);
            it += p.k_blocks;
        };
        for (int t = first_tile, local = 0; t < p.sched_tiles; t += tile_step, ++local) {
            const tile_info ti = tile_at(t, local);
            const bool store_prev = t != first_tile;
            if constexpr (CM * CN == 1) {
#if FUSEBENCH_FP8_WGMMA_N144_RS
#define FP8_RUN_TILE_DEFAULT run_tile_rs
#else
#define FP8_RUN_TILE_DEFAULT run_tile
#endif
#define FP8_RUN_TILE(GB)                                                                          \
    do {                                                                                          \
        if constexpr (AHEAD) run_tile_ahead(std::integral_constant<int, GB>{}, ti, store_prev);  \
        else FP8_RUN_TILE_DEFAULT(std::integral_constant<int, GB>{}, ti, store_prev);            \
    } while (0)
                switch (ti.gb) {  // 16 - 2 (n_blk % 8): 2 .. 16
                    case 16: FP8_RUN_TILE(16); break;
                    case 14: FP8_RUN_TILE(14); break;
                    case 12: FP8_RUN_TILE(12); break;
                    case 10: FP8_RUN_TILE(10); break;
                    case 8: FP8_RUN_TILE(8); break;
                    case 6: FP8_RUN_TILE(6); break;
                    case 4: FP8_RUN_TILE(4); break;
                    default: FP8_RUN_TILE(2); break;
                }
#undef FP8_RUN_TILE
#undef FP8_RUN_TILE_DEFAULT
            } else {
                run_tile(std::integral_constant<int, -1>{}, ti, store_prev);
            }
            prev = ti;
        }
        if (first_tile < p.sched_tiles && (CM * CN == 1 || (prev.m_blk < p.m_blocks && prev.n_blk < p.n_blocks))) {
            FP8_TRACE_HDR(trace_hdr_fills, static_cast<unsigned long long>(it));
            FP8_TRACE_HDR(trace_hdr_epi0, trace_clock());
            store_block<BN>(acc, p, tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
            FP8_TRACE_HDR(trace_hdr_epi1, trace_clock());
        }
    }
}
#endif  // FUSEBENCH_FP8_WGMMA_DEVICE_CODE

// OVERLAP: two block accumulators per consumer thread, so that K block kb + 1's wgmma run on the
// tensor cores while block kb's product is promoted (wgmma.wait_group 1 instead of 0), and the next
// tile's first K block is issued before the epilogue: the tensor cores no longer idle during the
// promotion FMAs nor during the epilogue. Same promotion order, so bit-identical to OVERLAP = false.
// SPLIT: the tail kernel of kernels/fp8/split_plan.hpp: CTA c runs tail piece c only (the whole
// tiles are the plain kernel's launch before it; 128 x 192 tiles with the overlap only).
// CLUSTER x CLUSTER_N (the 144- and 192-wide overlapped kernels only; consume_n192): multicast
// clusters, CLUSTER tiles along M sharing B's tile, CLUSTER_N along N sharing A's; the 128-wide
// kernel's CLUSTER 2 (c2) multicasts B's halves to a pair of row blocks.
// L2PF (options.l2_prefetch; 144- and 192-wide, no cluster): the producer also prefetches A's and B's
// tiles p.l2_prefetch K blocks ahead of the load it is about to issue into L2.
template <int BN, int STAGES, int CLUSTER, bool OVERLAP, bool SPLIT = false, int PIECES = 0, int CLUSTER_N = 1, bool L2PF = false>
__global__ void __launch_bounds__(threads, 1)
    fp8_gemm_wgmma_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                          const __grid_constant__ CUtensorMap tm_d, const params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int ctas = CLUSTER * CLUSTER_N;  // per cluster
    static_assert((CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4) && (CLUSTER_N == 1 || CLUSTER_N == 2 || CLUSTER_N == 4),
                  "clusters of 1, 2 or 4 CTAs along M and along N");
    static_assert(BN == 128 ? (CLUSTER <= 2 && CLUSTER_N == 1)
                            : (ctas == 1 || ((BN == 144 || BN == 192) && OVERLAP && !SPLIT && PIECES == 0 && (BN / CLUSTER) % 8 == 0)),
                  "128-wide tiles: clusters of 1 or 2 along M; 144- and 192-wide: multicast clusters with the overlap only (B's slice "
                  "a whole number of 8-row swizzle atoms); 256-wide: no cluster");
    static_assert(!L2PF || ((BN == 144 || BN == 192) && ctas == 1 && OVERLAP && !SPLIT && PIECES == 0),
                  "the L2 prefetch: the overlapped 144- and 192-wide kernels without cluster, split or pieces");
    static_assert(BN != 256 || (OVERLAP && PIECES != 0), "the 128 x 256 tile runs with the 64-column piece consumer only");
    static_assert(PIECES == 0 || ((PIECES == 1 || PIECES == 2) && OVERLAP && !SPLIT && BN != 128) ||
                      (PIECES == 3 && BN == 144 && OVERLAP && !SPLIT && ctas == 1 && !L2PF),
                  "64-column pieces (form 1 or 2): 192- or 256-wide tiles, the overlap, no split; 3: the 144-wide tile's "
                  "three 48-column pieces (options.thirds_ahead), the overlap, no cluster, split or prefetch");
    static_assert(!SPLIT || (BN == 192 && OVERLAP), "the work split runs on the overlapped 128 x 192 consumer only");
    using cfg = config<BN, STAGES>;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const std::uint32_t bar = base + cfg::bar_offset;
    auto stage_a = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes); };
    auto stage_b = [&](int s) { return base + static_cast<std::uint32_t>(s * cfg::stage_bytes + cfg::a_bytes); };
    auto full = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(s); };
    auto empty = [&](int s) { return bar + 8u * static_cast<std::uint32_t>(STAGES + s); };
    // With a cluster, each CTA loads a slice of the tiles it shares into every CTA sharing them: a
    // stage is free for any producer only once the consumers of every CTA have released it.
    const std::uint32_t rank = ctas > 1 ? cluster_rank() : 0;
    const int cluster_id = static_cast<int>(blockIdx.x) / ctas, clusters = static_cast<int>(gridDim.x) / ctas;

    const int tid = threadIdx.x;
    // EARLY (no cluster, no split, no L2 prefetch): the producer thread initialises the barriers and
    // issues its first tile's first min(STAGES, k_blocks) fills before the CTA's barrier (their
    // ring slots are free), after asking for the tensor maps; the loop below skips those fills.
    constexpr bool early = FUSEBENCH_FP8_WGMMA_EARLY_FILLS != 0 && ctas == 1 && !SPLIT && !L2PF;
    [[maybe_unused]] int early_fills = 0;
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
    unsigned long long early_clk = 0;
#endif
    if (tid == (early ? 256 : 0)) {
        if constexpr (early) {
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&tm_a)) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&tm_b)) : "memory");
        }
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), staged_scales_n144(BN, ctas, OVERLAP) && !SPLIT && PIECES == 0 ? 33 : 1);
            mbar_init(empty(s), 8 * ctas);  // lane 0 of each consumer warp of every CTA of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        if constexpr (early) {
            if (cluster_id < p.sched_tiles) {
                int m_blk, n_blk;
                tile_coords(p, cluster_id, m_blk, n_blk);
                const k_order ko = k_order_of(p, m_blk, n_blk, 0);  // the first tile: local 0
                early_fills = min(STAGES, p.k_blocks);
                for (int j = 0; j < early_fills; ++j) {
                    const int kb = k_block_at(p, ko, j);
                    mbar_expect_tx(full(j), cfg::stage_bytes);
                    tma_load_2d(stage_a(j), &tm_a, kb * bk, m_blk * bm, full(j));
                    tma_load_2d(stage_b(j), &tm_b, kb * bk, n_blk * BN, full(j));
                }
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
                early_clk = trace_clock();
#endif
            }
        }
    }
    if constexpr (ctas > 1) cluster_sync();  // the peers' barriers exist before anything reaches them
    else __syncthreads();
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
    if (tid == 0) {
        if (unsigned long long* row = trace_row()) {
            std::uint32_t smid;
            asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
            row[trace_hdr_gt0] = trace_globaltimer();
            row[trace_hdr_clk0] = trace_clock();
            row[trace_hdr_smid] = smid;
        }
    }
#endif

    // The warpgroup's role from a shuffled index: warp-uniform for the compiler (uniform registers
    // for the loop counters and barrier addresses).
    const int role = __shfl_sync(0xffffffffu, tid / 128, 0);
    if (role == 2) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if constexpr (BN != 128 && ctas > 1) {
            if (tid == 256) {
                // The multicast clusters of the 144- and 192-wide tiles: CTA (rm, rn) loads slice rn
                // of A's tile into the CTAs of its row (same rm) and slice rm of B's tile into those of
                // its column (same rn), each credited on the barrier at the same offset; every CTA's
                // full barrier so receives a whole stage.
                constexpr int a_rows = bm / CLUSTER_N, b_rows = BN / CLUSTER;
                const int rm = static_cast<int>(rank) % CLUSTER, rn = static_cast<int>(rank) / CLUSTER;
                std::uint16_t a_mask = 0, b_mask = 0;
                for (int j = 0; j < CLUSTER_N; ++j) a_mask |= static_cast<std::uint16_t>(1u << (rm + CLUSTER * j));
                for (int i = 0; i < CLUSTER; ++i) b_mask |= static_cast<std::uint16_t>(1u << (i + CLUSTER * rn));
                int it = 0;
                for (int t = cluster_id, local = 0; t < p.sched_tiles; t += clusters, ++local) {
                    int mp, np;
                    sched_coords(p, t, mp, np);
                    const int m_blk = mp * CLUSTER + rm, n_blk = np * CLUSTER_N + rn;
                    const k_order ko = k_order_of(p, mp, np, local);  // the consumers' (one order per cluster)
                    for (int j = 0; j < p.k_blocks; ++j, ++it) {
                        const int kb = k_block_at(p, ko, j);
                        const int s = it % STAGES;
                        if (it >= STAGES) mbar_wait(empty(s), ((it / STAGES) & 1) ^ 1);  // fill it - STAGES consumed everywhere
                        mbar_expect_tx(full(s), cfg::stage_bytes);
                        if constexpr (CLUSTER_N > 1) {
                            tma_load_2d_multicast(stage_a(s) + static_cast<std::uint32_t>(rn * a_rows * bk), &tm_a, kb * bk, m_blk * bm + rn * a_rows,
                                                  full(s), a_mask);
                        } else {
                            tma_load_2d(stage_a(s), &tm_a, kb * bk, m_blk * bm, full(s));
                        }
                        if constexpr (CLUSTER > 1) {
                            tma_load_2d_multicast(stage_b(s) + static_cast<std::uint32_t>(rm * b_rows * bk), &tm_b, kb * bk, n_blk * BN + rm * b_rows,
                                                  full(s), b_mask);
                        } else {
                            tma_load_2d(stage_b(s), &tm_b, kb * bk, n_blk * BN, full(s));
                        }
                    }
                }
            }
        } else if (tid == 256) {
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
            unsigned long long* const trace_row_p = trace_row();
#endif
            int it = 0;  // k blocks loaded so far by this CTA, over all its tiles
            // SPLIT: the tail kernel, only the CTA's tail piece (the consumers' order).
            const int whole_end = SPLIT ? 0 : p.sched_tiles;
            for (int t = cluster_id, local = 0; t < whole_end; t += clusters, ++local) {
                int mp, n_blk;
                tile_coords(p, t, mp, n_blk);
                const int m_blk = mp * CLUSTER + static_cast<int>(rank);
                const k_order ko = k_order_of(p, mp, n_blk, local);  // mp: both CTAs of a cluster walk one order
                if constexpr (L2PF) {
                    // The tile's first K blocks, at once (the loop below asks for block j + distance).
                    for (int q = 1; q < p.l2_prefetch && q < p.k_blocks; ++q) {
                        const int kq = k_block_at(p, ko, q);
                        tma_prefetch_2d(&tm_a, kq * bk, m_blk * bm);
                        tma_prefetch_2d(&tm_b, kq * bk, n_blk * BN);
                    }
                }
                for (int j = 0; j < p.k_blocks; ++j, ++it) {
                    if constexpr (early) {
                        if (it < early_fills) {
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
                            // Issued before the CTA's barrier: the time after the last of them, for all three.
                            if (trace_row_p != nullptr) {
                                unsigned long long* const st = trace_row_p + trace_header + static_cast<std::size_t>(it) * trace_slots;
                                st[trace_p_wait0] = st[trace_p_wait1] = st[trace_p_issued] = early_clk;
                            }
#endif
                            continue;
                        }
                    }
                    const int kb = k_block_at(p, ko, j);
                    const int s = it % STAGES;
                    if constexpr (L2PF) {
                        // Before the ring's wait: the request goes out while the consumers still
                        // hold the stage.
                        if (j + p.l2_prefetch < p.k_blocks) {
                            const int kq = k_block_at(p, ko, j + p.l2_prefetch);
                            tma_prefetch_2d(&tm_a, kq * bk, m_blk * bm);
                            tma_prefetch_2d(&tm_b, kq * bk, n_blk * BN);
                        }
                    }
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
                    trace_stamp(trace_row_p, trace_row_p != nullptr, it, trace_p_wait0);
#endif
                    if (it >= STAGES) mbar_wait(empty(s), ((it / STAGES) & 1) ^ 1);  // the fill it - STAGES was consumed
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
                    trace_stamp(trace_row_p, trace_row_p != nullptr, it, trace_p_wait1);
#endif
                    mbar_expect_tx(full(s), cfg::stage_bytes);
                    tma_load_2d(stage_a(s), &tm_a, kb * bk, m_blk * bm, full(s));
                    if constexpr (CLUSTER > 1) {
                        constexpr int half = BN / CLUSTER;
                        tma_load_2d_multicast(stage_b(s) + rank * (half * bk), &tm_b, kb * bk, n_blk * BN + static_cast<int>(rank) * half,
                                              full(s), static_cast<std::uint16_t>((1u << CLUSTER) - 1));
                    } else {
                        tma_load_2d(stage_b(s), &tm_b, kb * bk, n_blk * BN, full(s));
                    }
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
                    trace_stamp(trace_row_p, trace_row_p != nullptr, it, trace_p_issued);
#endif
                }
            }
            if constexpr (SPLIT) {
                fp8_gemm_work w;
                if (fp8_gemm_split_piece(p.plan, cluster_id, w)) {
                    int m_blk, n_blk;
                    tile_coords(p, w.tile, m_blk, n_blk);
                    const k_order ko = k_order_of(p, m_blk, n_blk, 0);
                    for (int j = w.j0; j < w.j1; ++j, ++it) {
                        const int kb = k_block_at(p, ko, j);
                        const int s = it % STAGES;
                        if (it >= STAGES) mbar_wait(empty(s), ((it / STAGES) & 1) ^ 1);
                        mbar_expect_tx(full(s), cfg::stage_bytes);
                        tma_load_2d(stage_a(s), &tm_a, kb * bk, m_blk * bm, full(s));
                        tma_load_2d(stage_b(s), &tm_b, kb * bk, n_blk * BN, full(s));
                    }
                }
            }
        }
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
        else if (tid == 288 && ctas == 1 && !SPLIT) {
            // The landing watcher: each fill's full barrier, in the consumers' order.
            if (unsigned long long* const row = trace_row()) {
                int it = 0;
                for (int t = cluster_id; t < p.sched_tiles; t += clusters) {
                    for (int j = 0; j < p.k_blocks; ++j, ++it) {
                        const int s = it % STAGES;
                        mbar_wait(full(s), (it / STAGES) & 1);
                        trace_stamp(row, true, it, trace_land);
                    }
                }
            }
        }
#endif
        if constexpr (staged_scales_n144(BN, ctas, OVERLAP) && !SPLIT && PIECES == 0) {
            if (tid >= 320 && tid < 352) stage_scales_n144<STAGES>(p, base, tid & 31, cluster_id, clusters);  // warp 10
        }
    } else if constexpr (PIECES == 1 || PIECES == 2) {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        consume_pieces<BN, STAGES, PIECES>(p, &tm_d, base, tid, role, cluster_id, clusters);
    } else if constexpr (BN == 144) {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        consume_n144<STAGES, OVERLAP, CLUSTER, CLUSTER_N, PIECES == 3>(p, &tm_d, base, tid, role, cluster_id, clusters);
    } else if constexpr (BN == 192) {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        consume_n192<STAGES, OVERLAP, SPLIT, CLUSTER, CLUSTER_N>(p, &tm_d, base, tid, role, cluster_id, clusters);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int wg = role;
        const int lane = tid & 31, warp = (tid >> 5) & 3;
        const int row_in_wg = warp * 16 + (lane >> 2);  // and + 8
        const int col_q = (lane & 3) * 2;
        const std::uint32_t stage_c = base + cfg::c_offset + static_cast<std::uint32_t>(wg * (64 * BN * 2));
        // Tile t's block coordinates and scale rows. Rows past m: their A rows arrive as zeros;
        // scale 0 keeps them finite and unwritten.
        struct tile_info {
            int m_blk, n_blk, r0, r1;
            const float *as0, *as1, *bs;
            k_order ko;
        };
        auto tile_at = [&](int t, int local) {
            tile_info ti;
            int mp;
            tile_coords(p, t, mp, ti.n_blk);
            ti.m_blk = mp * CLUSTER + static_cast<int>(rank);
            ti.ko = k_order_of(p, mp, ti.n_blk, local);
            a_rows_of(p, ti.m_blk, bm, wg, row_in_wg, ti.r0, ti.r1, ti.as0, ti.as1);
            ti.bs = p.b_scale + static_cast<std::size_t>(ti.n_blk) * p.k_blocks;
            return ti;
        };
        // The scales of the K block at position j of the tile's K order: B's tile, A's rows r0 and
        // r1 (loads only: the products are taken where they are used, so the loads stay in flight
        // under the barrier wait and the wgmma).
        struct scales {
            float sa0, sa1, sb;
        };
        auto block_scales = [&](const tile_info& ti, int j) {
            const int kb = k_block_at(p, ti.ko, j);
            scales sc;
            sc.sb = __ldg(ti.bs + kb);
            sc.sa0 = ti.as0 ? __ldg(ti.as0 + kb) : 0.f;
            sc.sa1 = ti.as1 ? __ldg(ti.as1 + kb) : 0.f;
            return sc;
        };
        // Waits for fill `fill` of the ring and issues its four k-steps into blk (one commit group).
        auto issue_block = [&](float (&blk)[64], int fill) {
            const int s = fill % STAGES;
            mbar_wait(full(s), (fill / STAGES) & 1);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < bk / 32; ++ks) {
                const std::uint64_t da = make_desc(stage_a(s) + wg * (64 * bk) + ks * 32);
                const std::uint64_t db = make_desc(stage_b(s) + ks * 32);
                sm90::wgmma_fp8_op<128>::ss(blk, da, db, ks > 0 ? 1 : 0);
            }
            wgmma_commit();
        };
        // Fill `fill` read by this warpgroup's wgmma: lane 0 of each warp frees the stage.
        auto release = [&](int fill) {
            if (lane == 0) {
                mbar_arrive(empty(fill % STAGES));
                if constexpr (CLUSTER > 1) mbar_arrive_cluster(empty(fill % STAGES), rank ^ 1u);
            }
        };
        int it = 0;
        if constexpr (!OVERLAP) {
            for (int t = cluster_id, local = 0; t < p.sched_tiles; t += clusters, ++local) {
                const tile_info ti = tile_at(t, local);
                float acc[64];
#pragma unroll
                for (int i = 0; i < 64; ++i) acc[i] = 0.f;
                for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                    // The scales first: their loads are in flight while the stage arrives and the
                    // block's wgmma run.
                    const scales sc = block_scales(ti, kb);
                    float blk[64];
                    issue_block(blk, it);
                    wgmma_wait<0>();
                    reg_fence(blk);
                    release(it);
                    promote(acc, blk, sc.sa0 * sc.sb, sc.sa1 * sc.sb);
                }
                store_block<128>(acc, p, &tm_d, stage_c, tid, wg, row_in_wg, col_q, ti.m_blk, ti.n_blk, ti.r0, ti.r1);
            }
        } else {
            // b0 holds the even K blocks of a tile, b1 the odd ones; s0, s1 their scales. The
            // epilogue of tile t runs in the next iteration, after tile t + 1's first block is
            // issued, so the tensor cores work during it; acc is free again once it is stored.
            // (Issuing that block at the end of iteration t instead, so that it is in flight
            // across the loop's back edge, makes ptxas serialize every wgmma of the kernel: C7514.)
            float b0[64], b1[64], acc[64];
            scales s0{0.f, 0.f, 0.f}, s1{0.f, 0.f, 0.f};
            tile_info prev{};
            // A block whose wgmma are complete: its stage goes back to the producer and its
            // scaled partial sum into acc.
            auto retire = [&](float (&blk)[64], int stage_it, const scales& sc) {
                reg_fence(blk);
                release(stage_it);
                promote(acc, blk, sc.sa0 * sc.sb, sc.sa1 * sc.sb);
            };
            for (int t = cluster_id, local = 0; t < p.sched_tiles; t += clusters, ++local) {
                const tile_info ti = tile_at(t, local);
                s0 = block_scales(ti, 0);
                issue_block(b0, it);
                if (t != cluster_id) {
                    store_block<128>(acc, p, &tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
                }
#pragma unroll
                for (int i = 0; i < 64; ++i) acc[i] = 0.f;
                // b0: block kb in flight; blocks kb + 1 and kb + 2 exist.
                int kb = 0;
                for (; kb + 2 < p.k_blocks; kb += 2) {
                    s1 = block_scales(ti, kb + 1);
                    issue_block(b1, it + 1);
                    wgmma_wait<1>();
                    retire(b0, it, s0);
                    s0 = block_scales(ti, kb + 2);
                    issue_block(b0, it + 2);
                    wgmma_wait<1>();
                    retire(b1, it + 1, s1);
                    it += 2;
                }
                // The last one or two blocks of the tile (b0: block kb in flight).
                if (kb + 1 < p.k_blocks) {
                    s1 = block_scales(ti, kb + 1);
                    issue_block(b1, it + 1);
                    wgmma_wait<1>();
                    retire(b0, it, s0);
                    wgmma_wait<0>();
                    retire(b1, it + 1, s1);
                    it += 2;
                } else {
                    wgmma_wait<0>();
                    retire(b0, it, s0);
                    it += 1;
                }
                prev = ti;
            }
            if (cluster_id < p.sched_tiles) {
                store_block<128>(acc, p, &tm_d, stage_c, tid, wg, row_in_wg, col_q, prev.m_blk, prev.n_blk, prev.r0, prev.r1);
            }
        }
    }
    // The last stores finish before the CTA (and its shared memory) goes.
    if (role != 2 && p.tma_store && (tid & 127) == 0) {
#if FUSEBENCH_FP8_WGMMA_STORE_WAIT_READ
        // Only the staging's reads: the stores' global writes complete before the grid does.
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#else
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
    }
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
    if (tid == 0) {
        if (unsigned long long* row = trace_row()) {
            row[trace_hdr_gt1] = trace_globaltimer();
            row[trace_hdr_clk1] = trace_clock();
        }
    }
#endif
    // No CTA leaves while its peer may still multicast into it or arrive on its barriers.
    __syncwarp();
    if constexpr (ctas > 1) cluster_sync();
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// Rows of `cols` bytes at pitch `src_pitch` copied to pitch `dst_pitch` (> cols), the pad bytes
// zeroed: TMA needs a global row pitch that is a multiple of 16 bytes.
__global__ void pad_rows_kernel(const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ dst, std::size_t rows,
                                std::size_t cols, std::size_t dst_pitch) {
    const std::size_t total = rows * dst_pitch;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t r = i / dst_pitch, c = i - r * dst_pitch;
        dst[i] = c < cols ? src[r * cols + c] : std::uint8_t{0};
    }
}

// 1 where the loader picked this file's sm_90a code for the current device, 0 for the plain
// sm_90 code.
__global__ void fp8_gemm_wgmma_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *out = 1;
#else
    *out = 0;
#endif
}

sm90::sm90a_probe sm90a_code{reinterpret_cast<const void*>(&fp8_gemm_wgmma_probe_kernel)};

// Per device ordinal, facts of the device written once (racing writers write the same value).
constexpr int max_devices = 64;
std::atomic<int> cluster_capacity_cache[max_devices];  // clusters of 2 CTAs resident at once
// Multicast clusters resident at once, per kernel (launch_fp8_gemm_wgmma's slot: 192-wide 2 x 1,
// 4 x 1; 144-wide 2 x 1, 1 x 2, 1 x 4, 2 x 2).
std::atomic<int> multicast_capacity_cache[max_devices][6];

int cluster_capacity(int dev) { return dev >= 0 && dev < max_devices ? cluster_capacity_cache[dev].load() : 0; }

// 2-D map over [rows][cols] elements at `pitch` bytes, box box_cols x box_rows, 128-byte swizzle
// (box_cols x element size = 128 bytes); what lies past rows or cols reads as zero (loads) or is
// not written (stores).
void make_map(CUtensorMap* map, CUtensorMapDataType type, const void* ptr, std::size_t rows, std::size_t cols, std::size_t pitch,
              int box_cols, int box_rows, const char* what) {
    if (sm90::tensor_map_encoder() == nullptr) throw std::runtime_error("fp8_gemm wgmma: the driver provides no cuTensorMapEncodeTiled");
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(pitch)};  // [bytes]
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
    const CUresult r = sm90::encode_tiled_swizzle128(map, type, 2, ptr, dims, strides, box);
    if (r != CUDA_SUCCESS) {
        throw std::runtime_error(std::string("fp8_gemm wgmma: cuTensorMapEncodeTiled(") + what + ") failed with CUresult " +
                                 std::to_string(static_cast<int>(r)));
    }
}

constexpr int stages = 6;      // 128 x 128 tiles: 6 x 32 KiB + 64 KiB of D staging
// The 144- and 192-wide rings' depth can be lowered in a diagnostic build (kernels/fp8/probes/kv_trace.cu:
// the ring depth's effect on kv_a, NOTES.md run 10); the library uses these defaults.
#if !defined(FUSEBENCH_FP8_WGMMA_STAGES_N192)
#define FUSEBENCH_FP8_WGMMA_STAGES_N192 4
#endif
#if !defined(FUSEBENCH_FP8_WGMMA_STAGES_N144)
#define FUSEBENCH_FP8_WGMMA_STAGES_N144 4
#endif
constexpr int stages_n192 = FUSEBENCH_FP8_WGMMA_STAGES_N192;  // 128 x 192 tiles: 4 x 40 KiB + 96 KiB of D staging (5 would need 248 KiB)
// 128 x 144 tiles: 4 x 34 KiB + 36 KiB of D staging (NOTES.md run 11, probe: with A from registers, 4 stages
// were 1.1% faster than 5 on kv_a, 3 stages 20% slower; 6 would need 240 KiB)
constexpr int stages_n144 = FUSEBENCH_FP8_WGMMA_STAGES_N144;
constexpr int stages_n256 = 3;  // 128 x 256 tiles: 3 x 48 KiB + 64 KiB of D staging (4 would need 256 KiB)

std::size_t blocks_of(std::size_t x) { return (x + fp8_gemm_block - 1) / fp8_gemm_block; }
bool needs_padding(const fp8_gemm_shape& s) { return s.k % 16 != 0; }
std::size_t padded_k(const fp8_gemm_shape& s) { return (s.k + 15) / 16 * 16; }

}  // namespace
}  // namespace fp8_wgmma

std::size_t fp8_gemm_wgmma_workspace_bytes(const fp8_gemm_shape& s) {
    if (!fp8_wgmma::needs_padding(s)) return 0;
    const std::size_t kp = fp8_wgmma::padded_k(s);
    return align256(s.m * kp) + align256(s.n * kp);
}

fp8_gemm_split_plan fp8_gemm_wgmma_split_plan(const fp8_gemm_shape& s, const fp8_gemm_wgmma_options& opt, int sms) {
    if (fp8_gemm_wgmma_shape_unsupported(s) != nullptr || sms <= 0) return {};
    const std::size_t tn = static_cast<std::size_t>(opt.tile_n == 144 || opt.tile_n == 192 || opt.tile_n == 256 ? opt.tile_n : 128), cluster = opt.cluster == 2 ? 2 : 1;
    const std::size_t tiles = (fp8_wgmma::blocks_of(s.m) + cluster - 1) / cluster * ((s.n + tn - 1) / tn);
    return make_fp8_gemm_split_plan(static_cast<int>(tiles), static_cast<int>(fp8_wgmma::blocks_of(s.k)), sms, opt.split);
}

std::size_t fp8_gemm_wgmma_workspace_bytes(const fp8_gemm_shape& s, const fp8_gemm_wgmma_options& opt, int sms) {
    std::size_t bytes = fp8_gemm_wgmma_workspace_bytes(s);
    if (!opt.split) return bytes;
    const fp8_gemm_split_plan plan = fp8_gemm_wgmma_split_plan(s, opt, sms);
    if (plan.splits <= 1) return bytes;
    // One partial tile of fp32 per slot, then two ready flags (one per consumer warpgroup) per slot.
    const std::size_t slots = static_cast<std::size_t>(fp8_gemm_split_slots(plan));
    bytes = align256(bytes) + align256(slots * fp8_wgmma::bm * static_cast<std::size_t>(opt.tile_n) * sizeof(float));
    return bytes + align256(slots * 2 * sizeof(unsigned long long));
}

const char* fp8_gemm_wgmma_shape_unsupported(const fp8_gemm_shape& s) {
    if (s.m == 0 || s.n == 0 || s.k == 0) return "empty shape";
    // Tile coordinates and TMA box coordinates are 32-bit signed.
    if (s.m > static_cast<std::size_t>(INT_MAX) - 256 || s.n > static_cast<std::size_t>(INT_MAX) - 256 ||
        s.k > static_cast<std::size_t>(INT_MAX) - 256) {
        return "M, N and K below 2^31 - 256";
    }
    if (fp8_wgmma::blocks_of(s.m) * fp8_wgmma::blocks_of(s.n) > static_cast<std::size_t>(INT_MAX)) return "fewer than 2^31 tiles of 128 x 128";
    return nullptr;
}

double fp8_gemm_wgmma_wave_efficiency(const fp8_gemm_shape& s, int tile_n, int sms) {
    if (tile_n <= 0 || sms <= 0 || s.m == 0 || s.n == 0) return 0.0;
    const std::size_t tn = static_cast<std::size_t>(tile_n), slots = static_cast<std::size_t>(sms);
    const std::size_t tiles = fp8_wgmma::blocks_of(s.m) * ((s.n + tn - 1) / tn);
    const std::size_t waves = (tiles + slots - 1) / slots;
    return static_cast<double>(s.m) * static_cast<double>(s.n) /
           (static_cast<double>(waves) * static_cast<double>(slots) * static_cast<double>(fp8_gemm_block) * static_cast<double>(tn));
}

double fp8_gemm_wgmma_split_wave_efficiency(const fp8_gemm_shape& s, int tile_n, int sms) {
    if (tile_n <= 0 || sms <= 0 || s.m == 0 || s.n == 0 || s.k == 0) return 0.0;
    fp8_gemm_wgmma_options o;
    o.tile_n = tile_n;
    o.split = true;
    const fp8_gemm_split_plan plan = fp8_gemm_wgmma_split_plan(s, o, sms);
    if (plan.grid <= 0) return 0.0;
    const double waves = plan.splits > 1 ? static_cast<double>(plan.dp_tiles / sms) +
                                               static_cast<double>(fp8_gemm_split_tail_cost(plan.k_blocks, plan.splits)) / plan.k_blocks
                                         : static_cast<double>((plan.tiles + sms - 1) / sms);
    return static_cast<double>(s.m) * static_cast<double>(s.n) /
           (waves * static_cast<double>(sms) * static_cast<double>(fp8_gemm_block) * static_cast<double>(tile_n));
}

bool fp8_gemm_wgmma_split_pays(const fp8_gemm_shape& s) { return s.m >= 4096 && s.k >= 8192; }

int fp8_gemm_wgmma_default_tile_n(const fp8_gemm_shape& s, int sms) {
    if (s.m < 4096) return 128;
    const double e128 = fp8_gemm_wgmma_wave_efficiency(s, 128, sms);
    const double e192 = fp8_gemm_wgmma_split_pays(s) ? fp8_gemm_wgmma_split_wave_efficiency(s, 192, sms)
                                                      : fp8_gemm_wgmma_wave_efficiency(s, 192, sms);
    const double e256 = fp8_gemm_wgmma_wave_efficiency(s, 256, sms);
    if (e128 > 0 && e256 >= 0.91 * e128 && e256 >= 0.95 * e192) return 256;
    if (!(e128 > 0 && e192 >= 0.91 * e128)) return 128;
    // 192 without the split: the 128 x 144 tile where it fills the SMs' waves far better (kv_a, N = 576,
    // on an H100: M = 8192, 256 tiles of 144 against 192 of 192 on 132 SMs, 2.7% faster in NOTES.md
    // run 8; M = 4096, 128 tiles against 96 in one wave, 0.4% slower in run 8, where each 144-wide K
    // block took as long as a 192-wide one's; since run 10's compile-time scale boundary the 144-wide
    // K block is shorter: 6.8% faster at M = 4096, 7.4% at M = 8192).
    if (!fp8_gemm_wgmma_split_pays(s) && fp8_gemm_wgmma_wave_efficiency(s, 144, sms) >= 1.2 * e192) return 144;
    return 192;
}

bool fp8_gemm_wgmma_default_split(const fp8_gemm_shape& s, int sms) {
    return sms > 0 && fp8_gemm_wgmma_split_pays(s) && fp8_gemm_wgmma_default_tile_n(s, sms) == 192;
}

int fp8_gemm_wgmma_device_sms() {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    try {
        return cached_sm_count(dev);
    } catch (const std::runtime_error&) {
        return 0;
    }
}

const char* fp8_gemm_wgmma_unsupported(const fp8_gemm_shape& s) {
    if (const char* why = fp8_gemm_wgmma_shape_unsupported(s)) return why;
    return fp8_wgmma::sm90a_code.current_device_unsupported();
}

void launch_fp8_gemm_wgmma(const fp8_gemm_shape& s, const std::uint8_t* a, const float* a_scale, const std::uint8_t* b,
                           const float* b_scale, void* d, void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
                           const fp8_gemm_wgmma_options& opt) {
    using namespace fp8_wgmma;
    if (const char* why = fp8_gemm_wgmma_unsupported(s)) throw std::invalid_argument(std::string("fp8_gemm wgmma: ") + why);
    const std::size_t need = fp8_gemm_wgmma_workspace_bytes(s);
    if (need > 0 && (workspace == nullptr || workspace_bytes < need)) {
        throw std::invalid_argument("fp8_gemm wgmma: K = " + std::to_string(s.k) +
                                    " is not a multiple of 16, so A and B are copied with a padded pitch into a workspace of " +
                                    std::to_string(need) + " bytes (fp8_gemm_wgmma_workspace_bytes), got " +
                                    std::to_string(workspace == nullptr ? 0 : workspace_bytes));
    }
    std::size_t pitch = s.k;
    if (need > 0) {
        pitch = padded_k(s);
        auto* pa = static_cast<std::uint8_t*>(workspace);
        auto* pb = pa + align256(s.m * pitch);
        pad_rows_kernel<<<static_cast<unsigned>(std::min<std::size_t>(4096, (s.m * pitch + 255) / 256)), 256, 0, stream>>>(a, pa, s.m, s.k, pitch);
        check_launch("fp8_gemm wgmma: pad A");
        pad_rows_kernel<<<static_cast<unsigned>(std::min<std::size_t>(4096, (s.n * pitch + 255) / 256)), 256, 0, stream>>>(b, pb, s.n, s.k, pitch);
        check_launch("fp8_gemm wgmma: pad B");
        a = pa;
        b = pb;
    }
    if (reinterpret_cast<std::uintptr_t>(a) % 16 != 0 || reinterpret_cast<std::uintptr_t>(b) % 16 != 0) {
        throw std::invalid_argument("fp8_gemm wgmma: A and B must start on a 16-byte boundary (TMA)");
    }
    params p;
    p.a_scale = a_scale;
    p.b_scale = b_scale;
    p.d = static_cast<__nv_bfloat16*>(d);
    p.m = static_cast<int>(s.m);
    p.n = static_cast<int>(s.n);
    p.k_blocks = static_cast<int>(blocks_of(s.k));
    p.m_blocks = static_cast<int>(blocks_of(s.m));
    if (opt.tile_n != 128 && opt.tile_n != 144 && opt.tile_n != 192 && opt.tile_n != 256) {
        throw std::invalid_argument("fp8_gemm wgmma: tile_n must be 128, 144, 192 or 256, got " + std::to_string(opt.tile_n));
    }
    if (opt.tile_n == 144 && (opt.split || opt.pieces64 || opt.pieces_lookahead)) {
        throw std::invalid_argument("fp8_gemm wgmma: tile_n 144 runs without the split and the 64-column pieces");
    }
    const bool multicast = (opt.tile_n == 144 || opt.tile_n == 192) && (opt.cluster != 1 || opt.cluster_n != 1);
    if (multicast && opt.l2_prefetch != 0) throw std::invalid_argument("fp8_gemm wgmma: l2_prefetch runs without a cluster");
    if (multicast) {
        const int c = opt.cluster, cn = opt.cluster_n;
        const bool instantiated = opt.tile_n == 192 ? ((c == 2 || c == 4) && cn == 1)
                                                    : ((c == 2 && cn == 1) || (c == 1 && (cn == 2 || cn == 4)) || (c == 2 && cn == 2));
        if (!instantiated || !opt.overlap || opt.split || opt.pieces64 || opt.pieces_lookahead) {
            throw std::invalid_argument("fp8_gemm wgmma: multicast clusters (cluster x cluster_n) run with the overlap, without the split "
                                        "and the pieces: tile_n 192 with 2 x 1 or 4 x 1, tile_n 144 with 2 x 1, 1 x 2, 1 x 4 or 2 x 2; got tile_n " +
                                        std::to_string(opt.tile_n) + ", " + std::to_string(c) + " x " + std::to_string(cn));
        }
    } else if (opt.l2_prefetch != 0 && (opt.l2_prefetch < 0 || (opt.tile_n != 144 && opt.tile_n != 192) || !opt.overlap || opt.split || opt.pieces64 ||
                                        opt.pieces_lookahead)) {
        throw std::invalid_argument("fp8_gemm wgmma: l2_prefetch (> 0) runs with tile_n 144 or 192 and the overlap, without a cluster, the "
                                    "split and the pieces, got " + std::to_string(opt.l2_prefetch));
    } else if (opt.cluster_n != 1) {
        throw std::invalid_argument("fp8_gemm wgmma: cluster_n runs with tile_n 144 or 192 only (cluster_n 1), got " + std::to_string(opt.cluster_n));
    } else if (opt.tile_n != 128 && opt.cluster != 1) {
        throw std::invalid_argument("fp8_gemm wgmma: tile_n " + std::to_string(opt.tile_n) + " runs without a cluster (cluster 1)");
    }
    if (opt.tile_n == 256 && (!opt.overlap || opt.split)) {
        throw std::invalid_argument("fp8_gemm wgmma: tile_n 256 runs with the overlap, without the split");
    }
    if (opt.pieces_lookahead && opt.tile_n != 256 && !opt.pieces64) {
        throw std::invalid_argument("fp8_gemm wgmma: pieces_lookahead orders the 64-column pieces (tile_n 256, or pieces64)");
    }
    if (opt.pieces64 && (opt.tile_n == 128 || !opt.overlap || opt.split)) {
        throw std::invalid_argument("fp8_gemm wgmma: pieces64 runs with tile_n 192 or 256 and the overlap, without the split");
    }
    if (opt.thirds_ahead && (opt.tile_n != 144 || !opt.overlap || multicast || opt.l2_prefetch != 0)) {
        throw std::invalid_argument("fp8_gemm wgmma: thirds_ahead runs with tile_n 144 and the overlap, without a cluster and the L2 prefetch");
    }
    if (opt.split && (opt.tile_n != 192 || !opt.overlap || opt.k_serpentine)) {
        // The serpentine's K order depends on a tile's place in its CTA's sequence, which differs
        // between the CTAs sharing a cut tile.
        throw std::invalid_argument("fp8_gemm wgmma: split runs with tile_n 192 and the overlap, without the serpentine K order");
    }
    const int tile_n = opt.tile_n;
    p.n_blocks = static_cast<int>((s.n + static_cast<std::size_t>(tile_n) - 1) / static_cast<std::size_t>(tile_n));
    p.n_scale_blocks = static_cast<int>(blocks_of(s.n));
    p.tma_store = opt.tma_store && s.n % 8 == 0 && reinterpret_cast<std::uintptr_t>(d) % 16 == 0 ? 1 : 0;
    if (opt.k_stagger < 0) throw std::invalid_argument("fp8_gemm wgmma: k_stagger must be >= 0, got " + std::to_string(opt.k_stagger));
    p.k_stagger = opt.k_stagger;
    p.k_serpentine = opt.k_serpentine ? 1 : 0;

    int dev = 0;
    check_call(cudaGetDevice(&dev), "cudaGetDevice");
    const int sms = cached_sm_count(dev);
    if (!multicast && opt.cluster != 1 && opt.cluster != 2) {
        throw std::invalid_argument("fp8_gemm wgmma: cluster must be 1 or 2, got " + std::to_string(opt.cluster));
    }
    const int cluster = opt.cluster, cluster_n = multicast ? opt.cluster_n : 1;
    p.sched_m_blocks = (p.m_blocks + cluster - 1) / cluster;
    p.sched_n_blocks = (p.n_blocks + cluster_n - 1) / cluster_n;
    p.sched_tiles = p.sched_m_blocks * p.sched_n_blocks;
    p.l2_prefetch = opt.l2_prefetch;

    CUtensorMap ma, mb, md;
    make_map(&ma, CU_TENSOR_MAP_DATA_TYPE_UINT8, a, s.m, s.k, pitch, bk, bm / cluster_n, "A");
    make_map(&mb, CU_TENSOR_MAP_DATA_TYPE_UINT8, b, s.n, s.k, pitch, bk, tile_n / cluster, "B");
    if (p.tma_store) make_map(&md, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, d, s.m, s.n, s.n * 2, 64, 64, "D");
    else std::memset(&md, 0, sizeof(md));  // unused: the kernel stores D from registers

    p.plan = make_fp8_gemm_split_plan(p.sched_tiles, p.k_blocks, sms, false);
    p.sk_partial = nullptr;
    p.sk_flag = nullptr;
    p.sk_token = 0;
    if (opt.split) {
        p.plan = make_fp8_gemm_split_plan(p.sched_tiles, p.k_blocks, sms, true);
        if (p.plan.splits > 1) {
            const std::size_t split_need = fp8_gemm_wgmma_workspace_bytes(s, opt, sms);
            if (workspace == nullptr || workspace_bytes < split_need) {
                throw std::invalid_argument("fp8_gemm wgmma: split needs a workspace of " + std::to_string(split_need) +
                                            " bytes (fp8_gemm_wgmma_workspace_bytes(shape, options, SMs)), got " +
                                            std::to_string(workspace == nullptr ? 0 : workspace_bytes));
            }
            auto* base = static_cast<std::uint8_t*>(workspace) + align256(need);
            p.sk_partial = reinterpret_cast<float4*>(base);
            p.sk_flag = reinterpret_cast<unsigned long long*>(
                base + align256(static_cast<std::size_t>(fp8_gemm_split_slots(p.plan)) * bm * static_cast<std::size_t>(tile_n) * sizeof(float)));
            // The flags' ready value: never 0 (a flag's resting value) and never what a flag
            // already holds: the steady clock's nanoseconds, which no earlier launch used (a
            // repeated-byte poison pattern would be centuries of uptime).
            p.sk_token = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()) | 1ull;
        }
    }
    if (multicast) {
        // One cluster of cluster x cluster_n CTAs per cluster x cluster_n tiles, a persistent grid
        // of as many clusters as fit at once (cudaOccupancyMaxActiveClusters, cached per device and
        // kernel), or one per unit where there are fewer.
        const int ctas = cluster * cluster_n;
        void (*kernel)(CUtensorMap, CUtensorMap, CUtensorMap, params) = nullptr;
        int smem = 0, slot = 0;
        if (tile_n == 192) {
            smem = config<192, stages_n192>::smem_bytes;
            kernel = cluster == 2 ? fp8_gemm_wgmma_kernel<192, stages_n192, 2, true, false, 0, 1> : fp8_gemm_wgmma_kernel<192, stages_n192, 4, true, false, 0, 1>;
            slot = cluster == 2 ? 0 : 1;
        } else {
            smem = config<144, stages_n144>::smem_bytes;
            if (cluster == 2 && cluster_n == 1) kernel = fp8_gemm_wgmma_kernel<144, stages_n144, 2, true, false, 0, 1>, slot = 2;
            else if (cluster == 1 && cluster_n == 2) kernel = fp8_gemm_wgmma_kernel<144, stages_n144, 1, true, false, 0, 2>, slot = 3;
            else if (cluster == 1) kernel = fp8_gemm_wgmma_kernel<144, stages_n144, 1, true, false, 0, 4>, slot = 4;
            else kernel = fp8_gemm_wgmma_kernel<144, stages_n144, 2, true, false, 0, 2>, slot = 5;
        }
        check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
        cudaLaunchConfig_t lc{};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = static_cast<unsigned>(ctas);
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        lc.blockDim = dim3(threads);
        lc.dynamicSmemBytes = static_cast<std::size_t>(smem);
        lc.stream = stream;
        lc.attrs = attr;
        lc.numAttrs = 1;
        int fit = dev < max_devices ? multicast_capacity_cache[dev][slot].load() : 0;
        if (fit <= 0) {
            lc.gridDim = dim3(static_cast<unsigned>(ctas * std::max(1, sms / ctas)));
            check_call(cudaOccupancyMaxActiveClusters(&fit, kernel, &lc), "cudaOccupancyMaxActiveClusters");
            if (fit <= 0) throw std::runtime_error("fp8_gemm wgmma: no cluster of " + std::to_string(ctas) + " CTAs fits on this device");
            if (dev < max_devices) multicast_capacity_cache[dev][slot].store(fit);
        }
        lc.gridDim = dim3(static_cast<unsigned>(ctas * std::min(p.sched_tiles, fit)));
        check_call(cudaLaunchKernelEx(&lc, kernel, ma, mb, md, p), "fp8_gemm wgmma kernel (multicast cluster launch)");
        check_launch("fp8_gemm wgmma kernel");
        return;
    }
    if (tile_n == 192 && p.plan.splits > 1) {  // else the plain kernel: the same schedule
        // Two launches: the plain kernel over the whole tiles (the same machine code as without the
        // split: one kernel that also ran the tail pieces is compiled differently, and its gains fell
        // 3-8 points short of the model on an H100 in proportion to the kernel's length, NOTES.md
        // run 6), then the tail kernel, one CTA per piece. The second launch costs a 2.6-3.1 us gap
        // and more than modelled, so the suite's default uses it only where K >= 8192.
        using cfg192 = config<192, stages_n192>;
        auto* whole = fp8_gemm_wgmma_kernel<192, stages_n192, 1, true, false>;
        auto* tail = fp8_gemm_wgmma_kernel<192, stages_n192, 1, true, true>;
        check_call(cudaFuncSetAttribute(whole, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg192::smem_bytes),
                   "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
        check_call(cudaFuncSetAttribute(tail, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg192::smem_bytes),
                   "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
        if (p.plan.dp_tiles > 0) {
            params pw = p;
            pw.sched_tiles = p.plan.dp_tiles;  // the raster's first dp_tiles tiles
            whole<<<std::min(p.plan.dp_tiles, sms), threads, cfg192::smem_bytes, stream>>>(ma, mb, md, pw);
            check_launch("fp8_gemm wgmma kernel (whole tiles)");
        }
        tail<<<p.plan.tail_tiles * p.plan.splits, threads, cfg192::smem_bytes, stream>>>(ma, mb, md, p);
        check_launch("fp8_gemm wgmma kernel (tail pieces)");
        return;
    }
    if (tile_n == 256) {
        using cfg256 = config<256, stages_n256>;
        auto* kernel = opt.pieces_lookahead ? fp8_gemm_wgmma_kernel<256, stages_n256, 1, true, false, 2>
                                            : fp8_gemm_wgmma_kernel<256, stages_n256, 1, true, false, 1>;
        check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg256::smem_bytes),
                   "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
        const int grid = std::min(p.sched_tiles, sms);
        kernel<<<grid, threads, cfg256::smem_bytes, stream>>>(ma, mb, md, p);
        check_launch("fp8_gemm wgmma kernel");
        return;
    }
    if (tile_n == 144) {
        using cfg144 = config<144, stages_n144>;
        auto* kernel = opt.l2_prefetch > 0 ? fp8_gemm_wgmma_kernel<144, stages_n144, 1, true, false, 0, 1, true>
                       : opt.thirds_ahead  ? fp8_gemm_wgmma_kernel<144, stages_n144, 1, true, false, 3>
                       : opt.overlap       ? fp8_gemm_wgmma_kernel<144, stages_n144, 1, true>
                                           : fp8_gemm_wgmma_kernel<144, stages_n144, 1, false>;
        check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg144::smem_bytes),
                   "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
        const int grid = std::min(p.sched_tiles, sms);
        kernel<<<grid, threads, cfg144::smem_bytes, stream>>>(ma, mb, md, p);
        check_launch("fp8_gemm wgmma kernel");
        return;
    }
    if (tile_n == 192) {
        using cfg192 = config<192, stages_n192>;
        auto* kernel = opt.pieces64  ? (opt.pieces_lookahead ? fp8_gemm_wgmma_kernel<192, stages_n192, 1, true, false, 2>
                                                             : fp8_gemm_wgmma_kernel<192, stages_n192, 1, true, false, 1>)
                       : opt.l2_prefetch > 0 ? fp8_gemm_wgmma_kernel<192, stages_n192, 1, true, false, 0, 1, true>
                       : opt.overlap ? fp8_gemm_wgmma_kernel<192, stages_n192, 1, true>
                                     : fp8_gemm_wgmma_kernel<192, stages_n192, 1, false>;
        check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg192::smem_bytes),
                   "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
        const int grid = std::min(p.sched_tiles, sms);
        kernel<<<grid, threads, cfg192::smem_bytes, stream>>>(ma, mb, md, p);
        check_launch("fp8_gemm wgmma kernel");
        return;
    }
    using cfg = config<128, stages>;
    if (cluster == 1) {
        auto* kernel = opt.overlap ? fp8_gemm_wgmma_kernel<128, stages, 1, true> : fp8_gemm_wgmma_kernel<128, stages, 1, false>;
        check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes),
                   "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
        const int grid = std::min(p.sched_tiles, sms);
        kernel<<<grid, threads, cfg::smem_bytes, stream>>>(ma, mb, md, p);
        check_launch("fp8_gemm wgmma kernel");
        return;
    }
    auto* kernel = opt.overlap ? fp8_gemm_wgmma_kernel<128, stages, 2, true> : fp8_gemm_wgmma_kernel<128, stages, 2, false>;
    check_call(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes),
               "cudaFuncSetAttribute(fp8_gemm wgmma shared memory)");
    cudaLaunchConfig_t lc{};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    lc.blockDim = dim3(threads);
    lc.dynamicSmemBytes = cfg::smem_bytes;
    lc.stream = stream;
    lc.attrs = attr;
    lc.numAttrs = 1;
    // As many clusters as fit at once (not every SM pairs up within its GPC): a persistent grid
    // larger than that would run its last clusters as a second, nearly empty wave.
    int fit = opt.cluster_grid_from_sms ? sms / 2 : cluster_capacity(dev);
    if (fit <= 0) {
        lc.gridDim = dim3(static_cast<unsigned>(2 * std::max(1, sms / 2)));
        check_call(cudaOccupancyMaxActiveClusters(&fit, kernel, &lc), "cudaOccupancyMaxActiveClusters");
        if (fit <= 0) throw std::runtime_error("fp8_gemm wgmma: no cluster of 2 CTAs fits on this device");
        if (dev < max_devices) cluster_capacity_cache[dev].store(fit);
    }
    lc.gridDim = dim3(static_cast<unsigned>(2 * std::min(p.sched_tiles, fit)));
    check_call(cudaLaunchKernelEx(&lc, kernel, ma, mb, md, p), "fp8_gemm wgmma kernel (cluster launch)");
    check_launch("fp8_gemm wgmma kernel");
}

}  // namespace fusebench::kernels
