import csv, gzip, re, sys, collections
d = sys.argv[1]; tag = sys.argv[2]; src_path = sys.argv[3]
src = open(src_path).read().splitlines()
# function ranges [start, end] (1-based) of the source that was compiled
names = ['warp_radix_select', 'compact', 'relaxed_limit', 'big_limit', 'append_one', 'rescale_to', 'elem_at', 'load_or_neg_inf',
         'vec_max', 'append_elems', 'insert_round', 'drain_list', 'consume_stats', 'consume_vec', 'park_vec', 'consume_batch_wide',
         'vote_vec', 'seed_threshold', 'split_row', 'scalar_range', 'row_stats', 'key_range', 'finish_by_bins', 'finish_wide',
         'finish_big_row', 'sample_by_maxima', 'big_pass', 'big_pass_in_order', 'softmax_topk_stream_wide_kernel', 'cthr_of', 'beats']
rng = {}
for n in names:
    for i, l in enumerate(src):
        if re.search(r'\b' + n + r'\(', l) and ('__device__' in l or '__global__' in l or (i > 0 and ('__device__' in src[i-1] or '__launch_bounds__' in src[i-1]))) and not l.strip().startswith('//'):
            if n in rng: continue
            j = i
            while j < len(src) and src[j] != '}' : j += 1
            rng[n] = (i + 1, j + 1)
            break
outer_names = ['sample_by_maxima', 'big_pass', 'finish_wide', 'finish_big_row', 'big_pass_in_order', 'softmax_topk_stream_wide_kernel', 'key_range']
def fn_of(ln):
    best = None
    for n, (a, b) in rng.items():
        if a <= ln <= b and (best is None or b - a < rng[best][1] - rng[best][0]): best = n
    return best
dis = gzip.open(d + '/dis_bf16.txt.gz', 'rt').read().splitlines()
fname = None; line = None; lines = []
for l in dis:
    m = re.search(r'//## File "([^"]+)", line (\d+)', l)
    if m: fname = m.group(1).split('/')[-1]; line = int(m.group(2)); continue
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s*(.*)', l)
    if m: lines.append((fname, line, m.group(2)))
rows = list(csv.reader(gzip.open(d + '/ncu_' + tag + '_sass.csv.gz', 'rt')))
hdr = rows[1]; data = rows[2:]
assert len(data) == len(lines), (len(data), len(lines))
ia = hdr.index('Warp Stall Sampling (All Samples)'); ii = hdr.index('Instructions Executed')
reasons = [h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
ri = [hdr.index(h) for h in reasons]
ins = []
for r, (f, ln, txt) in zip(data, lines):
    fn = fn_of(ln) if f == 'fused_stream.cu' and ln else None
    ins.append(dict(f=f, ln=ln, fn=fn, s=float(r[ia] or 0), i=float(r[ii] or 0), st=[float(r[k] or 0) for k in ri], txt=r[1].strip()))
n = len(ins)
def outer_at(k):
    fn = ins[k]['fn']
    return fn if fn in outer_names else None
prev = [None] * n; cur = None
for k in range(n):
    o = outer_at(k); cur = o or cur; prev[k] = cur
nxt = [None] * n; cur = None
for k in range(n - 1, -1, -1):
    o = outer_at(k); cur = o or cur; nxt[k] = cur
for k in range(n):
    o = outer_at(k)
    ins[k]['outer'] = o or (prev[k] if prev[k] == nxt[k] else (prev[k] or nxt[k]))
    ins[k]['helper'] = ins[k]['fn'] if ins[k]['fn'] and ins[k]['fn'] not in outer_names else ('other:' + str(ins[k]['f']) if ins[k]['f'] != 'fused_stream.cu' else 'own lines')
tot = sum(x['s'] for x in ins); ti = sum(x['i'] for x in ins)
totst = [sum(x['st'][j] for x in ins) for j in range(len(reasons))]
print(f"{tag}: samples {tot:.0f}, instructions executed {ti:.0f}")
print("stall reasons (share of all samples): " + ", ".join(f"{reasons[j][6:]} {100*totst[j]/tot:.1f}%" for j in sorted(range(len(reasons)), key=lambda j: -totst[j]) if totst[j] / tot > 0.005))
agg = collections.defaultdict(lambda: [0.0, 0.0, [0.0] * len(reasons)])
agg2 = collections.defaultdict(lambda: [0.0, 0.0])
for x in ins:
    a = agg[x['outer']]; a[0] += x['s']; a[1] += x['i']
    for j in range(len(reasons)): a[2][j] += x['st'][j]
    b = agg2[(x['outer'], x['helper'])]; b[0] += x['s']; b[1] += x['i']
print("\n| part | stall samples | instructions | top stalls |\n|---|---|---|---|")
for o, (s, i, st) in sorted(agg.items(), key=lambda kv: -kv[1][0]):
    top = ", ".join(f"{reasons[j][6:]} {100*st[j]/s:.0f}%" for j in sorted(range(len(reasons)), key=lambda j: -st[j])[:3]) if s else ''
    print(f"| {o} | {100*s/tot:.1f}% | {100*i/ti:.1f}% | {top} |")
print("\n| part / helper | stall samples | instructions |\n|---|---|---|")
for (o, h), (s, i) in sorted(agg2.items(), key=lambda kv: -kv[1][0])[:30]:
    print(f"| {o} / {h} | {100*s/tot:.1f}% | {100*i/ti:.1f}% |")
print()
per = collections.defaultdict(lambda: [0.0, 0.0, [0.0] * len(reasons)])
for x in ins:
    p = per[(x['outer'], x['f'], x['ln'])]; p[0] += x['s']; p[1] += x['i']
    for j in range(len(reasons)): p[2][j] += x['st'][j]
print("top source lines (outer, file:line, samples, instructions, top stalls, text)")
for (o, f, ln), (s, i, st) in sorted(per.items(), key=lambda kv: -kv[1][0])[:45]:
    t = src[ln - 1].strip()[:90] if f == 'fused_stream.cu' and ln else ''
    top = ", ".join(f"{reasons[j][6:]} {100*st[j]/s:.0f}%" for j in sorted(range(len(reasons)), key=lambda j: -st[j])[:2]) if s else ''
    print(f"{100*s/tot:5.2f}% smp {100*i/ti:5.2f}% ins {o}: {f}:{ln} [{top}] {t}")
