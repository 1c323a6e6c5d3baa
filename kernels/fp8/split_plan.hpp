// The stream-K work split of the FP8 wgmma GEMM (gemm_wgmma.cu, options.split): plain constexpr
// arithmetic, shared by the host (launcher, workspace size, CPU tests) and the kernel (compiled
// with --expt-relaxed-constexpr), so both walk exactly the same work items.
//
// The tiles of D in raster order are split in two parts:
// - whole tiles [0, dp_tiles), every full wave of the SMs: the plain persistent schedule (CTA c
//   takes tiles c, c + grid, ...; the kernel runs them in a launch of their own, the same machine
//   code as without the split);
// - the tail: the last tail_tiles tiles (the partial last wave), each cut along K into `splits`
//   pieces of whole 128-wide K blocks (a split always falls on a scale block): piece s of tail
//   tile r is CTA s x tail_tiles + r's work (of a second launch of tail_tiles x splits CTAs), K
//   positions [s k_blocks / splits, (s + 1) k_blocks / splits). All pieces run at the same time,
//   in step over K, like the tiles of a wave (a first version cut the last waves into one
//   contiguous range of (tile, K block) iterations per CTA, stream-K proper: the CTAs then read
//   unrelated K blocks at once, and the long-K shapes ran up to 10% slower on an H100 than
//   without it; kernels/fp8/NOTES.md run 6).
// splits is chosen to minimise the tail's modelled time, ceil(k_blocks / splits) iterations of
// the piece plus, with splits > 1, one iteration's worth for the partial's write and one for each
// partial the first piece's CTA reads (a 128 x 192 fp32 partial takes about as long to move
// between L2 and one SM as one K block takes on the tensor cores); splits 1: no tail, every tile
// whole (the plain schedule).
//
// A cut tile: the CTA holding piece 0 keeps its partial sum in registers; the CTA holding piece s
// >= 1 writes its partial into slot (s - 1) x tail_tiles + r of the workspace with a ready flag;
// the piece-0 CTA adds pieces 1, 2, ... in that order and stores D: a fixed summation order, so D
// is the same bit for bit on every run (on a given grid size).
#pragma once

namespace fusebench::kernels {

struct fp8_gemm_split_plan {
    int grid = 0;        // CTAs of the persistent grid (of the whole tiles; the tail: tail_tiles x splits)
    int tiles = 0;       // tiles of D
    int k_blocks = 0;    // K blocks of 128 per tile
    int dp_tiles = 0;    // tiles taken whole, strided over the grid
    int tail_tiles = 0;  // tiles cut along K (0 when splits is 1)
    int splits = 1;      // pieces per tail tile
};

// The tail's modelled time [K-block iterations] with `splits` pieces per tile.
constexpr int fp8_gemm_split_tail_cost(int k_blocks, int splits) {
    return (k_blocks + splits - 1) / splits + (splits > 1 ? splits : 0);
}

// tiles, k_blocks >= 1, sms >= 1. split false, or nothing to gain: the plain persistent schedule
// (min(tiles, sms) CTAs, every tile whole).
constexpr fp8_gemm_split_plan make_fp8_gemm_split_plan(int tiles, int k_blocks, int sms, bool split) {
    fp8_gemm_split_plan p;
    p.tiles = tiles;
    p.k_blocks = k_blocks;
    p.grid = tiles < sms ? tiles : sms;
    p.dp_tiles = tiles;
    const int rem = tiles % sms;
    if (!split || rem == 0) return p;
    const int most = sms / rem < k_blocks ? sms / rem : k_blocks;
    int best = 1;
    for (int s = 2; s <= most; ++s) {
        if (fp8_gemm_split_tail_cost(k_blocks, s) < fp8_gemm_split_tail_cost(k_blocks, best)) best = s;
    }
    if (best == 1) return p;
    p.splits = best;
    p.tail_tiles = rem;
    p.dp_tiles = tiles - rem;
    p.grid = tiles >= sms ? sms : rem * best;
    return p;
}

// Partial-sum slots of the workspace (pieces s >= 1 of the tail tiles).
constexpr int fp8_gemm_split_slots(const fp8_gemm_split_plan& p) { return p.tail_tiles * (p.splits - 1); }

// One work item: K positions [j0, j1) of tile `tile` (raster index); whole when j0 == 0 and
// j1 == k_blocks.
struct fp8_gemm_work {
    int tile = 0, j0 = 0, j1 = 0;
};

// CTA c's tail piece, if it has one: piece c / tail_tiles of tail tile c % tail_tiles.
constexpr bool fp8_gemm_split_piece(const fp8_gemm_split_plan& p, int c, fp8_gemm_work& w) {
    if (p.splits <= 1 || c >= p.tail_tiles * p.splits) return false;
    const int r = c % p.tail_tiles, s = c / p.tail_tiles;
    w.tile = p.dp_tiles + r;
    w.j0 = s * p.k_blocks / p.splits;
    w.j1 = (s + 1) * p.k_blocks / p.splits;
    return true;
}

// CTA c's work items in order: its data-parallel tiles, then its tail piece (if any). The state is
// a few ints (the kernel's consumers hold it beside 192 accumulator registers); the plan's fields
// are read from the plan passed to next(), the same one the cursor was made from.
struct fp8_gemm_split_cursor {
    int next_dp = 0;                 // next whole tile
    int tail_tile = 0, j0 = 0, j1 = 0;  // the tail piece (j1 == 0: none, or taken)
    constexpr fp8_gemm_split_cursor(const fp8_gemm_split_plan& p, int c) : next_dp(c) {
        fp8_gemm_work w;
        if (fp8_gemm_split_piece(p, c, w)) {
            tail_tile = w.tile;
            j0 = w.j0;
            j1 = w.j1;
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
        if (j1 > 0) {
            w.tile = tail_tile;
            w.j0 = j0;
            w.j1 = j1;
            j1 = 0;
            return true;
        }
        return false;
    }
};

// The workspace slot of piece s >= 1 of the tail tile whose piece 0 is CTA c (c < tail_tiles);
// the CTA holding that piece is c + s x tail_tiles, which writes its partial there.
constexpr int fp8_gemm_split_slot(const fp8_gemm_split_plan& p, int c, int s) { return c + (s - 1) * p.tail_tiles; }

}  // namespace fusebench::kernels
