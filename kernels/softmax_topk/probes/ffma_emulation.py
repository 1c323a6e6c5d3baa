#!/usr/bin/env python3
# CPU emulation (float32 rounding in pure Python) of FUSEBENCH_STREAM_FFMA's arithmetic in fused_stream.cu:
# one FFMA a term against bl = m log2e rounded up, rescales by exp2(min(bl_old - bl_new, 0)), each lane's sum
# converted at the row end by exp2(fma(-M, log2e, bl)), the exact pass for 2^20 < |M| < inf. Prints, per kind
# of row (32 lanes of 256 elements), the worst relative error of S against a double-precision sum and how
# many rows took the exact pass. ex2.approx is modelled as exact exp2 rounded to float32.
#   python3 kernels/softmax_topk/probes/ffma_emulation.py      (under a second)
import struct, math, random
def f32(x):
    try: return struct.unpack('f', struct.pack('f', x))[0]
    except OverflowError: return math.copysign(math.inf, x)
L = f32(1.4426950408889634)
def ex2(t):
    if t != t: return math.nan
    if t > 128: return math.inf
    if t < -150: return 0.0
    return f32(2.0 ** t)
def fma(a, b, c):
    if any(map(math.isinf, (a, b, c))) or any(v != v for v in (a, b, c)):
        try: return f32(a * b + c)
        except Exception: return math.nan
    return f32(a * b + c)
def f32_next_up(f):
    if math.isinf(f): return f
    b = struct.unpack('I', struct.pack('f', f))[0]
    if f == 0: return struct.unpack('f', struct.pack('I', 1))[0]
    b = b + 1 if f > 0 else b - 1
    return struct.unpack('f', struct.pack('I', b))[0]
def fmul_ru(a, b):
    p = a * b
    if math.isinf(p) or p != p: return p
    if abs(p) > 3.4028234663852886e38:
        return math.inf if p > 0 else -3.4028234663852886e38
    f = f32(p)
    if f < p: f = f32_next_up(f)
    return f
def fmax(a, b):  # fmaxf: NaN loses
    if a != a: return b
    if b != b: return a
    return max(a, b)
def lane_fast(xs):
    m, s, bl = -math.inf, 0.0, 0.0
    for i in range(0, len(xs), 8):
        v = xs[i:i+8]; vm = -math.inf
        for x in v: vm = fmax(vm, x)
        if vm > m:
            b1 = fmul_ru(vm, L) if not math.isinf(vm) else vm
            fac = ex2(f32(min(f32(bl - b1), 0.0)) if not (math.isinf(bl) and math.isinf(b1)) else math.nan)
            s = f32(s * fac) if not (s == 0 and math.isinf(fac)) else math.nan
            m, bl = vm, b1
        for x in v: s = f32(s + ex2(fma(x, L, -bl)))
    return m, s, bl
def row_fast(lanes):
    st = [lane_fast(xs) for xs in lanes]
    M = -math.inf
    for m, _, _ in st: M = fmax(M, m)
    S = 0.0
    for m, s, bl in st:
        c = 0.0 if s == 0 else f32(s * ex2(fma(-M, L, bl)))
        S = f32(S + c)
    exact = False
    if abs(M) > 2.0**20 and not math.isinf(M):
        exact = True
        S = 0.0
        for xs in lanes:
            sl = 0.0
            for x in xs: sl = f32(sl + ex2(f32(f32(x - M) * L)))
            S = f32(S + sl)
    return M, S, exact
def row_ref(xs):
    M = max(xs)
    return M, sum(math.exp(x - M) for x in xs)
def bf16(x):
    b = struct.unpack('I', struct.pack('f', f32(x)))[0]
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return struct.unpack('f', struct.pack('I', b & 0xFFFFFFFF))[0]
random.seed(5)
def check(name, rows):
    worst = 0; ex = 0
    for xs in rows:
        lanes = [xs[l*256:(l+1)*256] for l in range(32)]
        M, S, e = row_fast(lanes); ex += e
        Mr, Sr = row_ref(xs)
        rel = abs(S - Sr) / Sr
        worst = max(worst, rel)
    print(f"{name:28s} worst rel err of S {worst:.2e}, exact pass on {ex}/{len(rows)} rows")
N = 32 * 256
check("N(0,10) bf16", [[bf16(random.gauss(0, 10)) for _ in range(N)] for _ in range(6)])
check("N(0,1)", [[f32(random.gauss(0, 1)) for _ in range(N)] for _ in range(4)])
check("N(3000,10)", [[bf16(3000 + random.gauss(0, 10)) for _ in range(N)] for _ in range(3)])
check("N(-5e5,10) fp32", [[f32(-5e5 + random.gauss(0, 10)) for _ in range(N)] for _ in range(3)])
check("N(9e5,1) fp32", [[f32(9e5 + random.gauss(0, 1)) for _ in range(N)] for _ in range(3)])
check("huge +-1e30", [[f32((1e30 if random.random() < .5 else -1e30) * (1 + .5 * math.tanh(random.gauss(0,1)))) for _ in range(N)] for _ in range(3)])
check("-1e30 prefix then N(0,3)", [[-1e30] * 4096 + [f32(random.gauss(0, 3)) for _ in range(N - 4096)] for _ in range(3)])
check("1e7 rows", [[f32(1e7 + random.gauss(0, 5)) for _ in range(N)] for _ in range(2)])
check("2.5e38 max", [[f32(random.gauss(0, 3)) for _ in range(N - 1)] + [2.5e38] for _ in range(2)])
check("30% -inf", [[(-math.inf if random.random() < .3 else f32(3 * random.gauss(0, 1))) for _ in range(N)] for _ in range(3)])
check("lanes at -2e6, row max 0", [[f32(-2e6 + random.gauss(0,1)) if (j // 256) % 2 else f32(random.gauss(0, 1)) for j in range(N)] for _ in range(2)])
check("finfo.min prefix then N(0,3)", [[-3.4028234663852886e38] * 4096 + [f32(random.gauss(0, 3)) for _ in range(N - 4096)] for _ in range(3)])
check("lanes at -1e10, row max 0", [[f32(-1e10) if (j // 256) % 2 else f32(random.gauss(0, 1)) for j in range(N)] for _ in range(2)])
check("+-1e30 with 5 ties at the max", [[f32(-1e30 * (1 + .5 * math.tanh(random.gauss(0,1)))) for _ in range(N - 5)] + [1.6e30] * 5 for _ in range(2)])
check("all -1e30 (all masked)", [[-1e30] * N for _ in range(1)])
check("all finfo.min", [[-3.4028234663852886e38] * N for _ in range(1)])
check("-1e30 with 2^30 + 64 j", [[-1e30] * (N - 64) + [f32(2.0**30 + 64 * j) for j in range(64)] for _ in range(2)])
check("2^29 .. 2^31 mixed", [[f32(2.0**29 * (1 + 3 * random.random())) for _ in range(N)] for _ in range(2)])
check("all equal 5.0", [[5.0] * N for _ in range(1)])
# rows with a NaN / +inf: S must come out NaN (no finite softmax) without the exact pass
for name, bad in (("one NaN", math.nan), ("one +inf", math.inf)):
    xs = [f32(random.gauss(0, 3)) for _ in range(N)]; xs[1234] = bad
    M, S, e = row_fast([xs[l*256:(l+1)*256] for l in range(32)])
    print(f"{name:28s} M {M} S {S} exact pass {e}")
