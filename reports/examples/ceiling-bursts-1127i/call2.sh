#!/usr/bin/env bash
# Issue 19's kv_a against the FP8 ceiling taken in idle-gap bursts: the fusebench build, then
# `--suite fp8_gemm --full --case kv_a --config c1_n144_overlap` (the default configuration; naive
# and cuBLASLt beside it). WANT=H100 / H200 to require a board; exits 3 when another came.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee $O/gpu.txt
WANT=${WANT:-$(grep -o 'H[12]00' $O/gpu.txt | head -1)}
grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench run --suite fp8_gemm --full --case kv_a --config c1_n144_overlap --no-counters --json $O/kva.json > $O/kva.txt 2>$O/kva.err
echo "kv_a rc=$? ($(el) s)"; grep -E "naive|cublaslt|wgmma" $O/kva.txt; tail -1 $O/kva.txt
python3 -c "
import json; c=json.load(open('$O/kva.json'))['ceilings']['fp8_tflops']; print('fp8 ceiling', round(c['value'],1), 'clock', c['sm_clock_mhz_after'], 'noise', c['noise'])"
gzip -f $O/kva.json
