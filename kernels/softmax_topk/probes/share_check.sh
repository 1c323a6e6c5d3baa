#!/usr/bin/env bash
# Device script (not part of the build; prepared 2026-11-27, not run yet): the two prepared K <= 32 layouts
# of fused_stream (kernels/softmax_topk/NOTES.md, "Rows of one SM end far apart") checked and timed on one
# board. (1) fusebench_tests "[gpu][softmax_topk]" built with -DFUSEBENCH_STREAM_SHARE=1 (its one-wave
# test takes the work-sharing kernel at 32 x SMs and 32 x SMs - 127 rows; every other test the library's
# kernels), then the same with -DFUSEBENCH_STREAM_WHOLE_SM=1; (2) knob_ab.sh of the library, WHOLE_SM and
# SHARE on the 4096-row cases (indices compared with the library's in every run).
#   OUT=/tmp/out bash kernels/softmax_topk/probes/share_check.sh      (~8 min on 16 cores)
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
for knob in SHARE WHOLE_SM; do
  d=$PWD/build-${knob,,}
  (FUSEBENCH_BUILD_DIR=$d FUSEBENCH_JOBS=8 FUSEBENCH_TARGETS=fusebench_tests scripts/build.sh \
     "-DCMAKE_CUDA_FLAGS=-DFUSEBENCH_STREAM_$knob=1" > "$O/build-$knob.log" 2>&1 &&
   "$d/fusebench_tests" "[gpu][softmax_topk]" --reporter compact > "$O/tests-$knob.txt" 2>&1
   echo "tests $knob rc=$? ($(el) s): $(grep -E 'passed|failed' "$O/tests-$knob.txt" | tail -1)") &
done
VARIANTS="base=;whole=-DFUSEBENCH_STREAM_WHOLE_SM=1;share=-DFUSEBENCH_STREAM_SHARE=1" TAG=share_ab \
CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:12:10 f32:50257:10:10 bf16:50257:10:-1"} \
OUT=$O bash kernels/softmax_topk/probes/knob_ab.sh > "$O/share_ab.log" 2>&1
echo "ab rc=$? ($(el) s)"; tail -10 "$O/share_ab.log"
wait
