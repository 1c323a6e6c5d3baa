#!/usr/bin/env bash
# Session l, call 7 (either board): build, then the GPU tests beyond [gpu][softmax_topk] that the session's
# changes reach: [gpu][seeds] (the real variants of every default suite over 100 fresh seeds: false
# failures, now with fused_bound and the compensated sums) and [gpu][mutants] (each mutant flagged by its
# check, the controls passing), then every other [gpu] test case as far as the call's time allows.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
if ! FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > /tmp/build.log 2>&1; then tail -30 /tmp/build.log; echo "BUILD FAILED"; exit 1; fi
echo "build $(el) s"
timeout 200 build-gpu/fusebench_tests "[gpu][seeds]" > $O/tests-seeds.txt 2>&1
echo "seeds rc=$? $(el) s: $(tail -3 $O/tests-seeds.txt | tr '\n' ' ')"
timeout 120 build-gpu/fusebench_tests "[gpu][mutants]" > $O/tests-mutants.txt 2>&1
echo "mutants rc=$? $(el) s: $(tail -3 $O/tests-mutants.txt | tr '\n' ' ')"
left=$(( 580 - $(el) ))
[ $left -gt 30 ] && timeout $left build-gpu/fusebench_tests "[gpu]~[seeds]~[mutants]~[softmax_topk]" > $O/tests-rest.txt 2>&1
echo "rest rc=$? $(el) s: $(tail -3 $O/tests-rest.txt | tr '\n' ' ')"
grep -E "FAILED|^-{5,}$" -A3 $O/tests-*.txt | grep -v "^--$" | head -20
