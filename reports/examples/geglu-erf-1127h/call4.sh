#!/usr/bin/env bash
# [gpu][seeds] at HEAD (100 fresh seeds of the default suites' real variants, glu's 16-bit erf form
# included) on whichever board comes; progress every 10 seeds.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $O/gpu.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench_tests "[gpu][seeds]" > $O/seeds.txt 2>&1; echo "seeds rc=$? ($(el) s)"; tail -4 $O/seeds.txt
