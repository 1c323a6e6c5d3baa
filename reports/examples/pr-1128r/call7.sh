#!/usr/bin/env bash
# Session r, PREPARED, NOT RUN (either board, ~300 s): FUSEBENCH_BOUND_LIST_KEEP, _SPREAD and _PLAIN_HIST against the
# library, probe A/B on one board. plain = the histograms by one shared atomic per active lane, no warp vote; keep1 = joining vectors marked L2 evict_last (so that the end's gather of the K vectors finds them
# in L2); keep2 = keep1 and the stream's loads L2 evict_first; spread = a block per SM, rows w G + b; ks = keep1 and
# spread; *tl = the phase timeline (the gather is phase "read K
# vectors": 28.6 us a row for random bf16 rows, 7.1 for descending ones on H200 GPU-cfa60c87, session r call 4).
# Each run checks its rows against a double top K (every 7th row at this size) and times the launch (cold L2,
# events, median of 5). Outputs: gpu.txt, probe.txt, builds.tgz.
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=/tmp/probes; B=/tmp/builds; mkdir -p $P $B
C="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. -DBOUND_ONLY -Xptxas -v kernels/softmax_topk/probes/bound_check.cu"
$C -o $P/vec > $B/vec.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_KEEP=1 -o $P/keep1 > $B/keep1.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_KEEP=2 -o $P/keep2 > $B/keep2.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/vectl > $B/vectl.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_KEEP=1 -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/keep1tl > $B/keep1tl.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_SPREAD=1 -o $P/spread > $B/spread.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_KEEP=1 -DFUSEBENCH_BOUND_LIST_SPREAD=1 -o $P/ks > $B/ks.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_PLAIN_HIST=1 -o $P/plain > $B/plain.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_PLAIN_HIST=1 -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/plaintl > $B/plaintl.txt 2>&1 &
wait; echo "built $(el) s"; ls $P
(cd /tmp && tar czf $O/builds.tgz builds)
{
for round in 1 2; do
  for b in vec keep1 keep2 spread ks plain; do
    for k in random descending ascending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
    timeout 60 $P/$b lib f16 4096 50257 256 random
    timeout 60 $P/$b lib bf16 4096 32000 256 random
    for K in 64 128; do timeout 60 $P/$b lib bf16 4096 50257 $K random; done
  done
done
for k in ties all_equal cluster256 masked nan posinf all_masked misaligned huge plateau; do
  for b in vec keep1 keep2 spread ks plain; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
done
for b in spread ks plain; do  # rows that do not fill the grid evenly, more of them checked
  timeout 60 $P/$b lib bf16 1000 50257 256 random; timeout 60 $P/$b lib f16 4100 32000 64 ties 1
  timeout 60 $P/$b lib bf16 100 50257 128 ascending
done
for b in vectl keep1tl plaintl; do
  for k in random descending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
  timeout 60 $P/$b lib f16 4096 50257 256 random
done
} > $O/probe.txt 2>&1
echo "probe done $(el) s"
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\([0-9]+ rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-300
