import csv, gzip, re, sys, collections
d = sys.argv[1]
dis = gzip.open(d + '/dis.txt.gz', 'rt').read().splitlines()
line = None; fname = None; off2line = {}
for l in dis:
    m = re.search(r'//## File "([^"]+)", line (\d+)', l)
    if m: fname = m.group(1).split('/')[-1]; line = int(m.group(2)); continue
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/', l)
    if m: off2line[int(m.group(1), 16)] = (fname, line)
rows = list(csv.reader(gzip.open(d + '/ncu_sass.csv.gz', 'rt')))
hdr = rows[1]; data = rows[2:]
ia = hdr.index('Warp Stall Sampling (All Samples)'); ii = hdr.index('Instructions Executed')
base = int(data[0][0], 16)
ins = []
for r in data:
    off = int(r[0], 16) - base
    f, ln = off2line.get(off, (None, None))
    ins.append([off, f, ln, float(r[ia] or 0), float(r[ii] or 0), r[1].strip()])
def outer(f, ln):
    if f != 'fused_stream.cu' or ln is None: return None
    if 1100 <= ln <= 1253: return 'sample'
    if 1271 <= ln <= 1534: return 'bigpass'
    if 825 <= ln <= 949 or 684 <= ln <= 705: return 'finish_wide'
    if 965 <= ln <= 1005: return 'finish_big_row'
    if 1551 <= ln <= 1570: return 'in_order'
    if 1681 <= ln <= 1715: return 'kernel'
    return None
def helper(f, ln):
    if f != 'fused_stream.cu': return 'other:' + str(f)
    if ln in (348, 437, 455, 345, 346, 347): return 'first use of loads (vec_max)'
    if 320 <= ln <= 327 or 435 <= ln <= 470 or 496 <= ln <= 502: return 'stats/vote/park'
    if 386 <= ln <= 431: return 'drain/insert'
    if 193 <= ln <= 296: return 'compact/radix'
    return 'own lines'
n = len(ins)
prev = [None] * n; cur = None
for k in range(n):
    o = outer(ins[k][1], ins[k][2]); cur = o or cur; prev[k] = cur
nxt = [None] * n; cur = None
for k in range(n - 1, -1, -1):
    o = outer(ins[k][1], ins[k][2]); cur = o or cur; nxt[k] = cur
tot = sum(x[3] for x in ins); ti = sum(x[4] for x in ins)
agg = collections.defaultdict(lambda: [0.0, 0.0])
agg2 = collections.defaultdict(lambda: [0.0, 0.0])
for k, x in enumerate(ins):
    o = outer(x[1], x[2]) or (prev[k] if prev[k] == nxt[k] else (prev[k] or nxt[k]))
    h = helper(x[1], x[2])
    agg[o][0] += x[3]; agg[o][1] += x[4]
    agg2[(o, h)][0] += x[3]; agg2[(o, h)][1] += x[4]
print(f"samples {tot:.0f} instructions {ti:.0f}")
for o, (s, i) in sorted(agg.items(), key=lambda kv: -kv[1][0]):
    print(f"{str(o):16s} {100*s/tot:5.1f}% samples {100*i/ti:5.1f}% instr")
print()
for (o, h), (s, i) in sorted(agg2.items(), key=lambda kv: -kv[1][0])[:25]:
    print(f"{str(o):16s} {h:32s} {100*s/tot:5.1f}% samples {100*i/ti:5.1f}% instr")
print()
want = sys.argv[2] if len(sys.argv) > 2 else 'finish_wide'
per = collections.defaultdict(lambda: [0.0, 0.0])
for k, x in enumerate(ins):
    o = outer(x[1], x[2]) or (prev[k] if prev[k] == nxt[k] else (prev[k] or nxt[k]))
    if o == want: per[(x[1], x[2])][0] += x[3]; per[(x[1], x[2])][1] += x[4]
src = open('/work/main/scratch/wt-k1024c/kernels/softmax_topk/fused_stream.cu').read().splitlines()
for (f, ln), (s, i) in sorted(per.items(), key=lambda kv: -kv[1][0])[:30]:
    t = src[ln - 1].strip()[:80] if f == 'fused_stream.cu' and ln else ''
    print(f"{100*s/tot:5.2f}% smp {100*i/ti:5.2f}% ins {f}:{ln} {t}")
