#!/usr/bin/env bash
# Call B/C (one per board): the library at HEAD (FUSEBENCH_STREAM_WHOLE_SM = 1), the softmax_topk GPU tests,
# the default run (the board's baseline), then, where time is left and BOARD_AB=1, WHOLE_SM against SHARE.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $O/gpu.txt
WANT=${WANT:-$(grep -o 'H[12]00' $O/gpu.txt | head -1)}  # the board that came unless one is required
grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }
[ "$WANT" = H200 ] && BOARD_AB=${BOARD_AB:-1}
if [ "${BOARD_AB:-0}" = 1 ]; then  # the probe builds in the background while the library builds
  mkdir -p /tmp/share_ab/ref
  for v in "whole=" "share=-DFUSEBENCH_STREAM_SHARE=1"; do
    nice nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. ${v#*=} \
      kernels/softmax_topk/probes/stream_ab.cu -o /tmp/share_ab/${v%%=*} > $O/ab-build-${v%%=*}.log 2>&1 &
  done
fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/t_softmax.txt 2>&1; echo "tests rc=$? ($(el) s) $(tail -3 $O/t_softmax.txt | tr '\n' ' ')"
lc=$(echo "$WANT" | tr A-Z a-z)
build-gpu/fusebench run --json $O/$lc.json > $O/run.txt 2>$O/run.err; echo "run rc=$? ($(el) s)"
gzip -f $O/$lc.json $O/run.txt; tail -2 $O/run.err
if [ "${BOARD_AB:-0}" = 1 ] && [ "$(el)" -lt 430 ]; then
  wait
  . kernels/softmax_topk/probes/ab_common.sh
  ab_rounds /tmp/share_ab "whole share" "bf16:50257:10:10 bf16:32000:10:10 f16:50257:10:10 f32:50257:10:10" > $O/share_ab.txt
  ab_summary $O/share_ab.txt "whole share"; echo "ab ($(el) s)"
fi
