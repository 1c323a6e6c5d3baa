#!/usr/bin/env bash
# Session 1127e, H200 only: TWO_SUMS and 32 warps a block A/B (stream_ab, 3 interleaved rounds) and the fp8_ceiling_clock probe.
set -uo pipefail
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
name=$(nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | head -1); echo "board: $name"
case "$name" in *H200*) ;; *) echo "not an H200, exiting"; exit 3;; esac
(export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_JOBS=6 FUSEBENCH_TARGETS="fusebench_harness"; scripts/build.sh > /tmp/hb.log 2>&1 &&
 nvcc -O3 -std=c++20 -arch=sm_90 -I. harness/probes/fp8_ceiling_clock.cu build-gpu/libfusebench_harness.a -lcublas -lcublasLt -lcuda -o /tmp/fcc > /tmp/fcc.log 2>&1; echo "fcc build rc=$?") &
hpid=$!
VARIANTS="base=;two=-DFUSEBENCH_STREAM_TWO_SUMS=1;w32=-DFUSEBENCH_STREAM_WARPS=32" TAG=h200_ab \
CASES="bf16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:12:10 f16:50257:10:10 f32:50257:10:10" \
OUT=$OUT timeout 400 bash kernels/softmax_topk/probes/knob_ab.sh > $OUT/h200_ab.log 2>&1; echo "ab rc=$? $(el) s"; tail -8 $OUT/h200_ab.log
wait $hpid; echo "harness $(el) s"; tail -3 /tmp/hb.log /tmp/fcc.log
[ -x /tmp/fcc ] && { timeout 100 /tmp/fcc > $OUT/fcc.txt 2>&1; echo "fcc rc=$? $(el) s"; cat $OUT/fcc.txt; }
echo "done $(el) s"
