#!/usr/bin/env bash
# Session r, call 5 (either board, ~200 s): racecheck of the list kernel (K > 32) with and without the __syncwarp
# at the start of bnd_compact (fix = the tree; nofix = the tree with that line removed), both -lineinfo; then a
# timing A/B of the two (probe, events, median of 5, interleaved, two rounds; every 7th row checked).
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=/tmp/probes; mkdir -p $P /tmp/nofix
cp -r kernels harness /tmp/nofix/
grep -c 'racecheck: ballots and reductions order no memory' /tmp/nofix/kernels/softmax_topk/fused_bound.cu
sed -i '/racecheck: ballots and reductions order no memory/d' /tmp/nofix/kernels/softmax_topk/fused_bound.cu
diff kernels/softmax_topk/fused_bound.cu /tmp/nofix/kernels/softmax_topk/fused_bound.cu
C="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -lineinfo -DBOUND_ONLY"
$C -I. kernels/softmax_topk/probes/bound_check.cu -o $P/fix > $O/build.txt 2>&1 &
(cd /tmp/nofix && $C -I. kernels/softmax_topk/probes/bound_check.cu -o $P/nofix) >> $O/build.txt 2>&1 &
wait; echo "built $(el) s"; ls $P
{
for b in nofix fix; do
  for args in "bf16 64 50257 256 random" "f16 64 50257 64 ascending" "bf16 64 32000 50 ties 1"; do
    echo "== racecheck $b $args"
    timeout 60 compute-sanitizer --tool racecheck --racecheck-report hazard $P/$b lib $args > /tmp/rc.txt 2>&1
    echo "rc=$?"; grep -E 'RACECHECK SUMMARY|PASS|FAIL' /tmp/rc.txt
    grep -oE '(Warning|Error): Race reported between (Read|Write) access|and (Read|Write) access at [^ ]+ in [^ ]+:[0-9]+|access at [^ ]+ in [^ ]+:[0-9]+' /tmp/rc.txt \
      | sed -E 's/at [^ ]+ in .*\/([^/]+:[0-9]+)/at \1/' | sort | uniq -c | head -20
  done
done
} > $O/racecheck.txt 2>&1
echo "racecheck done $(el) s"; cat $O/racecheck.txt
{
for round in 1 2; do
  for b in nofix fix; do
    for k in random descending ascending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
    timeout 60 $P/$b lib f16 4096 50257 256 random
    timeout 60 $P/$b lib bf16 4096 50257 64 random
  done
done
} > $O/probe.txt 2>&1
echo "probe done $(el) s"
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\([0-9]+ rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-200
