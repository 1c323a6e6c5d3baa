#!/usr/bin/python3
"""Emulation (CPU, numpy) of fused_bound's list kernel stretched to K = 512 and 1024 (not built): how often its
list would compact, with how many histogram passes, at list capacities of 2048 and 4096 entries a warp.

Diagnostic, not part of the build. Today the list kernel serves 16-bit K in (32, 256] with 1024 entries a warp (32
warps an SM); 16-bit K = 1024 goes to fused_stream's wide kernel at 38.9 / 40.4% of the floor (bf16 / fp16, H100;
issue 22 asks 70%). A list of 4096 entries (16 KB) and a 256-bin histogram a warp would leave 8-12 warps an SM, each
with several rows, so one warp's end would overlap the others' streams. This script runs list_emulation.py's model
of the list (the vote, exact compactions before a batch, the end's compaction and exact K-th element) with a
larger CAP, checks every row's top K against a stable sort and prints, per kind, the stream's compactions and
histogram passes a row and the vectors that joined.

  /usr/bin/python3 wide_list_emulation.py [--rows N] [--seed S]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import list_emulation as le  # noqa: E402
from approx_compaction_emulation import Counting  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    kinds = ("random", "suite_ties", "ties", "all_equal", "ascending", "descending", "cluster256", "masked", "plateau")
    bad = 0
    print("kind        dtype      V     K   CAP: compactions / passes a row in the stream; vectors joined a row")
    for cap, K in ((2048, 512), (4096, 512), (4096, 1024)):
        le.CAP = cap
        for kind in kinds:
            for V in (50257, 32000):
                for bf16 in (True, False):
                    c, joined = Counting(), 0  # exact compactions, counted
                    for r in range(a.rows):
                        bits, ref = le.sample_row(kind, V, K, bf16, rng)
                        n = [0]
                        nvec, ek, valid, vk = le.row_vectors(bits, r % 8)
                        le.run_list(nvec, vk, K, "t", on_join=lambda j, t: n.__setitem__(0, n[0] + 1))
                        joined += n[0]
                        if le.row_topk(bits, K, "t", r % 8, stream_compact=c) != ref:
                            bad += 1
                            print(f"WRONG {kind} V {V} K {K} CAP {cap}")
                    k = a.rows
                    print(f"{kind:11s} {'bf16' if bf16 else 'fp16'} {V:6d} {K:5d} {cap:5d}: "
                          f"{c.compactions / k:5.2f} / {c.passes / k:5.2f}; {joined / k:7.1f}")
    print(f"rows with wrong indices: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
