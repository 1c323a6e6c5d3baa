#!/usr/bin/env bash
# The probe with the harness's cold-L2 scrub (write, then read), the library build, the conv1d dense
# targets' selection (bf16 epilogue changed), then the default run (the board's baseline: glu changed).
# WANT=H200 / H100 to require a board; exits 3 when another came.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $O/gpu.txt
WANT=${WANT:-$(grep -o 'H[12]00' $O/gpu.txt | head -1)}
grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }
lc=$(echo "$WANT" | tr A-Z a-z)
nvcc -O3 -std=c++20 -arch=sm_90 -I. kernels/glu/probes/gelu_ab.cu -o /tmp/gelu_ab && /tmp/gelu_ab > $O/ab.txt 2>&1; echo "probe rc=$? ($(el) s)"; grep -v round $O/ab.txt; grep round $O/ab.txt | awk '{print $1, $3, $7}'
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench run --suite conv1d --case "dense:b8:512->512,dense:b8:80->512" --json $O/conv.json > $O/conv.txt 2>$O/conv.err; echo "conv rc=$? ($(el) s)"
grep -E "dense:b8:(512->512|80->512):L3000:s1 " $O/conv.txt | head -30
build-gpu/fusebench run --json $O/$lc.json > $O/run.txt 2>$O/run.err; echo "run rc=$? ($(el) s)"
tail -1 $O/run.txt
gzip -f $O/$lc.json $O/run.txt $O/conv.json
