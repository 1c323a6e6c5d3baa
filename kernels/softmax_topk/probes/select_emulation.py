#!/usr/bin/env python3
# Emulates the selection bookkeeping of fused_stream's K <= 32 kernel on random rows (counts only,
# no GPU): the threshold seeded with the K-th largest of the 32 lane maxima of the first batch, a
# warp step (32 vectors) running append_elems when any of its elements beats the threshold,
# compactions at batch starts when the buffer could not hold another batch (cap = 32 + one batch),
# keeping the K-th key's radix bin whole up to relaxed_limit keys (8-bit digits from the top of the
# 64-bit (value key, ~index) composite, as warp_radix_select). Prints per row: warp steps, steps
# with an append, candidates, compactions, radix passes, and the share of append steps in the
# first eighth / half of the batches; for the default trigger and for earlier ones (compact when
# more than T keys are held, keeping at most T). kernels/softmax_topk/NOTES.md, "topk8".
#   python3 kernels/softmax_topk/probes/select_emulation.py [K=10] [V=50257] [rows=12]
import sys

import numpy as np


def bf16(x):
    b = x.astype(np.float32).view(np.uint32)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return b.view(np.float32)


def fkey(x):
    b = (x.astype(np.float32) + np.float32(0)).view(np.uint32).astype(np.uint64)
    return np.where(b & np.uint64(0x80000000), (~b) & np.uint64(0xFFFFFFFF), b | np.uint64(0x80000000))


def comp(x, idx):
    return (fkey(x) << np.uint64(32)) | ((~idx.astype(np.uint64)) & np.uint64(0xFFFFFFFF))


def kval(c):
    k = int(c) >> 32
    b = (k & 0x7FFFFFFF) if (k & 0x80000000) else ((~k) & 0xFFFFFFFF)
    return np.array([b], dtype=np.uint32).view(np.float32)[0]


def radix(keys, K, limit):
    need, prefix, mask, shift, passes = K, 0, 0, 56, 0
    while True:
        passes += 1
        sel = keys[(keys & np.uint64(mask)) == np.uint64(prefix)]
        h = np.bincount(((sel >> np.uint64(shift)) & np.uint64(255)).astype(np.int64), minlength=256)
        cum = 0
        for b in range(255, -1, -1):
            if cum + h[b] >= need:
                digit, above, inb = b, cum, h[b]
                break
            cum += h[b]
        need -= above
        prefix |= digit << shift
        mask |= 0xFF << shift
        if K - need + inb <= limit or shift == 0:
            return prefix, passes
        shift = max(shift - 8, 0)


def run(x, K, W, U, T=None):
    V = len(x)
    idx = np.arange(V, dtype=np.uint64)
    nvec, per_batch, step = V // W, 32 * U, 32 * W
    cap = 32 + U * step
    keys = np.zeros(0, dtype=np.uint64)
    first = x[: per_batch * W].reshape(U, 32, W)
    lm = np.sort(first.max(axis=(0, 2)))[::-1]
    thr = np.nextafter(np.float32(lm[K - 1]), np.float32(-np.inf))
    app = cands = comps = passes = 0
    early = [0, 0]
    nb = (nvec + per_batch - 1) // per_batch
    for b in range(nb):
        trig = (len(keys) + per_batch * W > cap) if T is None else (len(keys) > T)
        if trig:
            comps += 1
            limit = max(K, min(K + (cap - K) // 4, cap - per_batch * W)) if T is None else T
            kt, p = radix(keys, K, limit)
            passes += p
            keys = keys[keys >= np.uint64(kt)]
            thr = kval(keys.min())
        for u in range(U):
            s0 = (b * per_batch + u * 32) * W
            if s0 >= nvec * W:
                break
            blk, bi = x[s0 : s0 + step], idx[s0 : s0 + step]
            m = blk > thr
            if m.any():
                app += 1
                early[0] += b < nb // 8
                early[1] += b < nb // 2
                cands += int(m.sum())
                keys = np.concatenate([keys, comp(blk[m], bi[m])])
    return np.array([app, cands, comps, passes, early[0], early[1]], dtype=np.float64)


def main():
    K = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    V = int(sys.argv[2]) if len(sys.argv) > 2 else 50257
    R = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    rng = np.random.default_rng(1)
    for dt, W, U in (("bf16", 8, 3), ("fp32", 4, 3)):
        xs = [rng.standard_normal(V).astype(np.float32) * 10 for _ in range(R)]
        if dt == "bf16":
            xs = [bf16(x) for x in xs]
        for T in (None, 24, 16, 12):
            if T is not None and T < K:
                continue
            a = sum(run(x, K, W, U, T) for x in xs) / R
            print(f"{dt} K={K} V={V} trigger {'batch room' if T is None else T}: warp steps {V // W // 32}, "
                  f"append steps {a[0]:.1f} ({a[4] / a[0]:.2f} in the first eighth, {a[5] / a[0]:.2f} in the first half), "
                  f"candidates {a[1]:.1f}, compactions {a[2]:.1f}, radix passes {a[3]:.1f}")


if __name__ == "__main__":
    main()
