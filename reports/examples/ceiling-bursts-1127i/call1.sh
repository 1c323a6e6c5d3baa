#!/usr/bin/env bash
# The tensor-core ceilings in idle-gap bursts (harness/ceilings.hpp burst_schedule): the build, the
# ceilings' GPU tests and the conv1d automatic-schedule GPU test, the default run (the board's baseline), then two small runs right after it on
# the warm board, whose reports carry only the ceilings and one rmsnorm case (the ceilings' spread
# between runs). WANT=H200 / H100 to require a board; exits 3 when another came.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee $O/gpu.txt
WANT=${WANT:-$(grep -o 'H[12]00' $O/gpu.txt | head -1)}
grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }
lc=$(echo "$WANT" | tr A-Z a-z)
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench_tests "[gpu][ceilings]" > $O/tests.txt 2>&1; echo "ceiling tests rc=$? ($(el) s)"; tail -3 $O/tests.txt
build-gpu/fusebench_tests "conv1d wgmma_tma: a launch without a schedule*" >> $O/tests.txt 2>&1; echo "conv1d auto test rc=$? ($(el) s)"; tail -3 $O/tests.txt
build-gpu/fusebench run --json $O/$lc.json > $O/run.txt 2>$O/run.err; echo "run rc=$? ($(el) s)"
tail -1 $O/run.txt
for i in 1 2; do
  build-gpu/fusebench run --suite rmsnorm --case 1x16384 --dtype fp32 --variant naive --no-counters --json /tmp/after$i.json > /dev/null 2>&1
  python3 - /tmp/after$i.json $i <<'PY' | tee -a $O/ceilings-after.txt
import json, sys
c = json.load(open(sys.argv[1]))["ceilings"]
for k in ("bf16_tflops", "fp16_tflops", "fp8_tflops", "copy_gbps"):
    m = c[k]
    print(f"after-run {sys.argv[2]} {k}: {m['value']:.1f} {m['unit']} noise {m['noise']:.4f} samples {m['samples']} clock {m['sm_clock_mhz_after']}")
PY
done
echo "done ($(el) s)"
gzip -f $O/$lc.json $O/run.txt
