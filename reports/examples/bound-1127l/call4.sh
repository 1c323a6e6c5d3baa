#!/usr/bin/env bash
# Session l, call 4 (WANT=H200; H100's counterpart was call 2): build every target, the suite's softmax_topk GPU
# tests, the default run (the board's baseline), then as far as the call's time allows the adversarial
# selection's 16-bit K <= 32 cases at 4096 x 50257 for fused_bound, fused_stream and fused_stream_resample.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
if ! scripts/build.sh > /tmp/build.log 2>&1; then tail -30 /tmp/build.log; echo "BUILD FAILED"; exit 1; fi
echo "build $(el) s"
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "tests rc=$? $(el) s: $(tail -3 $O/tests-softmax_topk.txt | tr '\n' ' ')"
label=$(grep -oiE 'h100|h200' $O/gpu.txt | head -1 | tr 'A-Z' 'a-z')
timeout $(( 560 - $(el) )) build-gpu/fusebench run --json $O/${label:-gpu}.json > $O/run.txt 2> $O/run.err
echo "run rc=$? $(el) s"; tail -2 $O/run.err
f=$O/${label:-gpu}.json; [ -f $f ] && [ $(stat -c %s $f) -gt 15000000 ] && gzip -f $f
grep -E "fail" $O/run.txt | head; grep -E "fused_bound|fused_stream " $O/run.txt | grep -v skipped | grep -v " - " | head -20
left=$(( 585 - $(el) ))
if [ $left -gt 40 ]; then
  timeout $left build-gpu/fusebench run --suite softmax_topk_adversarial --dtype bf16,fp16 \
    --variant fused_bound,fused_stream,fused_stream_resample \
    --case "4096x50257:K10:,4096x50257:K16:,4096x50257:K24:,4096x50257:K32:" \
    --json $O/adversarial-k32.json > $O/adversarial-k32.txt 2>> $O/run.err
  echo "adversarial rc=$? $(el) s"
fi
