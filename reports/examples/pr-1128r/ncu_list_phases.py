#!/usr/bin/env python3
"""Per-phase attribution of ncu's SASS samples for fused_bound's list kernel (softmax_topk_bound_list_kernel).

usage: ncu_list_phases.py dis.txt SECTION_REGEX ncu.sass.csv.gz fused_bound.cu [top_lines]

dis.txt: `nvdisasm -gi -c` of the probe's cubin: before each run of instructions one or more
'//## File "...", line N' lines, innermost first (a helper's line, then the lines it is inlined at).
Each instruction goes to the innermost line of the chain that lies in the kernel's body (between its
`__global__` line and `launch_bound_list`), except lines of lambdas called from several places
(vec_keys), which go to the next kernel line out (the call site). A kernel line goes to a phase by the
kernel's numbered comments (// 1. .. // 7.) and its lambdas (compact_list: the stream's compactions;
sort_and_write: the sort and the writes). Prints per phase: instructions executed (warp level), warp
stall samples, their largest stall reasons; then the kernel lines with the most samples.
"""
import collections
import csv
import gzip
import re
import sys


def kernel_layout(src):
    """(first, last) kernel lines, lambda ranges {name: (a, b)}, numbered markers {n: line}."""
    first = next(i for i, l in enumerate(src, 1)
                 if l.startswith('__global__') and 'softmax_topk_bound_list_kernel' in src[i])
    last = next(i for i, l in enumerate(src, 1) if 'void launch_bound_list(' in l) - 1
    lambdas = {}
    for i in range(first, last + 1):
        m = re.match(r'^(\s*)const auto (\w+) = \[&\]', src[i - 1])
        if not m:
            continue
        ind = m.group(1)
        end = next(j for j in range(i, last + 1) if src[j - 1].startswith(ind + '};'))
        lambdas[m.group(2)] = (i, end)
    marks = {}
    for i in range(first, last + 1):
        m = re.match(r'^\s*// ([1-7])\. ', src[i - 1])
        if m:
            marks[int(m.group(1))] = i
    if sorted(marks) != list(range(1, 8)):
        raise SystemExit(f'kernel markers // 1. .. // 7. not all found: {sorted(marks)}')
    return first, last, lambdas, marks


PHASE_OF_MARK = {1: 'stream', 2: 'max+sum', 3: 'end compaction', 4: 'read K vectors', 5: 'kth', 6: 'emit',
                 7: 'sort+write'}
TRANSPARENT = ('vec_keys',)  # called from phases 5 and 6: the call site decides


def make_phase_of(src):
    first, last, lambdas, marks = kernel_layout(src)

    def lam(line):
        for name, (a, b) in lambdas.items():
            if a <= line <= b:
                return name
        return None

    def of_line(line):
        name = lam(line)
        if name == 'compact_list':
            return 'compactions in the stream'
        if name in ('step', 'before_batch'):
            return 'stream'
        if name == 'sort_and_write':
            return 'sort+write'
        if line < marks[1]:
            return 'row setup'
        n = max(k for k, v in marks.items() if v <= line)
        return PHASE_OF_MARK[n]

    def phase_of(chain, fname):
        """chain: ((file, line), ...) innermost first."""
        lines = [ln for f, ln in chain if f == fname and first <= ln <= last]
        if not lines:
            return 'outside the kernel body', None
        k = 0
        while k + 1 < len(lines) and lam(lines[k]) in TRANSPARENT:
            k += 1
        return of_line(lines[k]), lines[k]

    return phase_of


def read_dis(path, sec_re):
    keep, chain, pending, cur, off2 = False, [], False, None, {}
    for l in open(path).read().splitlines():
        if re.match(r'\s*\.section\s+\.text\.', l):
            keep = re.search(sec_re, l) is not None
            continue
        if not keep:
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', l)
        if m:
            if not pending:
                chain, pending = [], True
            chain.append((m.group(1).split('/')[-1], int(m.group(2))))
            continue
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/', l)
        if m:
            if pending:
                cur, pending = tuple(chain), False
            off2[int(m.group(1), 16)] = cur
    return off2


def main():
    dis_path, sec_re, csv_path, src_path = sys.argv[1:5]
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 30
    src = open(src_path).read().splitlines()
    fname = src_path.split('/')[-1]
    phase_of = make_phase_of(src)
    off2 = read_dis(dis_path, sec_re)
    if not off2:
        raise SystemExit(f'no instructions in a section matching {sec_re!r} of {dis_path}')
    rows = list(csv.reader(gzip.open(csv_path, 'rt') if csv_path.endswith('.gz') else open(csv_path)))
    hi = next(i for i, r in enumerate(rows) if r and r[0] == 'Address')
    hdr = rows[hi]
    data = [r for r in rows[hi + 1:] if r and r[0].startswith('0x')]
    ia, ii = hdr.index('Warp Stall Sampling (All Samples)'), hdr.index('Instructions Executed')
    stall_cols = [(k, h) for k, h in enumerate(hdr) if h.startswith('stall_') and '(Not Issued)' not in h]
    base = int(data[0][0], 16)
    if len(data) != len(off2):
        print(f'note: {len(data)} SASS rows in the CSV, {len(off2)} instructions in the disassembly section')
    ph_s, ph_i = collections.Counter(), collections.Counter()
    ph_st = collections.defaultdict(collections.Counter)
    ln_s, ln_i, ln_ph = collections.Counter(), collections.Counter(), {}
    unmapped = 0
    for r in data:
        off = int(r[0], 16) - base
        chain = off2.get(off)
        if chain is None:
            unmapped += 1
            p, ln = 'no line info', None
        else:
            p, ln = phase_of(chain, fname)
        s, n = float(r[ia] or 0), float(r[ii] or 0)
        ph_s[p] += s
        ph_i[p] += n
        for k, h in stall_cols:
            ph_st[p][h[6:]] += float(r[k] or 0)
        if ln is not None:
            ln_s[ln] += s
            ln_i[ln] += n
            ln_ph[ln] = p
    ts, ti = sum(ph_s.values()) or 1.0, sum(ph_i.values()) or 1.0
    print(f'{len(data)} instructions, {unmapped} without a disassembly offset; samples {ts:.0f}, '
          f'warp instructions executed {ti:.0f}')
    print(f'{"phase":28s} {"samples %":>9s} {"instr %":>8s}  largest stall reasons (% of the phase\'s samples)')
    for p, s in ph_s.most_common():
        st = ph_st[p]
        tot = sum(st.values()) or 1.0
        reasons = ', '.join(f'{h} {100 * v / tot:.0f}' for h, v in st.most_common(4) if v > 0)
        print(f'{p:28s} {100 * s / ts:9.1f} {100 * ph_i[p] / ti:8.1f}  {reasons}')
    print(f'\nkernel lines with the most samples (line: samples %, instructions %, phase | source)')
    for ln, s in ln_s.most_common(top):
        print(f'{ln:5d}: {100 * s / ts:5.1f} {100 * ln_i[ln] / ti:5.1f}  {ln_ph[ln]:26s} | {src[ln - 1].strip()[:100]}')


if __name__ == '__main__':
    main()
