#!/usr/bin/env bash
# gelu_erf_16 in GLU and in conv1d's fused 16-bit epilogues (and the cuDNN peer's epilogue): the GLU
# probe A/B, the GLU and conv1d GPU tests, the glu and conv1d suites (reports), on whichever board comes.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ]; then grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }; fi
nvcc -O3 -std=c++20 -arch=sm_90 -I. kernels/glu/probes/gelu_ab.cu -o /tmp/gelu_ab && /tmp/gelu_ab > $O/ab.txt 2>&1; echo "probe rc=$? ($(el) s)"; grep -v round $O/ab.txt; grep "round" $O/ab.txt | awk '{print $1, $3, $6}' | sort | uniq -c | head
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench_tests "[glu],[conv1d]" > $O/tests.txt 2>&1; echo "tests rc=$? ($(el) s) $(tail -2 $O/tests.txt | tr '\n' ' ')"
build-gpu/fusebench run --suite glu,conv1d --json $O/run.json > $O/run.txt 2>$O/run.err; echo "run rc=$? ($(el) s)"
grep -E "geglu_erf:4096x14336|dense:b8:512->512|dense:b8:80->512|passed" $O/run.txt | head -40
gzip -f $O/run.json
