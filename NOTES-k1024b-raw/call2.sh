#!/bin/bash
# k1024b call 2: library build + GPU tests + suite (K = 512 / 1024) + probe A/B (wide kernel, batching, old params) + timeline.
set -u
O=${OUT:-/tmp/out}
P=kernels/softmax_topk/probes
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
t0=$(date +%s)
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader
(FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1; echo "build rc=$?" > $O/build.rc) &
mkdir -p /tmp/bp /tmp/tl
python3 $P/big_params_patch.py kernels/softmax_topk/fused_stream.cu /tmp/bp/fs_params.cu || exit 1
python3 $P/big_timeline_patch.py kernels/softmax_topk/fused_stream.cu /tmp/tl/a.cu || exit 1
python3 $P/big_params_patch.py /tmp/tl/a.cu /tmp/tl/fs_tl.cu || exit 1
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I."
$NV -I/tmp/bp $P/stream_big_params.cu -o /tmp/sbpW > $O/ccW.txt 2>&1 &
$NV -DFUSEBENCH_STREAM_WIDE=0 -I/tmp/bp $P/stream_big_params.cu -o /tmp/sbp0 > $O/cc0.txt 2>&1 &
$NV -DFUSEBENCH_FINISH_WIDE_BATCH=1 -I/tmp/bp $P/stream_big_params.cu -o /tmp/sbpB1 > $O/ccB1.txt 2>&1 &
$NV -DFUSEBENCH_STREAM_WIDE_MINB=2 -I/tmp/bp $P/stream_big_params.cu -o /tmp/sbpW2 > $O/ccW2.txt 2>&1 &
$NV -DBIG_PARAMS -I/tmp/tl $P/stream_big_timeline.cu -o /tmp/tlb > $O/cctl.txt 2>&1 &
wait
cat $O/build.rc; echo "compile+build $(( $(date +%s) - t0 )) s"; tail -3 $O/build.log
{
for rd in 0 1; do
 for b in sbp0 sbpB1 sbpW sbpW2; do
  echo "== $b round $rd"
  /tmp/$b f32 4096 50257 1024 10 1 0:0:-1:0 40:64:1:1152
  /tmp/$b f32 4096 50257 512 10 1 0:0:-1:0 20:64:1:640
  /tmp/$b bf16 4096 50257 1024 10 1 0:0:-1:0 40:64:1:1280
  /tmp/$b bf16 4096 50257 512 10 1 0:0:-1:0 20:64:1:768
  /tmp/$b f16 4096 50257 1024 10 1 0:0:-1:0 40:64:1:1280
  /tmp/$b f16 4096 50257 512 10 1 0:0:-1:0 20:64:1:768
 done
done
} > $O/ab.txt 2>&1
echo "ab done $(( $(date +%s) - t0 )) s"
/tmp/tlb f32 4096 50257 1024 10 > $O/tl_f32_1024.txt 2>&1
/tmp/tlb bf16 4096 50257 1024 10 > $O/tl_bf16_1024.txt 2>&1
B=$FUSEBENCH_BUILD_DIR
timeout 240 $B/fusebench_tests "[gpu][softmax_topk]" > $O/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $O/tests.txt
timeout 150 $B/fusebench run --suite softmax_topk_adversarial --case "4096x50257:K512:,4096x50257:K1024:" --variant naive,fused_stream,fused_stream_resample --dtype fp32,bf16,fp16 --time-budget 0.1 --json $O/suite.json > $O/suite.txt 2>$O/suite.err; echo "suite rc=$? $(( $(date +%s) - t0 )) s"
cat $O/suite.txt | cut -c1-200
grep RESULT $O/ab.txt | sed 's/RESULT //; s/ x 50257//; s/ indices differ from cfg 0, probabilities within/ idx-diff, p-rel/'
for f in $O/tl_*.txt; do echo "== $f"; grep -v "^with" $f | sed -n '1,2p;10,20p'; done
