#!/usr/bin/env bash
# h2s call 1 (H200): ncu of fused_stream's K <= 32 / K <= 256 kernels (Lean off / on), a same-board
# interleaved A/B of the Lean knobs (probes/stream_ab.cu, indices compared), the library build with its
# default (Lean on a >= 4 TB/s device), softmax_topk GPU tests and a suite selection.
# Run from the worktree root: OUT=... bash h2s_call1.sh
set -uo pipefail
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
O=${OUT:-/tmp/out}; mkdir -p "$O/w"; W=$O/w
name=$(nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | head -1); echo "board: $name" | tee $W/board.txt
case "$name" in *H200*) ;; *) echo "not an H200, exiting"; exit 3;; esac
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> $W/board.txt

# library build in the background (12 jobs; the probes take the other cores)
( export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_JOBS=12 FUSEBENCH_TARGETS="fusebench fusebench_tests"
  scripts/build.sh > $W/build.log 2>&1; echo "rc=$?" > $W/build.rc ) &
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
P=kernels/softmax_topk/probes
mkdir -p /tmp/pb
$NV -DFUSEBENCH_STREAM_LEAN=0 -DFUSEBENCH_BIG_LEAN=0 $P/stream_ab.cu -o /tmp/pb/ab_base > /tmp/pb/b1.log 2>&1 &
$NV -DFUSEBENCH_STREAM_LEAN=1 -DFUSEBENCH_BIG_LEAN=1 $P/stream_ab.cu -o /tmp/pb/ab_lean > /tmp/pb/b2.log 2>&1 &
$NV -DFUSEBENCH_STREAM_LEAN=0 -DFUSEBENCH_BIG_LEAN=0 $P/stream_plain.cu -o /tmp/pb/pl_base > /tmp/pb/b3.log 2>&1 &
$NV -DFUSEBENCH_STREAM_LEAN=1 -DFUSEBENCH_BIG_LEAN=1 $P/stream_plain.cu -o /tmp/pb/pl_lean > /tmp/pb/b4.log 2>&1 &
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40; do
  [ -x /tmp/pb/ab_base ] && [ -x /tmp/pb/ab_lean ] && [ -x /tmp/pb/pl_base ] && [ -x /tmp/pb/pl_lean ] && break; sleep 5; done
echo "probes built $(el) s"; ls /tmp/pb; cat /tmp/pb/b*.log | grep -i error | head
[ -x /tmp/pb/ab_base ] && [ -x /tmp/pb/ab_lean ] || { echo "probe build failed"; cat /tmp/pb/b1.log /tmp/pb/b2.log | tail -20; }

# ncu (second launch, cold L2 by ncu's cache control; clocks left alone)
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section Occupancy"
prof() {  # tag binary args... [src]
  local tag=$1 bin=$2 src=$3; shift 3
  local extra=""; [ "$src" = 1 ] && extra="--section SourceCounters"
  timeout 60 ncu --clock-control none --kernel-name regex:softmax_topk_stream --launch-skip 1 --launch-count 1 $SEC $extra \
    -f -o /tmp/pb/$tag $bin "$@" > /tmp/pb/$tag.log 2>&1 || { echo "ncu $tag failed"; tail -5 /tmp/pb/$tag.log; }
  ncu -i /tmp/pb/$tag.ncu-rep --page details > $W/details_$tag.txt 2>&1
  [ "$src" = 1 ] && ncu -i /tmp/pb/$tag.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $W/sass_$tag.csv.gz
  echo "ncu $tag $(el) s"
}
prof bf16_10_base /tmp/pb/pl_base 1 bf16 4096 50257 10 10
prof bf16_10_lean /tmp/pb/pl_lean 1 bf16 4096 50257 10 10
prof bf16_256_base /tmp/pb/pl_base 1 bf16 4096 50257 256 10
prof bf16_256_lean /tmp/pb/pl_lean 0 bf16 4096 50257 256 10
prof f32_10_base /tmp/pb/pl_base 0 f32 4096 50257 10 10
prof f32_10_lean /tmp/pb/pl_lean 0 f32 4096 50257 10 10

