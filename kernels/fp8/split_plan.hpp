// The stream-K work split of the FP8 wgmma GEMM (gemm_wgmma.cu, options.split): plain constexpr
// arithmetic, shared by the host (launcher, workspace size, CPU tests) and the kernel (compiled
// with --expt-relaxed-constexpr), so both walk exactly the same work items.
//
// A persistent grid of `grid` CTAs. The tiles of D in raster order are split in two parts:
// - data-parallel: tiles [0, dp_tiles), dp_tiles a multiple of the grid; CTA c takes whole tiles
//   c, c + grid, ... (the plain persistent schedule);
// - stream-K: the remaining sk_tiles = tiles - dp_tiles tiles, their K positions flattened into
//   sk_iters = sk_tiles x k_blocks iterations (one 128-wide K block each, so a split always falls
//   on a scale block), cut into `grid` contiguous ranges of equal length (+-1):
//   CTA c takes [split_begin(c), split_begin(c + 1)).
// The stream-K part is the last partial wave plus one full wave (when there is a full wave), so
// every range holds at least one whole tile's worth of iterations: no CTA runs a sliver of a tile,
// and where the range is at least k_blocks long a tile is cut at most once.
//
// A tile cut into segments: the CTA holding its first segment (K positions from 0) keeps its
// partial sum in registers; every other segment is the first work item of its CTA's range, whose
// partial goes into that CTA's slot of the workspace with a ready flag; the first segment's CTA
// then adds the other segments' partials in ascending order (CTA c + 1, c + 2, ...) and stores
// D: a fixed summation order, so D is the same bit for bit on every run (on a given grid size).
#pragma once

namespace fusebench::kernels {

struct fp8_gemm_split_plan {
    int grid = 0;        // CTAs of the persistent grid
    int tiles = 0;       // tiles of D
    int k_blocks = 0;    // K blocks of 128 per tile
    int dp_tiles = 0;    // tiles taken whole, strided over the grid (a multiple of grid)
    long long sk_iters = 0;  // (tiles - dp_tiles) x k_blocks iterations split evenly over the grid
};

// tiles, k_blocks >= 1, sms >= 1. split false: the plain persistent schedule (min(tiles, sms)
// CTAs, every tile whole). split true: where the tiles fill whole waves of the SMs exactly there is
// nothing to balance (the plain schedule on sms CTAs); otherwise min(sms, tiles x k_blocks) CTAs,
// the last partial wave plus one full wave (if any) in stream-K ranges.
constexpr fp8_gemm_split_plan make_fp8_gemm_split_plan(int tiles, int k_blocks, int sms, bool split) {
    fp8_gemm_split_plan p;
    p.tiles = tiles;
    p.k_blocks = k_blocks;
    if (!split || (tiles >= sms && tiles % sms == 0)) {
        p.grid = tiles < sms ? tiles : sms;
        p.dp_tiles = tiles;
        return p;
    }
    const long long iters = static_cast<long long>(tiles) * k_blocks;
    p.grid = iters < sms ? static_cast<int>(iters) : sms;
    const int full_waves = tiles / p.grid;
    p.dp_tiles = full_waves >= 1 ? (full_waves - 1) * p.grid : 0;
    p.sk_iters = static_cast<long long>(tiles - p.dp_tiles) * k_blocks;
    return p;
}

// First stream-K iteration of CTA c (0 <= c <= grid; c = grid gives the end).
constexpr long long fp8_gemm_split_begin(const fp8_gemm_split_plan& p, int c) {
    return p.grid > 0 ? static_cast<long long>(c) * p.sk_iters / p.grid : 0;
}

// One work item: K positions [j0, j1) of tile `tile` (raster index); whole when j0 == 0 and
// j1 == k_blocks.
struct fp8_gemm_work {
    int tile = 0, j0 = 0, j1 = 0;
};

// CTA c's work items in order: its data-parallel tiles, then its stream-K range. The state is a
// few ints (the kernel's consumers hold it beside 192 accumulator registers); the plan's fields are
// read from the plan passed to next(), the same one the cursor was made from.
struct fp8_gemm_split_cursor {
    int next_dp = 0;              // next whole tile of the data-parallel part
    int tile = 0, j = 0;          // next stream-K position: tile (from dp_tiles) and K position
    int end_tile = 0, end_j = 0;  // one past the range's last iteration, as (tile, position)
    constexpr fp8_gemm_split_cursor(const fp8_gemm_split_plan& p, int c) : next_dp(c) {
        const long long b = fp8_gemm_split_begin(p, c), e = fp8_gemm_split_begin(p, c + 1);
        if (p.k_blocks > 0) {
            tile = static_cast<int>(b / p.k_blocks);
            j = static_cast<int>(b - static_cast<long long>(tile) * p.k_blocks);
            end_tile = static_cast<int>(e / p.k_blocks);
            end_j = static_cast<int>(e - static_cast<long long>(end_tile) * p.k_blocks);
        }
    }
    constexpr bool next(const fp8_gemm_split_plan& p, fp8_gemm_work& w) {
        if (next_dp < p.dp_tiles) {
            w.tile = next_dp;
            w.j0 = 0;
            w.j1 = p.k_blocks;
            next_dp += p.grid;
            return true;
        }
        if (tile < end_tile || (tile == end_tile && j < end_j)) {
            w.tile = p.dp_tiles + tile;
            w.j0 = j;
            w.j1 = tile < end_tile ? p.k_blocks : end_j;
            ++tile;
            j = 0;
            return true;
        }
        return false;
    }
};

// For the first segment of stream-K tile `tile` (held by CTA c): one past the last CTA holding a
// later segment of it (CTAs c + 1 .. result - 1 each hold one, as the first item of their range).
constexpr int fp8_gemm_split_partners_end(const fp8_gemm_split_plan& p, int c, int tile) {
    const long long tile_end = static_cast<long long>(tile - p.dp_tiles + 1) * p.k_blocks;
    int e = c + 1;
    while (e < p.grid && fp8_gemm_split_begin(p, e) < tile_end) ++e;
    return e;
}

}  // namespace fusebench::kernels
