#!/usr/bin/env python3
"""Diagnostic (not part of the build; pure Python, no numpy): CPU emulation of the selection
bookkeeping of fused_stream's K > 32 big kernel on one bf16 row of N(0, sd^2) logits, per row:
composites inserted (and by the sample's end), vectors drained, insert rounds, compactions, radix
passes. It follows big_pass with a parked sample (or in order, P = 1) at U = 3 (16-bit K <= 256):
steps of 32 vectors of 8 elements, phase phi = steps phi, phi + P, ..., batches of U steps, a vector
parked when its max is at or above cthr's value, the list (L = 32 U + 32) drained in full rounds of
32 from its end when a batch might not fit, insert_round's CountRoom compaction (big_limit), the
radix select's stop rule (8-bit digits below the common bits of cthr and the running maximum), the
sample's end (top r, r / 2 more), then K. Not emulated: the scalar head / tail and the last partial
step (the row is 196 full steps), finish_big_row. `--seed` emulates a seeded start: the first batch's
exact Kc-th largest composite (Kc = r in a sampled pass, K in order) as cthr before anything is parked
(safe: the batch is part of the sample / row).
  python3 kernels/softmax_topk/probes/big_emulation.py K P [rows] [--seed]
Compare with probes/stream_big_timeline.cu's counters (bf16 4096 x 50257, std 10)."""
import random, struct, sys

def bf16(x):
    b = struct.unpack('<I', struct.pack('<f', x))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    return struct.unpack('<f', struct.pack('<I', b))[0]

def fkey(x):
    b = struct.unpack('<I', struct.pack('<f', x))[0]
    return b | 0x80000000 if b < 0x80000000 else (~b) & 0xFFFFFFFF

def comp(x, i):
    return (fkey(x) << 32) | ((~i) & 0xFFFFFFFF)

def run_row(vals, K, P, r, seed, U=3, W=8, cap=480):
    L = 32 * U + 32
    nfull = len(vals) // (32 * W)
    st = dict(ins=0, ins_sample=0, drained=0, rounds=0, comp=0, radix=0)
    keys = []
    cthr = (0x007FFFFF << 32) | 0xFFFFFFFF  # cthr_start: the largest composite of -inf
    lane_max = [-float('inf')]
    lst = []  # parked vectors: (first index)

    def big_limit(Kc, room):
        return max(Kc, min(Kc + min((cap - Kc) // 4, Kc // 2), cap - room))

    def compact(Kc, limit):
        nonlocal keys, cthr
        st['comp'] += 1
        lo = cthr >> 32
        hi = fkey(lane_max[0])
        x = lo ^ hi
        common = 32 if x == 0 else 32 - x.bit_length()
        mask = 0 if common == 0 else ((~0) << (64 - common)) & 0xFFFFFFFFFFFFFFFF
        prefix = (lo << 32) & mask
        shift = 56 - common
        need = Kc
        while True:
            st['radix'] += 1
            h = [0] * 256
            for c in keys:
                if (c & mask) == prefix: h[(c >> shift) & 255] += 1
            above = 0
            for d in range(255, -1, -1):
                if above + h[d] >= need: break
                above += h[d]
            in_bin = h[d]
            need -= above
            prefix |= d << shift
            mask |= 0xFF << shift
            if Kc - need + in_bin <= limit or shift == 0: break
            shift = shift - 8 if shift > 8 else 0
        T = prefix
        keys = [c for c in keys if c >= T]
        cthr = min(keys)

    def insert_round(batch_vecs, Kc):
        nonlocal keys
        st['rounds'] += 1
        while True:
            cand = [comp(vals[i + e], i + e) for i in batch_vecs for e in range(W) if comp(vals[i + e], i + e) > cthr]
            if len(keys) + len(cand) <= cap: break
            compact(Kc, big_limit(Kc, len(cand)))
        keys += cand
        st['ins'] += len(cand)

    def drain(Kc, whole):
        nonlocal lst
        first = 0 if whole else len(lst) % 32
        for b in range(first, len(lst), 32):
            insert_round(lst[b:b + 32], Kc)
        st['drained'] += len(lst) - first
        lst = lst[:first]

    def vote(i):
        vm = max(vals[i:i + W])
        lane_max[0] = max(lane_max[0], vm)
        if fkey(vm) >= (cthr >> 32) and vm > -float('inf'): lst.append(i)

    Kc = r if P > 1 else K
    seeded = not seed
    for phi in range(P):
        steps = list(range(phi, nfull, P))
        for b0 in range(0, len(steps), U):
            batch = steps[b0:b0 + U]
            if not seeded:
                el = sorted((comp(vals[s * 256 + j], s * 256 + j) for s in batch for j in range(256)), reverse=True)
                cthr = el[Kc - 1] - 1  # the Kc-th largest composite beats it
                seeded = True
            for s in batch:
                for l in range(32):
                    vote(s * 256 + l * W)
            if len(lst) + 32 * U > L: drain(Kc, False)
        if P > 1 and phi == 0:
            drain(Kc, True)
            if len(keys) > Kc: compact(Kc, Kc + Kc // 2)
            st['ins_sample'] = st['ins']
            st['comp_sample'] = st['comp']
            Kc = K
    drain(Kc, True)
    st['keys_end'] = len(keys)
    # exactness check: the row's top K are all kept
    top = sorted((comp(v, i) for i, v in enumerate(vals)), reverse=True)[:K]
    ks = set(keys)
    st['exact'] = all(c in ks for c in top)
    return st

def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    K, P = int(args[0]), int(args[1])
    rows = int(args[2]) if len(args) > 2 else 8
    seed = '--seed' in sys.argv
    rnd = random.Random(7)
    acc = {}
    for _ in range(rows):
        vals = [bf16(rnd.gauss(0.0, 10.0)) for _ in range(196 * 256)]
        st = run_row(vals, K, P, 64, seed)
        for k, v in st.items(): acc[k] = acc.get(k, 0) + v
    print(f"K {K} P {P} {'seeded' if seed else 'library'} ({rows} rows): " +
          ", ".join(f"{k} {v / rows:.1f}" for k, v in acc.items() if k != 'exact') + f", exact {acc['exact']}/{rows}")

main()
