#!/usr/bin/env bash
# Device script (not part of the build): fused_stream's K <= 32 kernel with and without its one-batch L2
# prefetch (FUSEBENCH_STREAM_L2PF=0 against the library default, 1), built from one source and timed on
# one board, three interleaved rounds, K = 10, std 10, events (probes/stream_plain.cu). Written for the
# H200 question in NOTES.md ("The closing calls of 2026-11-26 night"): fp32 K = 10 read 4.9-7.5% slower on
# the H200 at 9939c58 than at 5b50ca4, with the prefetch added in between. From the repository root:
#   OUT=/tmp/out bash kernels/softmax_topk/probes/l2pf_ab.sh      (~90 s: two builds in parallel, then runs)
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
for d in 0 1; do $NV -DFUSEBENCH_STREAM_L2PF=$d kernels/softmax_topk/probes/stream_plain.cu -o /tmp/l2pf$d & done
wait
for d in 0 1; do [ -x /tmp/l2pf$d ] || { echo "build L2PF=$d failed"; exit 1; }; done
for rep in 1 2 3; do
  for cfg in "f32 4096 151936" "f32 4096 50257" "bf16 4096 50257" "f16 4096 50257" "bf16 4096 151936" "bf16 4096 32000"; do
    for d in 0 1; do set -- $cfg; echo "rep$rep L2PF=$d $(timeout 30 /tmp/l2pf$d "$1" "$2" "$3" 10 10 | tail -1)"; done
  done
done | tee "$O/l2pf.txt"
python3 - "$O/l2pf.txt" <<'PY'
import collections, re, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'rep\d L2PF=(\d) (\S+) (\d+) x (\d+) K 10: median ([\d.]+)', line)
    if m: t[(m.group(2), int(m.group(4)), int(m.group(1)))].append(float(m.group(5)))
for (dt, v, d) in sorted(t):
    print(f"{dt} 4096 x {v} L2PF={d}: rounds {t[(dt, v, d)]} median {statistics.median(t[(dt, v, d)]):.1f} us")
PY
