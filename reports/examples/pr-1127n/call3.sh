#!/usr/bin/env bash
# Session n, call 3 (either board; WANT=H100 / H200 refuses the other): the library with the parked-sample route
# on for fp32 rows only (FUSEBENCH_RESAMPLE_PARKED_ROUTE=1, the default): [gpu][softmax_topk], then the
# adversarial selection's fp32 K = 256 std1 / plateau / ties / all_equal cases for fused_stream_resample at both
# V, then every other [gpu] test in the time left.
source reports/examples/pr-1127n/begin.sh
build_lib
timeout 200 $B/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "softmax tests rc=$? $(el) s: $(tail -n 2 $O/tests-softmax_topk.txt | tr '\n' ' ')"
timeout 150 $B/fusebench run --suite softmax_topk_adversarial --no-counters --dtype fp32 --variant fused_stream_resample \
  --case "K256:std1,K256:plateau,K256:ties,K256:all_equal" --json $O/adv-fp32-k256.json > $O/adv-fp32-k256.txt 2>&1
echo "adversarial rc=$? $(el) s: $(grep -E 'passed,' $O/adv-fp32-k256.txt | tail -1)"
left=$(( ${CUTOFF:-585} - $(el) ))
[ $left -gt 20 ] && timeout $left $B/fusebench_tests "[gpu]~[softmax_topk]" > $O/tests-rest.txt 2>&1
echo "rest rc=$? $(el) s: $(tail -n 2 $O/tests-rest.txt | tr '\n' ' ')"
grep -E "FAILED" -A3 $O/tests-*.txt | head -20
gzip -f $O/adv-fp32-k256.json
