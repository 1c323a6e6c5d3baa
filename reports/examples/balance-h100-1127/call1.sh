#!/usr/bin/env bash
# Session 1127e call: the timeline probe's balance report (any board); on an H200 also the TWO_SUMS A/B.
set -uo pipefail
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
name=$(nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | head -1); echo "board: $name" | tee $OUT/gpu.txt
nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. kernels/softmax_topk/probes/stream_timeline.cu -o /tmp/stl > /tmp/stl.log 2>&1 &
spid=$!
if [ "${TWO:-0}" = 1 ] && [[ "$name" == *H200* ]]; then
VARIANTS="base=;two=-DFUSEBENCH_STREAM_TWO_SUMS=1" TAG=two_ab CASES="bf16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:12:10 f32:50257:10:10" OUT=$OUT timeout 330 bash kernels/softmax_topk/probes/knob_ab.sh > /tmp/two.log 2>&1; echo "two rc=$? $(el) s"; tail -25 /tmp/two.log
fi
wait $spid; echo "stl build rc=$? $(el) s"; tail -3 /tmp/stl.log
for c in "bf16 4096 50257 10 10" "f16 4096 50257 10 10" "f32 4096 50257 10 10" "bf16 4096 32000 10 10" "bf16 4096 151936 10 10" "bf16 4096 50257 32 10" "bf16 4096 50257 10 1"; do
  echo "== $c"; timeout 60 /tmp/stl $c 2>&1 | tail -14
done | tee $OUT/timeline.txt
echo "done $(el) s"
