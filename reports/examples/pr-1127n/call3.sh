#!/usr/bin/env bash
# Session n, call 3 (either board; WANT=H100 / H200 refuses the other): the library with the parked-sample route
# on for fp32 rows only (FUSEBENCH_RESAMPLE_PARKED_ROUTE=1, the default): [gpu][softmax_topk], then the
# adversarial selection's fp32 K = 256 std1 / plateau / ties / all_equal cases for fused_stream_resample at both
# V, then every other [gpu] test in the time left.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -qi "$WANT" $O/gpu.txt; then echo "wanted $WANT"; exit 3; fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
scripts/build.sh > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(el) s"
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "softmax tests rc=$? $(el) s: $(tail -n 2 $O/tests-softmax_topk.txt | tr '\n' ' ')"
timeout 150 build-gpu/fusebench run --suite softmax_topk_adversarial --no-counters --dtype fp32 --variant fused_stream_resample \
  --case "K256:std1,K256:plateau,K256:ties,K256:all_equal" --json $O/adv-fp32-k256.json > $O/adv-fp32-k256.txt 2>&1
echo "adversarial rc=$? $(el) s: $(grep -E 'passed,' $O/adv-fp32-k256.txt | tail -1)"
left=$(( ${CUTOFF:-585} - $(el) ))
[ $left -gt 20 ] && timeout $left build-gpu/fusebench_tests "[gpu]~[softmax_topk]" > $O/tests-rest.txt 2>&1
echo "rest rc=$? $(el) s: $(tail -n 2 $O/tests-rest.txt | tr '\n' ' ')"
grep -E "FAILED" -A3 $O/tests-*.txt | head -20
gzip -f $O/adv-fp32-k256.json
