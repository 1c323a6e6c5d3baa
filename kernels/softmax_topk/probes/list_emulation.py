#!/usr/bin/python3
"""Emulation of fused_bound's list kernel selection (fused_bound.cu, K in (32, 256]; session q), on the CPU.

Diagnostic, not part of the build. Mirrors the kernel's row: the vote (a vector whose max key beats t joins the list,
in index order), the compaction before a batch when n + 32 U > 1024 (exact top K vectors by two histograms of the
distance below the lanes' largest appended key, the K-th key's ties by list order), the end (the list compacted to K,
the K vectors' element keys, the K-th element key by the same histograms over the keys above the K-th vector key,
exactly K emitted, sorted by (key, -index)), and checks every histogram bin against its window (the kernel has no
such check: an out-of-window key there is an atomic outside the 256 bins) and the result against a stable sort of the
row. --kmin-after t+1 reproduces the kernel of 9c1a5f2 (the window's lower end one past the kept ties).

  /usr/bin/python3 list_emulation.py [--kmin-after t|t+1] [--rows N] [--seed S]   (numpy: Debian's python3-numpy)

Kinds: the suite's ties, all_equal, ascending, descending, cluster256, masked and plateau, the probes' ties, random,
and rows with fewer finite elements than K; fp16 and bf16; the rows' first element at every offset of a vector.
"""
import argparse
import numpy as np

U, CAP = 3, 1024


def key16(bits):
    bits = bits.astype(np.int64)
    neg = (bits >> 15) & 1
    mag = bits & 0x7FFF
    return np.where(neg == 1, (0x8000 - mag) & 0xFFFF, 0x8000 + mag)


class WindowError(Exception):
    pass


def kth_key(keys, need, kmin, kmax):
    """The need-th largest key (keys: the active ones), as bnd_kth_key: returns (t, above)."""
    rng = kmax - kmin
    sh = 0
    while (rng >> sh) >= 256:
        sh += 1
    d = kmax - keys
    b1 = d >> sh
    if (b1 < 0).any() or (b1 > 255).any():
        raise WindowError(f"pass 1 bin outside [0, 255]: d {d.min()}..{d.max()}, window {rng} (sh {sh})")
    hist = np.bincount(b1, minlength=256)
    cum = np.cumsum(hist)
    dhi = int(np.searchsorted(cum, need))  # the first bin (smallest distance first) where the count reaches need
    a1 = int(cum[dhi - 1]) if dhi > 0 else 0
    if sh == 0:
        return kmax - dhi, a1
    sel = d[b1 == dhi] & ((1 << sh) - 1)
    h2 = np.bincount(sel, minlength=256)
    c2 = np.cumsum(h2)
    dlo = int(np.searchsorted(c2, need - a1))
    a2 = int(c2[dlo - 1]) if dlo > 0 else 0
    return kmax - ((dhi << sh) | dlo), a1 + a2


def compact(lst, K, kmin, kmax):
    keys = np.array([k for k, _ in lst], dtype=np.int64)
    t, above = kth_key(keys, K, kmin, kmax)
    need_eq = K - above
    out, eq = [], 0
    for k, j in lst:
        if k > t:
            out.append((k, j))
        elif k == t and eq < need_eq:
            out.append((k, j))
            eq += 1
        elif k == t:
            eq += 1
    assert len(out) == K
    return out, t


def bf16_bits(x32):
    """float32 -> bf16 bit patterns, round to nearest even (finite inputs)."""
    u = x32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bits_value(bits, bf16):
    if bf16:
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.view(np.float16).astype(np.float64)


def row_vectors(bits, h):
    """The row as the kernel's 16-byte vectors: their count, element keys, in-row masks and max keys."""
    V = len(bits)
    nvec = (h + V + 7) // 8
    pad = np.zeros(nvec * 8, dtype=np.uint16)
    pad[h:h + V] = bits
    ek = key16(pad).reshape(nvec, 8)
    valid = np.zeros(nvec * 8, dtype=bool)
    valid[h:h + V] = True
    valid = valid.reshape(nvec, 8)
    return nvec, ek, valid, np.where(valid, ek, 0).max(axis=1)


def run_list(nvec, vk, K, kmin_after="t", on_join=None, stream_compact=None):
    """The kernel's list over a row's vectors (max keys vk): the vote, the compactions before each batch, the end's
    compaction to K. Returns (the held (key, vector) entries, the final t). on_join(j, t): called for each vector
    that joins, with the vote's t at that moment. stream_compact(lst, K, kmin, kmax) -> (lst, t): the compactions
    in the stream (default: compact, exact); the end's is always exact."""
    stream_compact = stream_compact or compact
    lst, t, kmn, kmx = [], 0, 0xFFFF, 0

    def append(j):
        nonlocal kmn, kmx
        k = int(vk[j])
        if k > t:
            lst.append((k, j))
            if on_join is not None:
                on_join(j, t)
            kmn, kmx = min(kmn, k), max(kmx, k)

    def before_batch():
        nonlocal lst, t, kmn
        if len(lst) + 32 * U > CAP:
            lst, t = stream_compact(lst, K, kmn, kmx)
            kmn = t if kmin_after == "t" else t + 1

    append(0)
    mid = list(range(1, nvec - 1))
    for b in range(0, len(mid), 32 * U):
        before_batch()
        for j in mid[b:b + 32 * U]:
            append(j)
    if nvec > 1:
        before_batch()
        append(nvec - 1)
    if len(lst) > K:
        lst, t = compact(lst, K, kmn, kmx)
    return lst, t


