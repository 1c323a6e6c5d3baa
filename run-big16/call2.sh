#!/bin/bash
# big16 call 2 (prepared, NOT RUN: big16's device share was spent by call 1). One board:
# (a) kernel knobs, off in the library, through probes/stream_ab.cu (the library's launcher built with
#     -D knobs; events, cold L2, median of 5; indices compared with the first variant's output, b0 =
#     the library's code, which writes the reference): pf12 / pf24 = FUSEBENCH_BIG_SAMPLE_PF (phase 1's
#     first steps asked of L2 at the sample's end), seed = FUSEBENCH_BIG_SEED (16-bit parked sample /
#     in-order pass seeded from its first batch), r4 = FUSEBENCH_BINS_RANK4 (finish_by_bins' rank loop
#     four keys a step), two rounds interleaved variant by variant;
# (b) host sample choices through probes/stream_big_params.cu (library kernels; P = 2 at K = 33 etc.).
# From the repository root (main's checkout with scratch/wt-big16 carried, or the worktree itself):
#   bash run-big16/call2.sh     (about 130 s of parallel builds, ~150 s of runs)
set -u
[ -d scratch/wt-big16 ] && cd scratch/wt-big16
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=kernels/softmax_topk/probes
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I."
declare -A VAR=( [b0]="" [pf12]="-DFUSEBENCH_BIG_SAMPLE_PF=12" [pf24]="-DFUSEBENCH_BIG_SAMPLE_PF=24"
                 [seed]="-DFUSEBENCH_BIG_SEED=1" [r4]="-DFUSEBENCH_BINS_RANK4=1" )
ORDER="b0 pf12 pf24 seed r4"
for v in $ORDER; do $NV ${VAR[$v]} $P/stream_ab.cu -o /tmp/ab_$v > /tmp/cc_$v.txt 2>&1 & done
mkdir -p /tmp/bp && python3 $P/big_params_patch.py kernels/softmax_topk/fused_stream.cu /tmp/bp/fs_params.cu && \
  $NV -I/tmp/bp $P/stream_big_params.cu -o /tmp/bpb > /tmp/cc_bp.txt 2>&1 &
wait; echo "built $(el) s"
for v in $ORDER; do [ -x /tmp/ab_$v ] || { echo "build $v failed"; tail -5 /tmp/cc_$v.txt; }; done
[ -x /tmp/bpb ] || tail -5 /tmp/cc_bp.txt
mkdir -p /tmp/ref
ab() { # dtype V K: two rounds, every variant
  for rd in 0 1; do for v in $ORDER; do
    [ $(el) -lt 470 ] && timeout 30 /tmp/ab_$v $1 4096 $2 $3 10 $v /tmp/ref
  done; done
}
{
ab bf16 50257 64
ab bf16 50257 256
ab bf16 50257 128
ab bf16 50257 33
ab f16 50257 64
ab f16 50257 256
ab f32 50257 256
ab bf16 151936 256
ab f32 50257 64
} > $O/ab.txt 2>&1
echo "ab $(el) s"
{
[ $(el) -lt 500 ] && timeout 30 /tmp/bpb bf16 4096 50257 33 10 2 0:0:-1:0 2:0:0:0
[ $(el) -lt 510 ] && timeout 30 /tmp/bpb f16 4096 50257 33 10 2 0:0:-1:0 2:0:0:0
[ $(el) -lt 520 ] && timeout 30 /tmp/bpb f32 4096 50257 33 10 2 0:0:-1:0 2:0:0:0
[ $(el) -lt 530 ] && timeout 30 /tmp/bpb bf16 4096 50257 64 10 2 0:0:-1:0 10:0:1:0
} > $O/params.txt 2>&1
echo "params $(el) s"
grep '^AB' $O/ab.txt; grep RESULT $O/params.txt | sed 's/, probabilities.*//'
