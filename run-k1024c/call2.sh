#!/bin/bash
# k1024c call 2 (one board): build B (this branch), suite B, then the GPU tests on B while A (main's
# fused_stream.cu) is rebuilt, suite A, and a repeat of B's fp32 K = 1024 if time is left.
# run-k1024c/fused_stream_main.cu (not committed) = `git show 1b4e9e1:kernels/softmax_topk/fused_stream.cu`.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_JOBS=16
FS=kernels/softmax_topk/fused_stream.cu
FB=build-gpu/fusebench
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > /tmp/buildB.log 2>&1 || { tail -40 /tmp/buildB.log; echo BUILD B FAILED; exit 1; }
echo "build B $(el) s"
suite() { # name, cases
  timeout 150 $FB run --suite softmax_topk_adversarial --case "$2" --variant fused_stream,fused_stream_resample \
    --dtype fp32,bf16,fp16 --time-budget 0.1 --no-counters --seed 2211 --json $O/suite_$1.json > $O/suite_$1.txt 2> /tmp/suite_$1.err
  echo "suite $1 rc=$? $(el) s"; tail -2 /tmp/suite_$1.err
}
CASES="4096x50257:K512:,4096x50257:K1024:"
suite B $CASES
cp $FS /tmp/fs_B.cu; cp run-k1024c/fused_stream_main.cu $FS
(cd build-gpu && timeout 220 ./fusebench_tests "[gpu][softmax_topk]" > $O/tests_B.txt 2>&1; echo "tests rc=$?" >> $O/tests_B.txt) &
TP=$!
FUSEBENCH_TARGETS="fusebench" scripts/build.sh > /tmp/buildA.log 2>&1 || { tail -20 /tmp/buildA.log; echo BUILD A FAILED; }
echo "build A $(el) s"
wait $TP; echo "tests done $(el) s"; tail -3 $O/tests_B.txt
suite A $CASES
cp /tmp/fs_B.cu $FS
if [ $(el) -lt 400 ]; then
  FUSEBENCH_TARGETS="fusebench" scripts/build.sh > /tmp/buildB2.log 2>&1 && echo "rebuild B $(el) s" && \
  [ $(el) -lt 480 ] && suite B2 "4096x50257:K1024:"
fi
cd $O && for f in suite_*.json; do gzip -f $f; done
for f in $O/suite_*.txt; do echo "== $f"; cut -c1-200 $f | grep -E "fused_stream|pass|fail|FAIL" | head -20; done
