#!/usr/bin/env bash
# Session 1127e: FUSEBENCH_STREAM_PACE A/B (stream_ab, 3 interleaved rounds) and the timeline's balance report with pacing.
set -uo pipefail
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
name=$(nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | head -1); echo "board: $name" | tee $OUT/gpu.txt
NVT="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
$NVT ${PACE_TL:--DFUSEBENCH_STREAM_PACE=1} kernels/softmax_topk/probes/stream_timeline.cu -o /tmp/stlp > /tmp/stlp.log 2>&1 &
spid=$!
VARIANTS=${VARIANTS:-"base=;p1=-DFUSEBENCH_STREAM_PACE=1;p2=-DFUSEBENCH_STREAM_PACE=2;p1e1=-DFUSEBENCH_STREAM_PACE=1 -DFUSEBENCH_STREAM_PACE_EVERY=1 -DFUSEBENCH_STREAM_PACE_NS=300"} \
TAG=pace_ab CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 f32:50257:10:10 bf16:151936:10:10 bf16:50257:16:10 bf16:50257:10:-1"} \
OUT=$OUT timeout 480 bash kernels/softmax_topk/probes/knob_ab.sh > $OUT/pace_ab.log 2>&1; echo "pace ab rc=$? $(el) s"; tail -12 $OUT/pace_ab.log
wait $spid; echo "stlp build rc=$? $(el) s"; tail -3 /tmp/stlp.log
for c in "bf16 4096 50257 10 10" "bf16 4096 32000 10 10" "f32 4096 50257 10 10"; do
  echo "== pace: $c"; timeout 60 /tmp/stlp $c 2>&1 | grep -E "median|balance|block |SM |row end by warp|rows/SM|^ +(28|32) "
done | tee $OUT/timeline_pace.txt
echo "done $(el) s"