def row_topk(bits, K, kmin_after, h=0, stream_compact=None):
    """bits: the row's 16-bit patterns; h: its first element's position in the first 16-byte vector."""
    nvec, ek, valid, vk = row_vectors(bits, h)
    lst, t = run_list(nvec, vk, K, kmin_after, stream_compact=stream_compact)
    tmin = max(t, 1)
    held = [j for _, j in lst]
    cand = [(int(ek[j, e]), 8 * j + e - h) for j in held for e in range(8) if valid[j, e]]
    above_n = sum(1 for k, _ in cand if k > tmin)
    if above_n >= K:
        Mkey = int(ek[valid].max())
        t2, above = kth_key(np.array([k for k, _ in cand if k > tmin], dtype=np.int64), K, tmin + 1, Mkey)
    else:
        t2, above = tmin, above_n
    need_eq = K - above
    cand.sort(key=lambda c: c[1])  # the kernel emits ties in index order
    out, eq = [], 0
    for k, i in cand:
        if k > t2 or (k == t2 and eq < need_eq):
            out.append((k, i))
            eq += k == t2
    assert len(out) == K, (len(out), K)
    out.sort(key=lambda c: (-c[0], c[1]))
    return [i for _, i in out]


def make_row(kind, V, rng):
    """float64 logits of one row, as the suite's kinds (suites/softmax_topk_suite.cpp) or the probes' ties."""
    n = rng.normal(0.0, 1.0, V)
    j = np.arange(V, dtype=np.float64)
    if kind == "random":
        return 10.0 * n
    if kind == "suite_ties":  # floor(2 n) / 2: fp16 keys of 2.0 and 2.5 are 256 apart
        return np.floor(2.0 * n) * 0.5
    if kind == "ties":  # the probes' kind: N(0, 10) rounded to 0.5
        return np.rint(20.0 * n) * 0.5
    if kind == "all_equal":
        return np.full(V, 0.5)
    if kind == "ascending":
        return -4.0 + 8.0 * j / V
    if kind == "descending":
        return 4.0 - 8.0 * j / V
    if kind == "cluster256":
        return np.where(j % 256 == 3, 20.0 + n, n - 5.0)
    if kind == "masked":
        return np.where(rng.random(V) < 0.3, -np.inf, 3.0 * n)
    if kind == "mostly_masked":  # fewer finite elements than K: the top K ends in -inf ties by index
        return np.where(rng.random(V) < 0.995, -np.inf, 3.0 * n)
    if kind == "plateau":
        return np.where(np.arange(V) % max(V // 40, 1) == 7, 3.0, 1.0)
    raise ValueError(kind)


def sample_row(kind, V, K, bf16, rng):
    """One row of `kind` as 16-bit patterns (bf16 or fp16) and its reference top K indices (a stable sort)."""
    x = make_row(kind, V, rng)
    bits = bf16_bits(x) if bf16 else x.astype(np.float16).view(np.uint16)
    vals = bits_value(bits, bf16)
    return bits, sorted(range(V), key=lambda i: (-vals[i], i))[:K]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kmin-after", choices=["t", "t+1"], default="t")
    ap.add_argument("--rows", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    bad = windows = rows = 0
    kinds = ("suite_ties", "ties", "random", "all_equal", "ascending", "descending", "cluster256", "masked",
             "mostly_masked", "plateau")
    shapes = ((32000, 50), (32000, 256), (50257, 64), (50257, 256), (20001, 33), (300, 256), (2100, 256), (2100, 129))
    for kind in kinds:
        for V, K in shapes:
            for bf16 in (False, True):
                for r in range(a.rows):
                    bits, ref = sample_row(kind, V, K, bf16, rng)
                    h = r % 8  # the row's offset in its first vector (rows start at every 2-byte offset)
                    rows += 1
                    try:
                        got = row_topk(bits, K, a.kmin_after, h)
                    except WindowError as e:
                        windows += 1
                        if windows <= 3:
                            print(f"{kind} {'bf16' if bf16 else 'fp16'} V {V} K {K}: {e}")
                        continue
                    if got != ref:
                        bad += 1
                        if bad <= 3:
                            print(f"WRONG {kind} {'bf16' if bf16 else 'fp16'} V {V} K {K} h {h}")
    print(f"vector list, kmin after a compaction = {a.kmin_after}: {rows} rows, {windows} with a key outside the histogram's "
          f"window, {bad} with wrong indices")


if __name__ == "__main__":
    main()
