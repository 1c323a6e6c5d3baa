#!/usr/bin/python3
# The drift of a lane's fp32 sum on a plateau row, emulated on the CPU (numpy float32): 32 lanes, 16-byte vectors
# (W = 8 16-bit or 4 fp32 elements) dealt to lanes in turn as fused_stream and fused_bound read them, terms
# exp(x - M) rounded to fp32 (the kernels' ex2.approx differs from it by ~2 ulp a term, not in the way the sum
# rounds), then the warp's butterfly reduction. Three ways to add: every term straight into the lane's sum (the
# kernels before session l), each vector's terms summed first and then one plain add, and that with a Kahan add
# (the kernels now). Prints the relative error of a peak's probability 1 / S against the fp64 sum.
# Rows: 1.0 everywhere, 3.0 at every (V / 40)-th element from 7 (the GPU test's row 3).
import numpy as np

f32 = np.float32


def lane_sums(terms, W, mode):
    nvec = len(terms) // W
    v = terms[: nvec * W].reshape(nvec, W)
    pad = (-nvec) % 32
    v = np.vstack([v, np.zeros((pad, W), dtype=f32)]).reshape(-1, 32, W)  # step, lane, element
    s = np.zeros(32, dtype=f32)
    k = np.zeros(32, dtype=f32)
    for step in v:
        if mode == "plain":
            for e in range(W):
                s = (s + step[:, e]).astype(f32)
        else:
            vs = np.zeros(32, dtype=f32)
            for e in range(W):
                vs = (vs + step[:, e]).astype(f32)
            if mode == "vector":
                s = (s + vs).astype(f32)
            else:
                y = (vs - k).astype(f32)
                t = (s + y).astype(f32)
                k = ((t - s).astype(f32) - y).astype(f32)
                s = t
    s = (s - k).astype(f32)
    o = 16
    while o:
        s = (s + s[np.arange(32) ^ o]).astype(f32)
        o //= 2
    return s[0]


def straight_sums(terms, n_acc):
    # n_acc accumulators (a warp's lanes or a block's threads), element i to accumulator i % n_acc, every term
    # straight in; then a pairwise tree across the accumulators (the warp's butterfly / the block's reduction)
    pad = (-len(terms)) % n_acc
    t = np.concatenate([terms, np.zeros(pad, dtype=f32)]).reshape(-1, n_acc)
    s = np.zeros(n_acc, dtype=f32)
    for row in t:
        s = (s + row).astype(f32)
    while len(s) > 1:
        s = (s[: len(s) // 2] + s[len(s) // 2:]).astype(f32)
    return s[0]


for V in (50256, 151936, 262144):
    x = np.ones(V, dtype=np.float64)
    x[7 :: V // 40] = 3.0
    terms = np.exp(x - 3.0).astype(f32)
    exact = np.sum(np.exp(x - 3.0))
    for W, ty in ((8, "16-bit"), (4, "fp32")):
        errs = []
        for mode in ("plain", "vector", "kahan"):
            S = lane_sums(terms, W, mode)
            errs.append(abs((1.0 / float(S)) - 1.0 / exact) / (1.0 / exact))
        print(f"V {V:6d} {ty:6s}: terms straight in {errs[0]:.2e}, vector sums + plain add {errs[1]:.2e}, "
              f"+ Kahan {errs[2]:.2e}")

# The suite's plateau rows (softmax_topk_adversarial: 3.0 at every (V / 40)-th element from 7, 1.0 elsewhere) for
# layouts that add every term straight in: a warp per row (fused_warp, seed_warp: 32 sums) and a block of 256
# threads per row (naive's softmax kernel, seed_block: 256 sums). A prediction for the first GPU run of those rows.
print("suite plateau rows, every term straight in:")
for V in (50257, 151936):
    x = np.ones(V, dtype=np.float64)
    x[7 :: max(V // 40, 1)] = 3.0
    terms = np.exp(x - 3.0).astype(f32)
    exact = np.sum(np.exp(x - 3.0))
    out = []
    for n_acc, who in ((32, "warp a row"), (256, "256 threads a row")):
        S = straight_sums(terms, n_acc)
        out.append(f"{who} {abs(exact / float(S) - 1.0):.2e}")
    print(f"V {V:6d}: " + ", ".join(out))
