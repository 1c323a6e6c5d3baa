#!/usr/bin/python3
"""Emulation (CPU, numpy) of a proposed change to fused_bound's list kernel: in-stream compactions that stop after
the first histogram pass when that pass already separates a small enough head of the list.

Diagnostic, not part of the build. Today every compaction in the stream is exact (bnd_compact: the K-th key by up to
two 256-bin histogram passes, then the top K kept, ties by list order). 16-bit keys of a random row's head span more
than 256 keys in fp16 (bins of 2^sh keys, so a second pass), fewer in bf16 (one pass): fp16 rows spend more in
their compactions (H200 timeline, session s: 20.5 against 17.8 us a row). The proposal: when the first pass needs
sh > 0 and the bins above the K-th key's bin plus that bin hold at most K + SLACK entries, keep all of them (every key
at or above the bin's lowest, klow) and set the vote's t to klow - 1; the end's compaction stays exact. The list then
holds a superset of the top K vectors, so the result is unchanged, but it may fill sooner. This script counts, per
row, the stream's compactions and their histogram passes, exact against approximate, and checks every row's top K
against a stable sort.

  /usr/bin/python3 approx_compaction_emulation.py [--rows N] [--seed S] [--slack 128]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from list_emulation import compact, row_topk, sample_row  # noqa: E402


class Counting:
    """Stream compactions (exact or approximate with `slack`), counting compactions and histogram passes."""

    def __init__(self, slack=None):
        self.slack, self.compactions, self.passes = slack, 0, 0

    def __call__(self, lst, K, kmin, kmax):
        self.compactions += 1
        keys = np.array([k for k, _ in lst], dtype=np.int64)
        rng = kmax - kmin
        sh = 0
        while (rng >> sh) >= 256:
            sh += 1
        self.passes += 1
        if sh > 0 and self.slack is not None:
            b1 = (kmax - keys) >> sh
            hist = np.bincount(b1, minlength=256)
            cum = np.cumsum(hist)
            dhi = int(np.searchsorted(cum, K))  # the K-th key's bin (distance bins, nearest kmax first)
            kept = int(cum[dhi])
            klow = kmax - ((dhi << sh) | ((1 << sh) - 1))
            if kept <= K + self.slack and klow > 1:
                out = [(k, j) for k, j in lst if k >= klow]
                assert len(out) == kept
                return out, klow - 1
        self.passes += 1 if sh > 0 else 0
        return compact(lst, K, kmin, kmax)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--slack", type=int, default=128)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    kinds = ("random", "suite_ties", "ties", "all_equal", "ascending", "descending", "cluster256", "masked",
             "mostly_masked", "plateau")
    shapes = ((50257, 256), (32000, 256), (50257, 64), (50257, 128))
    bad = 0
    print(f"slack {a.slack}: per row, stream compactions / histogram passes, exact -> approximate")
    for kind in kinds:
        for V, K in shapes:
            for bf16 in (True, False):
                ex, ap_ = Counting(), Counting(a.slack)
                for r in range(a.rows):
                    bits, ref = sample_row(kind, V, K, bf16, rng)
                    for c in (ex, ap_):
                        if row_topk(bits, K, "t", r % 8, stream_compact=c) != ref:
                            bad += 1
                            print(f"WRONG {kind} {'bf16' if bf16 else 'fp16'} V {V} K {K} row {r} "
                                  f"({'approximate' if c.slack is not None else 'exact'})")
                n = a.rows
                print(f"{kind:13s} {'bf16' if bf16 else 'fp16'} {V:6d} K {K:4d}: {ex.compactions / n:5.2f} / "
                      f"{ex.passes / n:5.2f} -> {ap_.compactions / n:5.2f} / {ap_.passes / n:5.2f}")
    print(f"rows with wrong indices: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
