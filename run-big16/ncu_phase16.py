#!/usr/bin/env python3
"""Per-phase attribution of ncu's SASS samples for fused_stream's kernels (big16 call 1).
usage: ncu_phase16.py dis.txt KERNEL_SECTION_REGEX ncu.sass.csv.gz fused_stream.cu [detail_phase]
dis.txt: `nvdisasm -gi -c` of the probe's cubin (one '//## File ..., line N [inlined at ..., line M]' per
run of instructions; noinline callees sit inside the kernel's section). Each instruction goes to the
function that holds its innermost fused_stream.cu line (helpers of other files: to the function
holding the line they are inlined at), and the function to a phase."""
import csv, gzip, re, sys, collections
dis_path, sec_re, csv_path, src_path = sys.argv[1:5]
want = sys.argv[5] if len(sys.argv) > 5 else None
src = open(src_path).read().splitlines()
# function starts in fused_stream.cu: a line at column 0 opening a definition, name = identifier before '('
starts = []
for i, l in enumerate(src, 1):
    m = re.match(r'^(?:template <[^>]*> )?(?:__device__|__global__|    softmax_topk_stream_\w+\(|int |void )', l)
    if not m: continue
    n = re.search(r'(\w+)\s*\(', l)
    if l.startswith('__global__'): n = re.search(r'(\w+)\s*\(', src[i])  # name on the next line
    if n: starts.append((i, n.group(1)))
starts.sort()
def func_of(line):
    name = None
    for s, n in starts:
        if s <= line: name = n
        else: break
    return name
PH = {
 'sample_by_maxima': 'sample (maxima)',
 'compact': 'compaction/radix', 'warp_radix_select': 'compaction/radix',
 'insert_round': 'drain/insert', 'drain_list': 'drain/insert',
 'consume_vec': 'vote (park)', 'vote_vec': 'vote (park)', 'park_vec': 'vote (park)',
 'consume_stats': 'stream stats', 'vec_max': 'stream stats', 'rescale_to': 'stream stats', 'elem_at': 'stream stats',
 'load_or_neg_inf': 'loads', 'beats': 'drain/insert', 'cthr_of': 'misc',
 'finish_big_row': 'row end', 'finish_by_bins': 'row end', 'key_range': 'row end', 'row_stats': 'row end',
 'finish_wide': 'row end',
 'scalar_range': 'scalar head/tail', 'append_one': 'scalar head/tail', 'split_row': 'kernel setup',
 'big_pass_in_order': 'in order', 'big_pass': 'big_pass own lines',
 'softmax_topk_stream_big_kernel': 'kernel setup', 'softmax_topk_stream_kernel': 'small kernel own lines',
 'consume_batch_refill': 'small: batch', 'seed_threshold': 'small: seed', 'append_elems': 'small: append',
 'finish_small_row': 'row end', 'relaxed_limit': 'compaction/radix', 'big_limit': 'compaction/radix',
}
# disassembly of the kernel's section: offset -> (innermost file, line, inlined-at file, line)
lines = open(dis_path).read().splitlines()
keep = False; chain = []; pending = False; cur = None; off2 = {}
for l in lines:
    if re.match(r'\s*\.section\s+\.text\.', l):
        keep = re.search(sec_re, l) is not None; continue
    if not keep: continue
    m = re.search(r'//## File "([^"]+)", line (\d+)', l)
    if m:
        if not pending: chain = []; pending = True
        chain.append((m.group(1).split('/')[-1], int(m.group(2)))); continue
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/', l)
    if m:
        if pending: cur = tuple(chain); pending = False
        off2[int(m.group(1), 16)] = cur
