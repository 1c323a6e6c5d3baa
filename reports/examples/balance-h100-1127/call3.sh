#!/usr/bin/env bash
# Session 1127e: warps a block for the K <= 32 kernel (FUSEBENCH_STREAM_WARPS 4/8/16/32): A/B and the timeline balance report.
set -uo pipefail
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
name=$(nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | head -1); echo "board: $name"
NVT="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
for wn in 32 16; do $NVT -DFUSEBENCH_STREAM_WARPS=$wn kernels/softmax_topk/probes/stream_timeline.cu -o /tmp/stlw$wn > /tmp/stlw$wn.log 2>&1 & done
VARIANTS="w4=;w8=-DFUSEBENCH_STREAM_WARPS=8;w16=-DFUSEBENCH_STREAM_WARPS=16;w32=-DFUSEBENCH_STREAM_WARPS=32" \
TAG=warps_ab CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 f32:50257:10:10 bf16:151936:10:10 bf16:50257:16:10"} \
OUT=$OUT timeout 420 bash kernels/softmax_topk/probes/knob_ab.sh > $OUT/warps_ab.log 2>&1; echo "warps ab rc=$? $(el) s"; tail -9 $OUT/warps_ab.log
wait; echo "stl builds $(el) s"; tail -2 /tmp/stlw32.log
for wn in 32 16; do for c in "bf16 4096 50257 10 10" "bf16 4096 32000 10 10"; do
  echo "== warps $wn: $c"; timeout 60 /tmp/stlw$wn $c 2>&1 | grep -E "median|block |SM |row end by warp|^ +(16|28|32) "
done; done | tee $OUT/timeline_warps.txt
echo "done $(el) s"
