#!/usr/bin/env bash
# Session j, call 5 (H100): the confirm run of the harness refactored after 1ea5da5 (f9e88b1; library
# unchanged since) on the other model: the build, [gpu][ceilings], the default run (the board's
# baseline). WANT=H100 / H200 to require a board; exits 3 when another came.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee $O/gpu.txt
WANT=${WANT:-$(grep -o 'H[12]00' $O/gpu.txt | head -1)}
grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }
lc=$(echo "$WANT" | tr A-Z a-z)
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"; rm -f $O/build.log
build-gpu/fusebench_tests "[gpu][ceilings]" > $O/tests.txt 2>&1; echo "ceiling tests rc=$? ($(el) s)"; tail -2 $O/tests.txt
build-gpu/fusebench run --json $O/$lc.json > $O/run.txt 2>$O/run.err; echo "run rc=$? ($(el) s)"
tail -1 $O/run.txt
gzip -f $O/$lc.json $O/run.txt
echo "done ($(el) s)"
