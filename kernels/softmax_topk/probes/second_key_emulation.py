#!/usr/bin/python3
"""Emulation (CPU, numpy) of a proposed end for fused_bound's list kernel: read again only the held vectors that
can hold more than one of the top K elements.

Diagnostic, not part of the build. Today the end reads all K held vectors again (the "read K vectors" phase: 29 us
a random bf16 row of 4096 x 50257 K = 256 on an H200, DRAM-bound at random 64-byte reads: session s calls 4-5). The
proposal: when a vector joins the list (its max key above the vote's threshold t), its lane also records a flag,
"the vector's second-largest key >= t" (the max key counted once), and the position of its max element (unique
when the flag is clear). t never falls and the K-th element key t2 of the end is >= the final t, so an unflagged
vector's other elements are below t2 and never in the top K: it contributes only (max key, its index), and only the
flagged held vectors are read again. This script runs list_emulation.py's exact model of the kernel's list (vote,
compactions at n + 32 U > 1024, end compaction), adds the flag, builds the top K from the candidates the proposal
would have (unflagged: the max element; flagged: every element), checks the result against a stable sort of the row,
and counts the flagged held vectors per row (what the end would read again instead of K).

  /usr/bin/python3 second_key_emulation.py [--rows N] [--seed S] [--mode join|final|tm]

(--mode: when the flag is decided; final and tm need the second key kept beside each list entry, 16 bits, or 13
with the max's position in the other 3, compared rounded up.)
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from list_emulation import row_vectors, run_list, sample_row  # noqa: E402


def second_keys(ek, valid):
    """Each vector's second-largest in-row element key (0 where it has fewer than two), the max counted once."""
    k = np.where(valid, ek, 0)
    s = np.sort(k, axis=1)
    return s[:, -2]


def row_topk_flagged(bits, K, h, mode):
    nvec, ek, valid, vk = row_vectors(bits, h)
    sk = second_keys(ek, valid)
    flag = {}

    def on_join(j, t_join):
        flag[j] = int(sk[j]) >= t_join  # the vote's t when the vector joins

    lst, t = run_list(nvec, vk, K, "t", on_join)
    held = [j for _, j in lst]
    if mode in ("final", "final13"):  # the second key kept beside the entry, compared with the final t
        for j in held:  # final13: its top 13 bits kept (the max's position in the low 3), compared rounded up
            flag[j] = (int(sk[j]) | (7 if mode == "final13" else 0)) >= t
    elif mode == "tm":  # ... with tM, the K-th largest of the held vectors' max and second keys (<= t2)
        ms = sorted([int(vk[j]) for j in held] + [int(sk[j]) for j in held], reverse=True)
        tm = ms[K - 1] if len(ms) >= K else 0
        for j in held:
            flag[j] = int(sk[j]) >= tm
    cand = []
    nflag = 0
    for j in held:
        if flag[j]:
            nflag += 1
            cand += [(int(ek[j, e]), 8 * j + e - h) for e in range(8) if valid[j, e]]
        else:
            e = int(np.argmax(np.where(valid[j], ek[j], -1)))  # unique when the flag is clear
            cand.append((int(ek[j, e]), 8 * j + e - h))
    cand.sort(key=lambda c: (-c[0], c[1]))
    return [i for _, i in cand[:K]], nflag, len(held)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mode", choices=["join", "final", "final13", "tm"], default="join",
                    help="join: a flag set as the vector joins (second key >= the vote's t then); final: the second "
                         "key kept and compared with the final t (final13: its top 13 bits, rounded up); tm: compared with the K-th of the held vectors' "
                         "max and second keys")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    kinds = ("random", "suite_ties", "ties", "all_equal", "ascending", "descending", "cluster256", "masked",
             "mostly_masked", "plateau")
    shapes = ((50257, 256), (32000, 256), (50257, 64), (50257, 128), (2100, 129))
    bad = 0
    print("kind          dtype V      K    flagged held vectors a row (of the held): min / mean / max; rows")
    for kind in kinds:
        for V, K in shapes:
            for bf16 in (True, False):
                counts = []
                for r in range(a.rows):
                    bits, ref = sample_row(kind, V, K, bf16, rng)
                    got, nflag, nheld = row_topk_flagged(bits, K, r % 8, a.mode)
                    if got != ref:
                        bad += 1
                        print(f"WRONG {kind} {'bf16' if bf16 else 'fp16'} V {V} K {K} row {r}")
                    counts.append((nflag, nheld))
                f = [c for c, _ in counts]
                print(f"{kind:13s} {'bf16' if bf16 else 'fp16'}  {V:6d} {K:4d} {min(f):4d} / {np.mean(f):6.1f} / "
                      f"{max(f):4d} (of {counts[0][1]}); {len(counts)}")
    print(f"rows with wrong indices: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