# A/B: three interleaved rounds, base first in odd rounds, lean first in even ones; indices vs base's file
mkdir -p /tmp/pb/ref
CASES="bf16:50257:10:10 bf16:50257:256:10 f16:50257:10:10 f16:50257:256:10 f32:50257:10:10 bf16:151936:10:10 bf16:151936:256:10 bf16:32000:10:10 bf16:32000:256:10 f32:151936:10:10 f32:32000:10:10 bf16:50257:32:10 bf16:50257:64:10 f16:50257:128:10 f32:50257:256:10 bf16:50257:10:-1 f32:50257:10:-1"
for rep in 1 2 3; do
  for c in $CASES; do IFS=: read ty v k sd <<< "$c"
    if [ $((rep % 2)) = 1 ]; then ord="base lean"; else ord="lean base"; fi
    for b in $ord; do echo "rep$rep $(timeout 30 /tmp/pb/ab_$b $ty 4096 $v $k $sd $b$([ "$sd" = -1 ] && echo A) /tmp/pb/ref | tail -1)"; done
  done
  echo "round $rep $(el) s" >&2
done > $W/ab.txt 2> $W/ab.err
cat $W/ab.err
python3 - $W/ab.txt > $W/ab-summary.txt <<'PY'
import collections, re, statistics, sys
t = collections.defaultdict(list); bad = []
for line in open(sys.argv[1]):
    m = re.match(r'rep\d AB (\w+)\s+(\S+) (\d+) x (\d+) K (\d+): median ([\d.]+) us \(events\); (.*)', line)
    if not m: continue
    b, ty, rows, v, k, us, rest = m.groups()
    if b.endswith('A'): ty += '-asc'; b = b[:-1]
    t[(ty, int(v), int(k), b)].append(float(us))
    if 'DIFFER' in rest: bad.append(line.strip())
bw = 4.25e6  # bytes/us, the H200's copy bandwidth as the suite measured it (~4.25 TB/s)
for key in sorted({k[:3] for k in t}):
    ty, v, k = key; nb = 4096 * v * (4 if ty == 'f32' else 2)
    a, l = t.get(key + ('base',), []), t.get(key + ('lean',), [])
    if not a or not l: continue
    ma, ml = statistics.median(a), statistics.median(l)
    print(f"{ty:5s} 4096 x {v:6d} K {k:3d}: base {ma:7.1f} {a}  lean {ml:7.1f} {l}  lean/base {ml/ma:.3f}  "
          f"logit-floor {nb/bw:.1f} us: {100*nb/bw/ma:.1f}% -> {100*nb/bw/ml:.1f}%")
print("index differences:", len(bad)); [print(" ", x) for x in bad]
PY
cat $W/ab-summary.txt; echo "A/B done $(el) s"

# the library: wait for the build, then tests and a suite selection (Lean is the library's choice here)
while [ ! -f $W/build.rc ] && [ $(el) -lt 470 ]; do sleep 3; done
cat $W/build.rc 2>/dev/null; echo "build wait $(el) s"; tail -3 $W/build.log
if grep -q 'rc=0' $W/build.rc 2>/dev/null; then
  (cd build-gpu && timeout $(( 560 - $(el) )) ./fusebench_tests "[gpu][softmax_topk]" --reporter compact > $W/tests-softmax.txt 2>&1; echo "softmax tests rc=$? $(el) s"; tail -3 $W/tests-softmax.txt)
  left=$(( 585 - $(el) ))
  if [ $left -gt 25 ]; then
    timeout $left build-gpu/fusebench run --suite softmax_topk --case "4096x50257:K10:,4096x50257:K256:,4096x151936:K256:,4096x151936:K10:,4096x32000:K10:" \
      --variant fused_stream,fused_stream_resample --dtype fp32,bf16,fp16 --time-budget 0.1 --no-counters --seed 2211 --json $W/suite.json > $W/suite.txt 2>&1
    echo "suite rc=$? $(el) s"; grep -E 'fused_stream' $W/suite.txt | head -40
  fi
fi
(cd $O && tar czf h2s-call1.tgz w && rm -rf w); ls -la $O; echo "end $(el) s"
