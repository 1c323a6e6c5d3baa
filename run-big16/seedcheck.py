# big16: CPU check of seed_first_batch's bisection (FUSEBENCH_BIG_SEED): over 300 random batches of 768 bf16 /
# fp16 values (sd 0.01 .. 1000, means 0 / -50 / 30, some with 100 -inf), Kc 33 / 64 / 256: at least Kc
# values are >= the bound, the bound is <= the Kc-th largest, and for bf16 it admits exactly the values >=
# the Kc-th largest. Prints "bad 0".
import random, struct
def f2b(x): return struct.unpack('<I', struct.pack('<f', x))[0]
def b2f(b): return struct.unpack('<f', struct.pack('<I', b & 0xFFFFFFFF))[0]
def fkey(x):
    b = f2b(x + 0.0)
    return (~b) & 0xFFFFFFFF if b & 0x80000000 else b | 0x80000000
def key_float(k): return b2f(k & 0x7FFFFFFF) if k & 0x80000000 else b2f(~k)
def bf16(x):
    b = f2b(x); b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000; return b2f(b)
def f16(x): return struct.unpack('<e', struct.pack('<e', x))[0]
def seed(vals, Kc):
    t = 0
    for b in range(15, -1, -1):
        c = t | (1 << b)
        fc = key_float((c << 16) & 0xFFFFFFFF)
        cnt = sum(1 for v in vals if v >= fc)  # NaN fc: comparisons false
        if cnt >= Kc: t = c
    ft = key_float((t << 16) & 0xFFFFFFFF)
    return t, ft
rnd = random.Random(3); bad = 0
for trial in range(300):
    conv = bf16 if trial % 2 == 0 else f16
    sd = rnd.choice([0.01, 1.0, 10.0, 1000.0]); mu = rnd.choice([0.0, -50.0, 30.0])
    vals = [conv(rnd.gauss(mu, sd)) for _ in range(768)]
    if trial % 7 == 0: vals[:100] = [float('-inf')] * 100
    Kc = rnd.choice([33, 64, 256])
    t, ft = seed(vals, Kc)
    if not (ft > float('-inf')): continue
    n_ge = sum(1 for v in vals if v >= ft)
    kth = sorted(vals, reverse=True)[Kc - 1]
    ok = n_ge >= Kc and ft <= kth
    exact = (n_ge == sum(1 for v in vals if v >= kth)) if conv is bf16 else True
    if not ok or not exact: bad += 1; print('BAD', trial, conv.__name__, Kc, ft, kth, n_ge)
print('bad', bad)
