#!/usr/bin/env bash
# Session q, PREPARED, NOT RUN (either board, ~250 s): the element list (FUSEBENCH_BOUND_LIST_ELEMS = 1, off in the
# library) against the library's vector list, probe A/B on one board, and the fix of 0746045 on the suite-like ties
# rows that found the bug (fp16, values multiples of 0.5 near 2: `ties` with sd 1). Probe binaries are built here
# (-DBOUND_ONLY: fused_bound.cu only, ~80 s each, in parallel): vec = the library; el2 / el3 = the element list at
# U = 2 / 3 (ptxas: U = 2 spills 0-12 bytes, U = 3 44-112); el2tl = el2 with the phase timeline. Each run checks
# its rows against a double top K (every 7th row at this size) and times the launch (cold L2, events, median of 5).
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=/tmp/probes; mkdir -p $P
C="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. -DBOUND_ONLY kernels/softmax_topk/probes/bound_check.cu"
$C -o $P/vec > $O/build-vec.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_ELEMS=1 -DFUSEBENCH_BOUND_LIST_U=2 -o $P/el2 > $O/build-el2.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_ELEMS=1 -o $P/el3 > $O/build-el3.txt 2>&1 &
$C -DFUSEBENCH_BOUND_LIST_ELEMS=1 -DFUSEBENCH_BOUND_LIST_U=2 -DFUSEBENCH_BOUND_LIST_TL=1 -o $P/el2tl > $O/build-el2tl.txt 2>&1 &
wait; echo "built $(el) s"; ls $P
{
for round in 1 2; do
  for b in vec el2 el3; do
    for k in random descending ascending; do timeout 60 $P/$b lib bf16 4096 50257 256 $k; done
    timeout 60 $P/$b lib f16 4096 50257 256 random
    for K in 64 128; do timeout 60 $P/$b lib bf16 4096 50257 $K random; done
  done
done
for k in ties all_equal cluster256 masked nan posinf all_masked misaligned huge plateau; do
  timeout 60 $P/el2 lib bf16 4096 50257 256 $k
done
for b in vec el2; do
  for K in 50 256; do timeout 60 $P/$b lib f16 4096 32000 $K ties 1; timeout 60 $P/$b lib bf16 4096 32000 $K ties 1; done
done
for k in random descending ascending; do timeout 60 $P/el2tl lib bf16 4096 50257 256 $k; done
} > $O/probe.txt 2>&1
echo "probe done $(el) s"
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\(586 rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-300
