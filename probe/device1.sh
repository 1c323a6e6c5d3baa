#!/usr/bin/env bash
# Device call 1 (helper tf32wg): build, the TF32 run, bf16 wgmma_tma regression check, GPU + CPU tests.
set -u
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
B=build-gpu
t0=$(date +%s)
FUSEBENCH_JOBS=16 FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $OUT/build.txt 2>&1
echo "build rc $? in $(( $(date +%s) - t0 )) s"; grep -E "error|C7514|spill" $OUT/build.txt | head -5
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 200 $B/fusebench run --suite conv1d --case "dense:b8:512->512:L3000:s1,dense:b8:80->512:L3000:s1" --dtype fp32 \
  --variant naive,naive_tf32,implicit_gemm_tf32,wgmma_tma_tf32,cudnn_conv --no-counters --time-budget 0.2 \
  --json $OUT/tf32.json > $OUT/run.txt 2> $OUT/run.err
echo "run rc $? in $(( $(date +%s) - t0 )) s"; tail -5 $OUT/run.err
t0=$(date +%s)
timeout 100 $B/fusebench run --suite conv1d --case "dense:b8:512->512:L3000:s1" --dtype bf16 --variant naive,wgmma_tma \
  --no-counters --no-ceilings --time-budget 0.2 --json $OUT/bf16.json > $OUT/run16.txt 2> $OUT/run16.err
echo "bf16 run rc $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 240 $B/fusebench_tests '[gpu][conv1d],[tf32]' > $OUT/tests.txt 2>&1
echo "gpu tests rc $? in $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests.txt
t0=$(date +%s)
timeout 60 $B/fusebench_tests '[suites][conv1d]' > $OUT/tests-cpu.txt 2>&1
echo "cpu tests rc $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/tests-cpu.txt
grep -E "FAILED|failed" $OUT/tests.txt | head -10
