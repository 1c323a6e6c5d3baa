#!/usr/bin/env bash
# Session r, call 3 (the H200): the baseline of this commit on the board that comes (scripts/gpu-check.sh, the
# default run, FUSEBENCH_SKIP_TESTS=1), then extra.sh from the same build.
set -uo pipefail
FUSEBENCH_SKIP_TESTS=1 FUSEBENCH_TARGETS="fusebench fusebench_tests" \
  FUSEBENCH_EXTRA="bash reports/examples/pr-1128q/extra.sh" bash scripts/gpu-check.sh > $OUT/check.txt 2>&1
echo "gpu-check rc=$?"; grep -E '^(build|fusebench run|extra)' $OUT/check.txt
grep -E 'passed,' $OUT/run.txt | tail -1
cat $OUT/extra.log
ls -la $OUT
cd $OUT && keep='^(gpu.txt|h100.json|h200.json|h100.json.gz|h200.json.gz|run.txt|extra.log|k256.json.gz|k256.txt|tests-softmax_topk.txt|logs.tgz)$' && \
  tar czf logs.tgz $(ls | grep -vE "$keep") && ls | grep -vE "$keep" | xargs rm -rf
ls -la $OUT