rows = list(csv.reader(gzip.open(csv_path, 'rt')))
hi = next(i for i, r in enumerate(rows) if r and r[0] == 'Address')
hdr = rows[hi]; data = [r for r in rows[hi + 1:] if r and r[0].startswith('0x')]
ia = hdr.index('Warp Stall Sampling (All Samples)'); ii = hdr.index('Instructions Executed')
stall_cols = [(k, h) for k, h in enumerate(hdr) if h.startswith('stall_') and '(Not Issued)' not in h]
base = int(data[0][0], 16)
OUTER = ('sample_by_maxima', 'finish_big_row', 'big_pass_in_order', 'scalar_range')
SIG = ('compact', 'warp_radix_select', 'insert_round', 'drain_list', 'consume_stats', 'vec_max', 'rescale_to',
       'consume_vec', 'park_vec', 'vote_vec', 'append_elems', 'seed_threshold', 'consume_batch_refill',
       'finish_small_row', 'row_stats', 'split_row')
# sample_by_maxima: its stream (loads, terms, group maxima) up to the line of `if (gc > 0)`, then its end
SAMPLE_END = next(i for i, l in enumerate(src, 1) if 'if (gc > 0) {' in l)
def phase_of(info):
    if not info: return 'unknown', None
    fl = [(func_of(ln), ln) for f, ln in info if f == 'fused_stream.cu']  # innermost first
    fns = [f for f, _ in fl]
    for o in OUTER:
        if o in fns:
            inner = next((f for f in fns if f in ('compact', 'warp_radix_select')), None)
            ph = PH[o]
            if o == 'sample_by_maxima':
                ln = next(l for f, l in fl if f == o)
                ph += ': end' if ln >= SAMPLE_END else ': stream'
                if 'insert_round' in fns: ph += ' > insert'
            return (ph + (' > compaction' if inner else ''), o)
    for f in fns:
        if f in SIG: return PH.get(f, f), f
    for f in fns:
        if f in PH and PH[f] != 'misc': return PH[f], f
    return 'other:' + str(fns[0] if fns else info[0][0]), None
tot = collections.Counter(); ins = collections.Counter(); st = collections.defaultdict(collections.Counter)
per_line = collections.defaultdict(lambda: [0.0, 0.0, collections.Counter()])
T = TI = 0.0
for r in data:
    off = int(r[0], 16) - base
    info = off2.get(off)
    ph, fn = phase_of(info)
    s = float(r[ia] or 0); n = float(r[ii] or 0)
    T += s; TI += n
    tot[ph] += s; ins[ph] += n
    for k, h in stall_cols:
        v = float(r[k] or 0)
        if v: st[ph][h[6:]] += v
    if want and ph == want:
        key = (info[0][0], info[0][1], info[1][1] if len(info) > 1 else 0) if info else None
        per_line[key][0] += s; per_line[key][1] += n
        for k, h in stall_cols:
            v = float(r[k] or 0)
            if v: per_line[key][2][h[6:]] += v
print(f"samples {T:.0f}  instructions executed {TI:.0f}  ({len(data)} SASS rows, {sum(1 for r in data if (int(r[0],16)-base) in off2)} mapped)")
print(f"{'phase':22s} {'samples':>8s} {'instr':>7s}  top stalls")
for ph, s in sorted(tot.items(), key=lambda kv: -kv[1]):
    top = ', '.join(f"{k} {100*v/s:.0f}%" for k, v in st[ph].most_common(4)) if s else ''
    print(f"{ph:22s} {100*s/T:7.1f}% {100*ins[ph]/TI:6.1f}%  {top}")
if want:
    print(f"\n{want}: by innermost line (line, inlined-at line)")
    for key, (s, n, c) in sorted(per_line.items(), key=lambda kv: -kv[1][0])[:25]:
        t = src[key[1] - 1].strip()[:70] if key and key[0] == 'fused_stream.cu' else ''
        top = ', '.join(f"{k} {100*v/s:.0f}%" for k, v in c.most_common(2)) if s else ''
        print(f"{100*s/T:6.2f}% smp {100*n/TI:6.2f}% ins {key} {t} | {top}")
