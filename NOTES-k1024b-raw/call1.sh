#!/bin/bash
# k1024b call 1: K > 256 host-parameter sweep, an L2 prefetch variant, timelines.
set -u
O=${OUT:-/tmp/out}
P=kernels/softmax_topk/probes
mkdir -p /tmp/bp /tmp/tl /tmp/pf1 /tmp/pf2
python3 $P/big_params_patch.py kernels/softmax_topk/fused_stream.cu /tmp/bp/fs_params.cu || exit 1
python3 run-k1024b/pf_patch.py /tmp/bp/fs_params.cu /tmp/pf1/fs_params.cu 1 || exit 1
python3 run-k1024b/pf_patch.py /tmp/bp/fs_params.cu /tmp/pf2/fs_params.cu 2 || exit 1
python3 $P/big_timeline_patch.py kernels/softmax_topk/fused_stream.cu /tmp/tl/a.cu || exit 1
python3 $P/big_params_patch.py /tmp/tl/a.cu /tmp/tl/fs_tl.cu || exit 1
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I."
t0=$(date +%s)
$NV -I/tmp/bp $P/stream_big_params.cu -o /tmp/sbp0 > $O/cc0.txt 2>&1 &
$NV -I/tmp/pf1 $P/stream_big_params.cu -o /tmp/sbp1 > $O/cc1.txt 2>&1 &
$NV -I/tmp/pf2 $P/stream_big_params.cu -o /tmp/sbp2 > $O/cc2.txt 2>&1 &
$NV -DBIG_PARAMS -I/tmp/tl $P/stream_big_timeline.cu -o /tmp/tlb > $O/cc3.txt 2>&1 &
wait
echo "compile $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader
F1024="0:0:-1:0 0:0:-1:1431 20:100:1:1431 10:170:1:0 10:170:1:1431 10:140:1:1431 8:200:1:1431 5:300:1:1431 10:170:0:1431 5:300:0:1431 4:360:0:1431"
F512="0:0:-1:0 0:0:-1:1431 10:100:1:1431 5:165:1:1431 4:200:1:1431 5:165:0:1431 10:100:1:0"
B1024="0:0:-1:0 0:0:-1:1511 10:170:1:1511 10:170:0:1511 5:300:0:1511 5:300:1:1511"
{
/tmp/sbp0 f32 4096 50257 1024 10 2 $F1024
/tmp/sbp0 f32 4096 50257 512 10 2 $F512
/tmp/sbp0 bf16 4096 50257 1024 10 2 $B1024
for b in 1 2; do
  /tmp/sbp$b f32 4096 50257 1024 10 2 0:0:-1:0 0:0:-1:1431 10:170:1:1431 5:300:1:1431
  /tmp/sbp$b f32 4096 50257 512 10 2 0:0:-1:0 0:0:-1:1431 5:165:1:1431
  /tmp/sbp$b bf16 4096 50257 1024 10 2 0:0:-1:0 0:0:-1:1511 5:300:0:1511
done
for b in 0 1 2; do
  /tmp/sbp$b f32 4096 50257 256 10 2 0:0:-1:0
  /tmp/sbp$b bf16 4096 50257 256 10 2 0:0:-1:0
done
} > $O/sweep.txt 2>&1
for c in 0:0:-1:0 10:170:1:1431 5:300:1:1431; do /tmp/tlb f32 4096 50257 1024 10 $c > $O/tl_$c.txt 2>&1; done
grep RESULT $O/sweep.txt | sed 's/RESULT //; s/ outputs differ from cfg 0//'
for c in 0:0:-1:0 10:170:1:1431 5:300:1:1431; do echo "== tl $c"; grep -v "^with" $O/tl_$c.txt | head -30; done
