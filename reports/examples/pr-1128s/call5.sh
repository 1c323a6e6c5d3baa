#!/usr/bin/env bash
# Session s, call 5 (either board, ~120 s): FUSEBENCH_BOUND_LIST_GATHER against the library (probes/bound_check.cu,
# -DBOUND_ONLY): g3 = an L2 prefetch of the K held vectors before the library's one-at-a-time read; *tl = the phase
# timeline (phase "read K vectors"). Each run checks its rows against a double top K (every 7th row at this size)
# and times the launch (cold L2, events, median of 5). Outputs: gpu.txt, probe.txt, builds.tgz.
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=/tmp/probes; B=/tmp/builds; mkdir -p $P $B
C="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. -DBOUND_ONLY -Xptxas -v kernels/softmax_topk/probes/bound_check.cu"
$C -o $P/vec > $B/vec.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_GATHER=3 -o $P/g3 > $B/g3.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/vectl > $B/vectl.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_GATHER=3 -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/g3tl > $B/g3tl.txt 2>&1 &
wait; echo "built $(el) s"; ls $P
(cd /tmp && tar czf $O/builds.tgz builds)
{
for round in 1 2; do
  for b in vec g3; do
    for k in random descending ascending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
    timeout 60 $P/$b lib f16 4096 50257 256 random
    timeout 60 $P/$b lib bf16 4096 32000 256 random
    for K in 64 128; do timeout 60 $P/$b lib bf16 4096 50257 $K random; done
  done
done
for k in ties all_equal cluster256 masked nan all_masked misaligned huge plateau; do
  for b in vec g3; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
done
for b in g3; do  # rows that do not fill the grid evenly, more of them checked
  timeout 60 $P/$b lib bf16 1000 50257 256 random; timeout 60 $P/$b lib f16 4100 32000 64 ties 1
  timeout 60 $P/$b lib bf16 100 50257 128 ascending
done
for b in vectl g3tl; do
  for k in random descending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
  timeout 60 $P/$b lib f16 4096 50257 256 random
done
} > $O/probe.txt 2>&1
echo "probe done $(el) s"
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\([0-9]+ rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-300
