#!/usr/bin/env bash
# Session j, call 1: the full build in the background (the board's confirm run of HEAD: [gpu][ceilings] and
# the default run), meanwhile fused_resident's probe (kernels/softmax_topk/probes/resident_check.cu) built
# and run: correctness against a CPU top-K on every input kind and awkward shape, compute-sanitizer on a
# small case, then timings at 4096 rows. WANT=H200 / H100 to require a board; exits 3 when another came.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee $O/gpu.txt
WANT=${WANT:-$(grep -o 'H[12]00' $O/gpu.txt | head -1)}
grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }
lc=$(echo "$WANT" | tr A-Z a-z)
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
(FUSEBENCH_TARGETS="fusebench fusebench_tests" nice scripts/build.sh > $O/build.log 2>&1; echo $? > /tmp/build.rc) &
nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. kernels/softmax_topk/probes/resident_check.cu -o /tmp/rc > $O/probe.txt 2>&1 || { cat $O/probe.txt; echo PROBE BUILD FAILED; }
echo "probe built $(el) s"
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 10 256 1024; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned; do
    timeout 60 /tmp/rc $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 1003 1003" "6 4099 1" "6 9000 600" "3 5000 1000" "7 53248 1024" "2 53248 50" "9 17 16" "130 300 3"; do
    timeout 60 /tmp/rc $ty $s random >> $P 2>&1 || echo "rc=$? $ty $s" >> $P
    timeout 60 /tmp/rc $ty $s misaligned >> $P 2>&1 || echo "rc=$? $ty $s misaligned" >> $P; done
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"
timeout 120 compute-sanitizer --tool memcheck /tmp/rc bf16 300 9000 600 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 120 compute-sanitizer --tool synccheck /tmp/rc bf16 300 5000 1000 ascending >> $O/sanitizer.txt 2>&1; echo "synccheck rc=$? $(tail -1 $O/sanitizer.txt)"
T=$O/timing.txt
for ty in bf16 f16; do for K in 10 64 256 1024; do /tmp/rc $ty 4096 50257 $K random >> $T 2>&1; done; done
for K in 10 256 1024; do /tmp/rc bf16 4096 32000 $K random >> $T 2>&1; done
for K in 10 256; do for k in ascending descending all_equal ties cluster256 masked nan misaligned; do /tmp/rc bf16 4096 50257 $K $k >> $T 2>&1; done; done
echo "timings $(el) s"; grep -o "RES.*" $T | sed 's/(.*)//' 
while [ ! -f /tmp/build.rc ]; do sleep 2; done
[ "$(cat /tmp/build.rc)" = 0 ] || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
build-gpu/fusebench_tests "[gpu][ceilings]" > $O/tests.txt 2>&1; echo "ceiling tests rc=$? ($(el) s)"; tail -2 $O/tests.txt
build-gpu/fusebench run --json $O/$lc.json > $O/run.txt 2>$O/run.err; echo "run rc=$? ($(el) s)"
tail -1 $O/run.txt
gzip -f $O/$lc.json $O/run.txt; rm -f $O/build.log
echo "done ($(el) s)"
