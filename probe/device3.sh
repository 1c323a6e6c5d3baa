#!/usr/bin/env bash
# Device call 3 (helper tf32wg): the final configurations (split_chunk default, split): build, the
# two target cases, ncu durations of split_chunk's two kernels, GPU + CPU tests.
set -u
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
B=build-gpu
t0=$(date +%s)
FUSEBENCH_JOBS=16 FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $OUT/build.txt 2>&1
echo "build rc $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 150 $B/fusebench run --suite conv1d --case "dense:b8:512->512:L3000:s1,dense:b8:80->512:L3000:s1" --dtype fp32 \
  --variant naive,naive_tf32,implicit_gemm_tf32,wgmma_tma_tf32,cudnn_conv --no-counters --time-budget 0.3 \
  --json $OUT/tf32-final.json > $OUT/run.txt 2>&1
echo "run rc $? in $(( $(date +%s) - t0 )) s"
python3 probe/summary.py $OUT/tf32-final.json > $OUT/summary.txt 2>&1; cut -c1-200 $OUT/summary.txt
timeout 90 ncu --target-processes all --kernel-name regex:"prepare_operands|conv1d_wgmma_tma_kernel" --launch-count 4 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum $B/fusebench run --suite conv1d --case "dense:b8:512->512:L3000:s1" --dtype fp32 \
  --variant wgmma_tma_tf32 --config split_chunk --verify-only --no-ceilings --no-isolation > $OUT/ncu.txt 2>&1
echo "ncu rc $?"; grep -E "prepare_operands|conv1d_wgmma_tma_kernel|gpu__time|dram__" $OUT/ncu.txt | sed -E 's/\(.*//' | cut -c1-110
t0=$(date +%s)
timeout 150 $B/fusebench_tests '[gpu][conv1d],[tf32]' > $OUT/tests.txt 2>&1
echo "gpu tests rc $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/tests.txt
timeout 60 $B/fusebench_tests '[suites][conv1d]' >> $OUT/tests.txt 2>&1
echo "cpu tests rc $?"; tail -2 $OUT/tests.txt
