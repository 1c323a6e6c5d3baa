#!/usr/bin/env bash
# Session 1127e: build, [gpu][softmax_topk], optional [gpu][seeds], fp8_ceiling_clock probe, optional TWO_SUMS A/B.
# WANT=H100|H200 exits unless the board matches. SEEDS=1 runs [gpu][seeds]; TWO=1 runs the TWO_SUMS A/B.
set -uo pipefail
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
name=$(nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | head -1); echo "board: $name"
case "$name" in *${WANT:-H}*) ;; *) echo "not ${WANT:-}, exiting"; exit 3;; esac
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_JOBS=16 FUSEBENCH_TARGETS="fusebench fusebench_tests fusebench_harness"
scripts/build.sh > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; echo BUILD FAILED; exit 1; }; echo "build $(el) s"
nvcc -O3 -std=c++20 -arch=sm_90 -I. harness/probes/fp8_ceiling_clock.cu build-gpu/libfusebench_harness.a -lcublas -lcublasLt -lcuda -o /tmp/fcc > /tmp/fcc.log 2>&1 &
fpid=$!
(cd build-gpu && timeout 120 ./fusebench_tests "[gpu][softmax_topk]" --reporter compact > $OUT/gpu-tests-softmax.txt 2>&1; echo "softmax tests rc=$? $(el) s"; tail -2 $OUT/gpu-tests-softmax.txt)
if [ "${SEEDS:-0}" = 1 ]; then
(cd build-gpu && timeout 300 ./fusebench_tests "[gpu][seeds]" --reporter compact > $OUT/gpu-tests-seeds.txt 2>&1; echo "seeds tests rc=$? $(el) s"; tail -2 $OUT/gpu-tests-seeds.txt)
fi
wait $fpid; echo "fcc build rc=$? $(el) s"; tail -5 /tmp/fcc.log
timeout 120 /tmp/fcc > $OUT/fcc.txt 2>&1; echo "fcc rc=$? $(el) s"; cat $OUT/fcc.txt | tail -40
if [ "${TWO:-0}" = 1 ]; then
VARIANTS="base=;two=-DFUSEBENCH_STREAM_TWO_SUMS=1" TAG=two_ab CASES="bf16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:12:10 f32:50257:10:10" OUT=$OUT timeout 300 bash kernels/softmax_topk/probes/knob_ab.sh > /tmp/two.log 2>&1; echo "two rc=$? $(el) s"; tail -25 /tmp/two.log
fi
echo "done $(el) s"
