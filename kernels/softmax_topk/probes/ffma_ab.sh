#!/usr/bin/env bash
# Device script (not part of the build): fused_stream with and without FUSEBENCH_STREAM_FFMA (a term in one
# FFMA, exp2(fma(x, log2e, -bl)); rows whose fast sum is not finite or whose |max| > 2^20 summed again
# exactly; fused_stream.cu, the comment above lane_stats), built from one source, the device's own
# choices otherwise (L2 prefetch, Lean, routing), timed on one board: probes/stream_ab.cu, events, cold L2,
# median of 5 launches, three interleaved rounds; indices must equal the base build's, probabilities move
# in their last bits (p rel, printed; above 1e-6 is a finding). Written for an H200, where the 16-bit
# stream is issue-bound (kernels/softmax_topk/NOTES.md, 2026-11-27); on an H100 topk8's earlier form
# bought 0.7%.
#   OUT=/tmp/out bash kernels/softmax_topk/probes/ffma_ab.sh      (~2.5 min: two builds in parallel, then runs)
# Correctness of the knob beyond random rows (extreme, NaN, +inf, -inf-prefixed rows): build the tests with
# it, `FUSEBENCH_BUILD_DIR=build-ffma scripts/build.sh -DCMAKE_CUDA_FLAGS=-DFUSEBENCH_STREAM_FFMA=1`, then
# `build-ffma/fusebench_tests "[gpu][softmax_topk]"`; the cost of the exact pass on those rows:
# `build-ffma/fusebench run --suite softmax_topk_adversarial --case "4096x50257:K10:huge,4096x50257:K10:nan,4096x50257:K10:posinf,4096x50257:K10:std1"
# --variant fused_stream,fused_stream_resample --no-counters` against the same from build-gpu.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
P=kernels/softmax_topk/probes
mkdir -p /tmp/ffma_ab/ref
$NV $P/stream_ab.cu -o /tmp/ffma_ab/base &
$NV -DFUSEBENCH_STREAM_FFMA=1 $P/stream_ab.cu -o /tmp/ffma_ab/ffma &
wait
for b in base ffma; do [ -x /tmp/ffma_ab/$b ] || { echo "build $b failed"; exit 1; }; done
# CASES overrides the list (type:V:K:sd, sd -1 = ascending rows).
CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:32:10 bf16:50257:64:10 bf16:50257:256:10 f16:50257:256:10 bf16:151936:256:10 f32:50257:10:10 f32:50257:256:10 bf16:50257:1024:10 bf16:50257:10:-1"}
for rep in 1 2 3; do
  for c in $CASES; do
    IFS=: read -r ty v k sd <<< "$c"
    if [ $((rep % 2)) = 1 ]; then ord="base ffma"; else ord="ffma base"; fi
    for b in $ord; do
      tag=$b; [ "$sd" = -1 ] && tag=${b}A
      echo "rep$rep $(timeout 30 /tmp/ffma_ab/$b "$ty" 4096 "$v" "$k" "$sd" "$tag" /tmp/ffma_ab/ref | tail -1)"
    done
  done
done | tee "$O/ffma_ab.txt"
python3 - "$O/ffma_ab.txt" <<'PY'
import collections, re, statistics, sys
t = collections.defaultdict(list); bad = 0; prel = 0.0
for line in open(sys.argv[1]):
    m = re.match(r'rep\d AB (\w+)\s+(\S+) (\d+) x (\d+) K (\d+): median ([\d.]+) us \(events\); (.*) \((\d+) differ, p rel ([\d.e+-]+)\)', line)
    if not m: continue
    b, ty, rows, v, k, us, what, nd, rel = m.groups()
    if b.endswith('A'): ty, b = ty + '-asc', b[:-1]
    t[(ty, int(v), int(k))].append((b, float(us)))
    bad += int(nd) > 0
    prel = max(prel, float(rel))
for key in sorted(t):
    med = {b: statistics.median([u for bb, u in t[key] if bb == b]) for b in ('base', 'ffma')}
    print(f"{key[0]:8s} 4096 x {key[1]:6d} K {key[2]:4d}: base {med['base']:7.1f}  ffma {med['ffma']:7.1f}  ffma/base {med['ffma'] / med['base']:.3f}")
print("runs with index differences:", bad, "; largest probability difference (relative):", f"{prel:.1e}")
PY
