#!/usr/bin/env bash
# kva3 call 2: c1_n144_thirds (options.thirds_ahead) against c1_n144_overlap on kv_a, same binary,
# two suite runs; the exact kernel test and "[fp8]"; then both configurations with a 5-stage
# 144-wide ring (relink.py, its own folder).
set -uo pipefail
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
finish() { tar -C $OUT -czf $OUT/call2.tgz r; rm -rf $R; }
trap finish EXIT
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
head -2 .fusebench-commit | tee $R/commit.txt
scripts/build.sh > $R/build.log 2>&1 || { tail -40 $R/build.log; exit 1; }
echo "build $(el) s"
B=$FUSEBENCH_BUILD_DIR
cuobjdump -res-usage $B/CMakeFiles/fusebench_kernels.dir/kernels/fp8/gemm_wgmma.cu.o 2>/dev/null | grep -A1 'Li144ELi4ELi1ELb1ELb0ELi[03]ELi1ELb0E' > $R/res.txt
timeout 90 $B/fusebench_tests "fp8_gemm wgmma: exact*" > $R/exact.txt 2>&1; echo "exact rc=$? $(el) s: $(tail -2 $R/exact.txt | tr '\n' ' ')"
suite() {  # $1 binary, $2 tag
  timeout 120 $1 run --suite fp8_gemm --full --case kv_a --config c1_n144_overlap,c1_n144_thirds --no-counters --time-budget 0.25 \
    --json $R/$2.json > $R/$2.txt 2> $R/$2.err
  echo "$2 rc=$? $(el) s:"; grep -E 'M4096|M8192' $R/$2.txt | grep -v " - " | awk -F'|' '{print $2,$4,$6,$10}' | tr -s ' '
}
suite $B/fusebench r1
suite $B/fusebench r2
python3 kva3-run/relink.py $B var-s5 -DFUSEBENCH_FP8_WGMMA_STAGES_N144=5 > $R/var-s5.log 2>&1 &
rl=$!
timeout 170 $B/fusebench_tests "[fp8]" > $R/tests-fp8.txt 2>&1; echo "[fp8] rc=$? $(el) s: $(tail -2 $R/tests-fp8.txt | tr '\n' ' ')"
wait $rl; tail -1 $R/var-s5.log
[ -x var-s5/fusebench ] && suite var-s5/fusebench s5
echo "done $(el) s"
