#!/usr/bin/env bash
# Session p, prepared for a later session (not run): where EARLY = 2's 16-bit cost comes from (NOTES.md, "Session p").
# Compiles kernels/softmax_topk/fused_stream.cu twice on the device (the library, and with
# -DFUSEBENCH_RESAMPLE_PARKED_EARLY=2: the register form; the stash form cost the same and was removed), both as sm_90
# cubins in parallel (~4 min each on one
# core), disassembles them with cuobjdump and compares the Mode 1 kernels of fused_stream_resample
# (softmax_topk_stream_big_kernel<T, U, true, false, true>, T = bf16 / fp16 / fp32): instruction counts, and a diff of
# the bf16 kernel's SASS with registers and addresses masked. Outputs under $OUT: sass-summary.txt, sass-diff-bf16.txt.gz.
# No GPU time beyond the machine's start: nothing is launched.
set -uo pipefail
O=$OUT; R=$PWD; W=/tmp/sass; mkdir -p $W/base $W/pr
cp kernels/softmax_topk/fused_stream.cu $W/base/ && cp kernels/softmax_topk/fused_stream.cu $W/pr/
flags="-O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I$R -cubin"
nvcc $flags $W/base/fused_stream.cu -o $W/base.cubin > $W/base.log 2>&1 &
nvcc $flags -DFUSEBENCH_RESAMPLE_PARKED_EARLY=2 $W/pr/fused_stream.cu -o $W/pr.cubin > $W/pr.log 2>&1 &
wait
for v in base pr; do [ -s $W/$v.cubin ] || { echo "$v compile failed"; tail -20 $W/$v.log; exit 1; }; cuobjdump -sass $W/$v.cubin > $W/$v.sass; done
python3 - $W/base.sass $W/pr.sass $O <<'P'
import re, sys, gzip, difflib
def funcs(path):
    out, name = {}, None
    for line in open(path):
        m = re.match(r"\s*Function : (\S+)", line)
        if m: name = m.group(1); out[name] = []; continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if name and m: out[name].append(m.group(1).strip())
    return out
b, p = funcs(sys.argv[1]), funcs(sys.argv[2])
sel = [n for n in b if "stream_big_kernel" in n and "Lb1ELb0ELb1E" in n]
with open(sys.argv[3] + "/sass-summary.txt", "w") as f:
    for n in sorted(set(b) | set(p)):
        if "stream_big_kernel" not in n: continue
        nb, np_ = len(b.get(n, [])), len(p.get(n, []))
        if nb != np_ or n in sel: print(f"{nb:6d} {np_:6d} {np_ - nb:+5d} {n}", file=f)
mask = lambda s: re.sub(r"\bU?R\d+\b|\bP\d\b|0x[0-9a-f]+|c\[0x[0-9a-f]+\]\[0x[0-9a-f]+\]", "#", s)
bf = [n for n in sel if "nv_bfloat16" in n]
if bf:
    n = bf[0]
    d = difflib.unified_diff([mask(x) for x in b[n]], [mask(x) for x in p[n]], "base", "pr", lineterm="", n=3)
    with gzip.open(sys.argv[3] + "/sass-diff-bf16.txt.gz", "wt") as f: f.write("\n".join(d) + "\n")
P
cat $O/sass-summary.txt
