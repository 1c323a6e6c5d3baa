#!/bin/bash
# w16 call 2 -- NOT RUN by w16 (its device share was spent by call 1). For the lead: one board,
# stream_ab of main's fused_stream.cu (A) against this branch's (B), 4096 x 50257 std 10, K = 512 / 1024,
# bf16 / fp16 (fp32 K = 1024 as the unchanged check), two rounds; the full build of B, the suite's
# verification and timing of B, and `fusebench_tests "[gpu][softmax_topk]"` on B.
# Before: git show main:kernels/softmax_topk/fused_stream.cu > run-w16/fused_stream_main.cu (untracked),
# scripts/stamp-commit.sh; run from /work/main with carry ["scratch/wt-w16"] and
# command `cd scratch/wt-w16 && bash run-w16/call2.sh`.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I."
P=kernels/softmax_topk/probes
mkdir -p /tmp/A && cp -r kernels /tmp/A/ && cp run-w16/fused_stream_main.cu /tmp/A/kernels/softmax_topk/fused_stream.cu
(cd /tmp/A && $NV $P/stream_ab.cu -o /tmp/ab_A > /tmp/cc_A.txt 2>&1) & PA=$!
$NV $P/stream_ab.cu -o /tmp/ab_B > /tmp/cc_B.txt 2>&1 & PB=$!
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_JOBS=14
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; echo BUILD FAILED; }
echo "build $(el) s"
wait $PA $PB; echo "probes compiled $(el) s"; for v in A B; do [ -x /tmp/ab_$v ] || { echo "compile $v failed"; tail -5 /tmp/cc_$v.txt; }; done
mkdir -p /tmp/ref
for rd in 1 2; do
  for c in "bf16 4096 50257 1024 10" "f16 4096 50257 1024 10" "bf16 4096 50257 512 10" "f16 4096 50257 512 10" "f32 4096 50257 1024 10"; do
    for v in A B; do [ $(el) -lt 330 ] && timeout 30 /tmp/ab_$v $c $v /tmp/ref; done
  done
done > $O/ab.txt 2>&1
echo "ab done $(el) s"; grep AB $O/ab.txt
FB=build-gpu/fusebench
[ -x $FB ] && timeout 150 $FB run --suite softmax_topk_adversarial --case "4096x50257:K512:,4096x50257:K1024:" --variant fused_stream \
  --dtype fp32,bf16,fp16 --time-budget 0.1 --no-counters --seed 2211 --json $O/suite_B.json > $O/suite_B.txt 2> /tmp/suite.err
echo "suite rc=$? $(el) s"; tail -3 /tmp/suite.err
[ -x build-gpu/fusebench_tests ] && (cd build-gpu && timeout $(( 560 - $(el) )) ./fusebench_tests "[gpu][softmax_topk]" > $O/tests_B.txt 2>&1; echo "tests rc=$? $(el) s"; tail -3 $O/tests_B.txt)
gzip -f $O/suite_B.json 2>/dev/null; echo "end $(el) s"
