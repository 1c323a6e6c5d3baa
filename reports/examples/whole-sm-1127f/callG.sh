#!/usr/bin/env bash
# Call G: an H200 takes its baseline (callB.sh); an H100 builds the tests at HEAD and runs every GPU test
# but the extended seed sweep (the library's one-block-an-SM layout under every GPU test, not only
# [gpu][softmax_topk]).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  WANT=H200 exec bash reports/examples/whole-sm-1127f/callB.sh
fi
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
timeout 200 build-gpu/fusebench_tests "[gpu]~[seeds-extended]" --durations yes > $O/tests-gpu.txt 2>&1; echo "tests rc=$? ($(el) s)"
tail -n 4 $O/tests-gpu.txt
