#!/usr/bin/env bash
# Device call 2 (helper tf32wg): build, per-configuration TF32 run, the whole conv1d suite at fp32,
# ncu kernel durations (operand preparation vs GEMM), GPU + CPU tests. At most 8 files under $OUT.
set -u
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
B=build-gpu
t0=$(date +%s)
FUSEBENCH_JOBS=16 FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $OUT/build.txt 2>&1
echo "build rc $? in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 200 $B/fusebench run --suite conv1d --case "dense:b8:512->512:L3000:s1,dense:b8:80->512:L3000:s1" --dtype fp32 \
  --variant naive,naive_tf32,implicit_gemm_tf32,wgmma_tma_tf32,cudnn_conv --no-counters --time-budget 0.3 \
  --json $OUT/tf32.json > $OUT/run.txt 2>&1
echo "run rc $? in $(( $(date +%s) - t0 )) s"
python3 probe/summary.py $OUT/tf32.json > $OUT/summary.txt 2>&1; cat $OUT/summary.txt | cut -c1-250
t0=$(date +%s)
timeout 120 ncu --target-processes all --kernel-name regex:"prepare_operands|conv1d_wgmma_tma_kernel|tg_conv_gelu" --launch-count 6 \
  --metrics gpu__time_duration.sum $B/fusebench run --suite conv1d --case "dense:b8:512->512:L3000:s1" --dtype fp32 \
  --variant wgmma_tma_tf32,implicit_gemm_tf32 --config split_chunk,split --verify-only --no-ceilings --no-isolation > $OUT/ncu.txt 2>&1
echo "ncu rc $? in $(( $(date +%s) - t0 )) s"; grep -E "prepare_operands|conv1d_wgmma_tma_kernel|tg_conv|gpu__time_duration" $OUT/ncu.txt | sed -E 's/\(.*//' | cut -c1-120 | head -24
t0=$(date +%s)
timeout 250 $B/fusebench run --suite conv1d --dtype fp32 --config split,split_chunk,split_chunk_s4,split_chunk_s7,coop,pingpong \
  --no-counters --time-budget 0.1 --json $OUT/full.json > $OUT/full.txt 2>&1
echo "full fp32 run rc $? in $(( $(date +%s) - t0 )) s"; grep -E "passed|fail " $OUT/full.txt | head -8
python3 probe/summary.py $OUT/full.json >> $OUT/summary.txt 2>&1
t0=$(date +%s)
timeout 200 $B/fusebench_tests '[gpu][conv1d],[tf32]' > $OUT/tests.txt 2>&1
echo "gpu tests rc $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/tests.txt
timeout 60 $B/fusebench_tests '[suites][conv1d]' >> $OUT/tests.txt 2>&1
echo "cpu tests rc $?"; tail -2 $OUT/tests.txt
