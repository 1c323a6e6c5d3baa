#!/usr/bin/env bash
# Session p, call 2 (either board; what it does depends on the board that came).
# H200: the baseline (scripts/gpu-check.sh, the default run, FUSEBENCH_SKIP_TESTS=1), then [gpu][softmax_topk],
#   the time_vs_random CLI test and session o's call 4 (the library's fused_stream_resample on every adversarial
#   kind at 4096 x 50257 K = 256, fp32 and bf16), from the same build.
# H100: the stash A/B (pr-1127o/call1.sh, PR_DEFINES below, trimmed cases, its tests from the base build), then the
#   default run of the base build (the library: the stash off) as the H100 baseline.
# Outputs under $OUT: gpu.txt, <board>.json, run.txt, summary.txt, logs.tgz (everything else).
set -uo pipefail
O=$OUT; R=$PWD; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
board=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | grep -oE 'h100|h200' | head -1)
echo "board: ${board:-unknown}"
# ONLY=h200 (call 3): any other board stops here (exit 3), before the build.
[ -n "${ONLY:-}" ] && [ "$board" != "$ONLY" ] && { echo "wanted $ONLY"; exit 3; }
if [ "$board" = h200 ]; then
  FUSEBENCH_SKIP_TESTS=1 FUSEBENCH_TARGETS="fusebench fusebench_tests" \
    FUSEBENCH_EXTRA="bash reports/examples/pr-1127p/extra.sh" bash scripts/gpu-check.sh > $O/check.txt 2>&1
  echo "gpu-check rc=$? $(el) s"; grep -E '^(build|fusebench run|extra)' $O/check.txt
  grep -E 'passed,' $O/run.txt | tail -2
  cat $O/extra.log
  cp $O/extra.log $O/summary.txt
elif [ "$board" = h100 ]; then
  WANT=H100 TESTS=1 EXTRA_TESTS="a run of an adversarial pair reports time_vs_random and prints it" \
    PR_DEFINES="-DFUSEBENCH_RESAMPLE_PARKED_EARLY=2 -DFUSEBENCH_RESAMPLE_EARLY_STASH=1" DTYPES="fp32 bf16 fp16" \
    CASES_fp32="K256:std1,K256:plateau,K64:std10" CASES_bf16="151936:K256:std1,151936:K256:plateau,K64:std10,K128:std10" \
    CASES_fp16="K64:std10" bash reports/examples/pr-1127o/call1.sh > $O/ab.txt 2>&1
  echo "a/b rc=$? $(el) s"; cat $O/ab.txt
  cp $O/ab-summary.txt $O/summary.txt 2>/dev/null
  build-gpu/fusebench run --json $O/h100.json > $O/run.txt 2> $O/run.err
  echo "default run rc=$? $(el) s"; grep -E 'passed,' $O/run.txt | tail -2
else
  echo "neither an H100 nor an H200: nothing run"; exit 3
fi
cd $O && tar czf logs.tgz $(ls | grep -vE '^(gpu.txt|h100.json|h200.json|run.txt|summary.txt|ab-json.tgz|logs.tgz)$') && \
  ls | grep -vE '^(gpu.txt|h100.json|h200.json|run.txt|summary.txt|ab-json.tgz|logs.tgz)$' | xargs rm -rf
ls -la $O
