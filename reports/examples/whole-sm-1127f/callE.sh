#!/usr/bin/env bash
# Call E: where the work-sharing kernel's time goes. stream_ab built as the library (one block of 32 warps)
# and with -DFUSEBENCH_STREAM_SHARE=1 (the share kernel put back from share-kernel-removal.patch.gz), both
# -lineinfo; ncu of one cold-L2 launch each, bf16 4096 x 50257 K = 10, N(0, 10^2).
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O" /tmp/ncu /tmp/e/ref; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
P=kernels/softmax_topk/probes
$NV $P/stream_ab.cu -o /tmp/e/whole > /tmp/e/cc_whole.txt 2>&1 &
$NV -DFUSEBENCH_STREAM_SHARE=1 $P/stream_ab.cu -o /tmp/e/share > /tmp/e/cc_share.txt 2>&1 &
wait; echo "built $(el) s"; ls /tmp/e
for b in whole share; do
  /tmp/e/$b bf16 4096 50257 10 10 $b /tmp/e/ref | tail -1
  timeout 120 ncu --kernel-name regex:softmax_topk_stream --launch-skip 1 --launch-count 1 --section SourceCounters \
    --section WarpStateStats --section SpeedOfLight --section SchedulerStats --section InstructionStats \
    -o /tmp/ncu/$b /tmp/e/$b bf16 4096 50257 10 10 $b /tmp/e/ref > /tmp/ncu/$b.run.txt 2>&1; echo "ncu $b rc=$? $(el) s"
  ncu -i /tmp/ncu/$b.ncu-rep --page details > $O/$b.details.txt 2>&1
  ncu -i /tmp/ncu/$b.ncu-rep --page source --csv --print-source cuda,sass 2>&1 | gzip > $O/$b.cudasass.csv.gz
done
