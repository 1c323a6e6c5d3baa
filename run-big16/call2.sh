#!/bin/bash
# big16 call 2 (prepared, NOT RUN: big16's device share was spent on call 1). A/B on one board of
# (a) the sample-end L2 prefetch (FUSEBENCH_BIG_SAMPLE_PF = 12 / 24) and finish_by_bins' rank loop four
# keys a step (FUSEBENCH_BINS_RANK4 = 1) against the library's code (b0), probe builds of
# probes/stream_big_params.cu, each from a big_params_patch.py copy, and (b) host sample choices
# (P, by maxima or parked) with and without it; events, cold L2, median of 5 a run, two rounds
# interleaved binary by binary; indices compared within a binary against its cfg 0 (the library's).
# From the worktree root:  bash run-big16/call2.sh   (about 130 s of builds, ~150 s of runs)
set -u
[ -d scratch/wt-big16 ] && cd scratch/wt-big16
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=kernels/softmax_topk/probes
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I."
mkdir -p /tmp/bp && python3 $P/big_params_patch.py kernels/softmax_topk/fused_stream.cu /tmp/bp/fs_params.cu || exit 1
declare -A VAR=( [b0]="" [pf12]="-DFUSEBENCH_BIG_SAMPLE_PF=12" [pf24]="-DFUSEBENCH_BIG_SAMPLE_PF=24" [r4]="-DFUSEBENCH_BINS_RANK4=1" )
ORDER="b0 pf12 pf24 r4"
for v in $ORDER; do $NV -I/tmp/bp ${VAR[$v]} $P/stream_big_params.cu -o /tmp/bp_$v > /tmp/cc_$v.txt 2>&1 & done
wait; echo "built $(el) s"; for v in $ORDER; do [ -x /tmp/bp_$v ] || { echo "build $v failed"; tail -5 /tmp/cc_$v.txt; }; done
run() { # dtype V K configs...
  local ty=$1 V=$2 K=$3; shift 3
  for rd in 0 1; do for v in $ORDER; do
    [ $(el) -lt 480 ] && timeout 40 /tmp/bp_$v $ty 4096 $V $K 10 1 "$@" | sed "s/^RESULT/RESULT $v round$rd/"
  done; done
}
{
run bf16 50257 256 0:0:-1:0 13:0:1:0
run bf16 50257 128 0:0:-1:0 10:0:1:0
run bf16 50257 64 0:0:-1:0 4:0:1:0 10:0:1:0
run bf16 50257 33 0:0:-1:0 2:0:0:0 4:0:1:0
run f16 50257 256 0:0:-1:0
run f16 50257 64 0:0:-1:0 10:0:1:0
run f32 50257 256 0:0:-1:0 10:0:1:0
run bf16 151936 256 0:0:-1:0
run f32 50257 33 0:0:-1:0 2:0:0:0
run f16 50257 33 0:0:-1:0 2:0:0:0
} > $O/ab.txt 2>&1
echo "runs $(el) s"; grep RESULT $O/ab.txt | sed 's/, probabilities.*//'
