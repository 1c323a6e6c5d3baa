#!/bin/bash
# k1024b call 3: the final code: build, GPU tests [gpu][softmax_topk], suite K = 512 / 1024.
set -u
O=${OUT:-/tmp/out}
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
t0=$(date +%s)
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $O/gpu.txt
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
B=$FUSEBENCH_BUILD_DIR
timeout 240 $B/fusebench_tests "[gpu][softmax_topk]" > $O/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s" >> $O/gpu.txt
timeout 150 $B/fusebench run --suite softmax_topk_adversarial --case "4096x50257:K512:,4096x50257:K1024:" --variant naive,fused_stream,fused_stream_resample --dtype fp32,bf16,fp16 --time-budget 0.1 --json $O/suite.json > $O/suite.txt 2>$O/suite.err; echo "suite rc=$? $(( $(date +%s) - t0 )) s" >> $O/gpu.txt
gzip -f $O/suite.json
cat $O/gpu.txt; tail -4 $O/tests.txt; cut -c1-190 $O/suite.txt
