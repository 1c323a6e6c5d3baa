#!/usr/bin/env bash
# GeGLU erf at 16 bits with gelu_erf_16 (kernels/common/gelu.cuh): the probe A/B against erfcf on one
# board, the GLU GPU tests, the glu suite (report), on whichever board comes (WANT=H200 to require one).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ]; then grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }; fi
nvcc -O3 -std=c++20 -arch=sm_90 -I. kernels/glu/probes/gelu_ab.cu -o /tmp/gelu_ab && /tmp/gelu_ab > $O/ab.txt 2>&1; echo "probe rc=$? ($(el) s)"; cat $O/ab.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench_tests "[glu]" > $O/tests.txt 2>&1; echo "tests rc=$? ($(el) s) $(tail -2 $O/tests.txt | tr '\n' ' ')"
build-gpu/fusebench run --suite glu --json $O/glu.json > $O/glu.txt 2>$O/glu.err; echo "run rc=$? ($(el) s)"
grep -E "erf|passed" $O/glu.txt | grep -E "4096x14336|passed" | head -20
gzip -f $O/glu.json
