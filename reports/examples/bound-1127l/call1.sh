#!/usr/bin/env bash
# Session l, call 1 (one board a call; WANT=H100 or H200 exits 3 on the other model): build every target,
# the suite's softmax_topk GPU tests (fused_bound's included), then the default run that becomes the
# board's baseline (reports/baselines/<gpu>.json). Call 2 (same warm machine, build kept) times the
# adversarial 16-bit K <= 32 selection.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
if ! scripts/build.sh > $O/build.log 2>&1; then tail -30 $O/build.log; echo "BUILD FAILED"; exit 1; fi
echo "build $(el) s"
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "tests rc=$? $(el) s: $(tail -3 $O/tests-softmax_topk.txt | tr '\n' ' ')"
label=$(grep -oiE 'h100|h200' $O/gpu.txt | head -1 | tr 'A-Z' 'a-z')
timeout 330 build-gpu/fusebench run --json $O/${label:-gpu}.json > $O/run.txt 2> $O/run.err
echo "run rc=$? $(el) s"; tail -3 $O/run.err
f=$O/${label:-gpu}.json; [ -f $f ] && [ $(stat -c %s $f) -gt 15000000 ] && gzip -f $f
grep -E "fused_bound|softmax_topk" $O/run.txt | head -40
