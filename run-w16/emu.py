# CPU emulation of finish_wide's binning (fused_stream.cu) on 16-bit rows: value-key bins (main) against
# bins over a 32-bit projection of the composite (value bits, then index bits). Counts the rank loop's
# warp steps (Fast: 4 keys a step; a warp iteration takes its slowest lane) and checks that the projected
# bin map is monotone in composite order.
import numpy as np, sys
rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
def fkey(x32):  # float32 array -> order key (uint32)
    b = (x32 + np.float32(0)).view(np.uint32).astype(np.uint64)
    return np.where(b & 0x80000000, (~b) & 0xFFFFFFFF, b | 0x80000000).astype(np.uint64)
def emulate(dt, V=50257, K=1024, nkeys=1334, nbins=768, HS=16, rows=8):
    res = {'old': [0, 0, 0], 'new': [0, 0, 0]}
    for _ in range(rows):
        x = (rng.standard_normal(V) * 10).astype(np.float32)
        if dt == 'bf16':
            xb = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) & 0xFFFF0000  # round to nearest even
            x = xb.astype(np.uint32).view(np.float32)
        else:
            x = x.astype(np.float16).astype(np.float32)
        idx = np.arange(V, dtype=np.uint64)
        comp = (fkey(x) << np.uint64(32)) | ((~idx) & np.uint64(0xFFFFFFFF))
        order = np.argsort(comp)[::-1]
        keys = comp[order[:nkeys]]                      # the buffer at the row's end: its top nkeys
        M = x.max()
        lo = keys.min(); hi = (fkey(np.array([M], np.float32))[0] << np.uint64(32)) | np.uint64(0xFFFFFFFF)
        L = int(V - 1).bit_length(); s = max(0, L - HS)
        low = np.uint64((1 << HS) - 1)
        def proj(c, new):
            h = c >> np.uint64(32)
            if not new: return h
            return (h & ~low & np.uint64(0xFFFFFFFF)) | ((c & np.uint64(0xFFFFFFFF)) >> np.uint64(s) & low)
        for name, new in (('old', False), ('new', True)):
            p = proj(keys, new); plo = proj(np.array([lo], np.uint64), new)[0]; phi = proj(np.array([hi], np.uint64), new)[0]
            mul = min((nbins << 32) // int(phi - plo + 1), 0xFFFFFFFF)
            b = ((p - plo).astype(np.uint64) * np.uint64(mul)) >> np.uint64(32)
            assert b.max() < nbins
            assert np.all(np.diff(b.astype(np.int64)) <= 0), "bins not monotone in composite order"  # keys sorted descending
            cnt = np.bincount(b.astype(np.int64), minlength=nbins)
            # bins from the largest; the K-th key's bin and those above
            kb = b[K - 1]; above = keys[b > kb]
            na = len(above); size = cnt[b[b > kb].astype(np.int64)]
            steps = 0
            for t0 in range(0, na, 32):
                steps += int(np.max((size[t0:t0 + 32] + 3) // 4))
            res[name][0] += steps; res[name][1] += int(cnt.max()); res[name][2] += int(cnt[kb])
    for name in res:
        st, mx, kin = res[name]
        print(f"{dt} {name}: rank-loop warp steps a row {st / rows:.0f}, largest bin {mx / rows:.1f}, K-th key's bin {kin / rows:.1f}")
emulate('bf16', HS=16)
emulate('fp16', HS=13)
emulate('bf16', K=512, nkeys=700, HS=16)
