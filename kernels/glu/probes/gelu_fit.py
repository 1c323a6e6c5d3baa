#!/usr/bin/env python3
"""The fit behind kernels/common/gelu.cuh's gelu_erf_16 and its fp32 emulation (mpmath only; ~3 min).

0.5 erfc(a) = exp(-a^2) t P(t), t = 1 / (1 + p a), a = |x| / sqrt 2: P of degree DEG fitted to the
relative error of 0.5 erfcx(a) / t on Chebyshev nodes of t over a in [0, 10] (weighted least squares,
Lawson reweighting toward minimax), coefficients rounded to fp32; then gelu evaluated as the kernel
does, every operation rounded to fp32, rcp and ex2 perturbed by +-1 and +-2 ulps, against mpmath.
Usage: gelu_fit.py [p] [degree]   (the library's: 0.5 6)
"""
import math
import random
import struct
import sys

import mpmath as mp

mp.mp.dps = 40
AMAX = 10.0


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def fma(a, b, c):  # the product of two fp32 values is exact in double: one rounding
    return f32(a * b + c)


def fit(p, deg, npts=400, iters=10):
    tmin = 1 / (1 + p * AMAX)
    ts = [(tmin + 1) / 2 + (1 - tmin) / 2 * math.cos(math.pi * (k + 0.5) / npts) for k in range(npts)]
    gs = [mp.exp(((1 / mp.mpf(t) - 1) / p) ** 2) * mp.erfc((1 / mp.mpf(t) - 1) / p) / t for t in ts]
    w = [1.0] * npts
    for _ in range(iters):
        A = mp.matrix(npts, deg + 1)
        b = mp.matrix(npts, 1)
        for i, t in enumerate(ts):
            s = mp.sqrt(w[i]) / gs[i]
            for j in range(deg + 1):
                A[i, j] = s * mp.mpf(t) ** j
            b[i] = mp.sqrt(w[i])
        coef = mp.qr_solve(A, b)[0]
        errs = [abs(sum(coef[j] * mp.mpf(t) ** j for j in range(deg + 1)) / gs[i] - 1) for i, t in enumerate(ts)]
        m = max(errs)
        w = [w[i] * float(errs[i] / m) for i in range(npts)]
        s = sum(w)
        w = [x / s * npts for x in w]
    return [float(c) for c in coef], float(m)


def main():
    p = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    deg = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    coef, m = fit(p, deg)
    c = [f32(0.5 * x) for x in coef]  # the 0.5 of 0.5 erfc folded in
    pk = f32(p * 0.7071067811865476)
    k = f32(math.sqrt(0.5 * math.log2(math.e)))
    print(f"fit: relative error {m:.3g}; p / sqrt 2 = {pk!r}, k = {k!r}")
    print("coefficients, constant term first (0.5 folded in):", ", ".join(repr(x) for x in c))

    def gelu(x, rcp_err=0.0, ex2_err=0.0):
        ax = abs(x)
        t = f32(1.0 / fma(ax, pk, 1.0) * (1 + rcp_err))
        q = c[deg]
        for j in range(deg - 1, -1, -1):
            q = fma(q, t, c[j])
        u = f32(ax * k)
        s = f32(-u * u)
        e = f32(2.0**s * (1 + ex2_err)) if s > -126 else 0.0
        h = f32(f32(q * t) * e)
        return f32(x * (h if x < 0 else f32(1.0 - h)))

    random.seed(1)
    xs = [f32(random.gauss(0, s)) for s in (0.5, 1, 2, 4) for _ in range(3000)]
    xs += [f32(-i * 0.01) for i in range(1400)] + [f32(i * 0.01) for i in range(600)]
    worst, at, core = 0.0, None, 0.0
    for x in xs:
        r = float(mp.mpf(x) * mp.erfc(-mp.mpf(x) / mp.sqrt(2)) / 2)
        if r == 0 or abs(r) < 1e-36:
            continue
        for re in (0.0, 1.2e-7, -1.2e-7):
            for ee in (0.0, 2.4e-7, -2.4e-7):
                err = abs(gelu(x, re, ee) - r) / abs(r)
                if err > worst:
                    worst, at = err, x
                if abs(x) <= 5:
                    core = max(core, err)
    print(f"emulated gelu over {len(xs)} inputs: max relative error {worst:.3g} (at x = {at}), {core:.3g} for |x| <= 5")


if __name__ == "__main__":
    main()
