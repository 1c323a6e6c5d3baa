#!/usr/bin/env bash
# Session 10 first call (H200): L2 prefetch A/B, then build + [gpu] tests.
set -uo pipefail
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
name=$(nvidia-smi --query-gpu=name,uuid --format=csv,noheader | head -1); echo "board: $name"
OUT=$OUT bash kernels/softmax_topk/probes/l2pf_ab.sh > $OUT/l2pf-run.txt 2>&1; echo "l2pf done $(el) s"; tail -14 $OUT/l2pf-run.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_JOBS=16 FUSEBENCH_TARGETS="fusebench fusebench_tests"
scripts/build.sh > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; echo BUILD FAILED; exit 1; }; echo "build $(el) s"
grep -i zlib $OUT/build.log | head -3
cd build-gpu && timeout $(( 570 - $(el) )) ./fusebench_tests "[gpu]" --reporter compact > $OUT/gpu-tests.txt 2>&1
echo "tests rc=$? $(el) s"; tail -4 $OUT/gpu-tests.txt
