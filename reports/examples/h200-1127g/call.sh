#!/usr/bin/env bash
# Call B/C (one per board): the library at HEAD (FUSEBENCH_STREAM_WHOLE_SM = 1), the softmax_topk GPU tests,
# the default run (the board's baseline). (Its first form also had a WHOLE_SM / SHARE A/B for H200s, off
# on the H100 run; removed with the share kernel.)
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $O/gpu.txt
WANT=${WANT:-$(grep -o 'H[12]00' $O/gpu.txt | head -1)}  # the board that came unless one is required
grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/t_softmax.txt 2>&1; echo "tests rc=$? ($(el) s) $(tail -3 $O/t_softmax.txt | tr '\n' ' ')"
lc=$(echo "$WANT" | tr A-Z a-z)
build-gpu/fusebench run --json $O/$lc.json > $O/run.txt 2>$O/run.err; echo "run rc=$? ($(el) s)"
gzip -f $O/$lc.json $O/run.txt; tail -2 $O/run.err
