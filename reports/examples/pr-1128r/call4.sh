#!/usr/bin/env bash
# Session r, call 4 (either board, ~250 s): two list-kernel knobs against the library, probe A/B on one board:
# cand = FUSEBENCH_BOUND_LIST_CAND=512 (the end's candidates written once and compacted), stag =
# FUSEBENCH_BOUND_LIST_STAGGER=96 (warps compact at different fills), cs = both; *tl = the phase timeline.
# Each run checks its rows against a double top K (every 7th row at this size) and times the launch (cold L2,
# events, median of 5). Then racecheck / memcheck of cs on 64 rows.
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=/tmp/probes; mkdir -p $P
C="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. -DBOUND_ONLY kernels/softmax_topk/probes/bound_check.cu"
$C -o $P/vec > $O/build-vec.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_CAND=512 -o $P/cand > $O/build-cand.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_STAGGER=96 -o $P/stag > $O/build-stag.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_CAND=512 -DFUSEBENCH_BOUND_LIST_STAGGER=96 -o $P/cs > $O/build-cs.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/vectl > $O/build-vectl.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_CAND=512 -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/candtl > $O/build-candtl.txt 2>&1 &
wait; echo "built $(el) s"; ls $P
{
for round in 1 2; do
  for b in vec cand stag cs; do
    for k in random descending ascending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
    timeout 60 $P/$b lib f16 4096 50257 256 random
    timeout 60 $P/$b lib bf16 4096 32000 256 random
    for K in 64 128; do timeout 60 $P/$b lib bf16 4096 50257 $K random; done
  done
done
for b in vec cs; do
  for k in ties all_equal cluster256 masked nan posinf all_masked misaligned huge plateau; do
    timeout 60 $P/$b lib bf16 4096 50257 256 $k
  done
  for K in 50 256; do timeout 60 $P/$b lib f16 4096 32000 $K ties 1; timeout 60 $P/$b lib bf16 4096 32000 $K ties 1; done
done
for b in vectl candtl; do
  for k in random descending ascending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
  timeout 60 $P/$b lib f16 4096 50257 256 random
done
} > $O/probe.txt 2>&1
echo "probe done $(el) s"
for tool in racecheck memcheck; do
  timeout 120 compute-sanitizer --tool $tool $P/cs lib bf16 64 50257 256 random > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(tail -1 $O/san-$tool.txt)"
done
echo "sanitizer done $(el) s"
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\([0-9]+ rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-300
grep -hE 'spill|registers' $O/build-cs.txt | sort | uniq -c | head
