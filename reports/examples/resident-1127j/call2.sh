#!/usr/bin/env bash
# Session j, call 2: where fused_resident's time goes. The probe built with the phase timeline
# (-DFUSEBENCH_RES_TIMELINE=1), then ncu (full set, source counters) of one launch at 528 rows.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
F="-O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. -lineinfo"
nvcc $F -DFUSEBENCH_RES_TIMELINE=1 kernels/softmax_topk/probes/resident_check.cu -o /tmp/rct &
nvcc $F kernels/softmax_topk/probes/resident_check.cu -o /tmp/rc -Xptxas -v > $O/ptxas.txt 2>&1 &
wait; echo "built $(el) s"
T=$O/timeline.txt
for a in "4096 50257 10 random" "4096 50257 256 random" "4096 50257 10 descending" "64 50257 10 random" "4096 32000 10 random"; do
  /tmp/rct bf16 $a >> $T 2>&1; done
grep "TL\|RES" $T | sed 's/(.*)//'
ncu --set full --import-source yes --kernel-name regex:resident -c 1 /tmp/rc bf16 528 50257 10 random > $O/ncu.txt 2>&1
echo "ncu rc=$? ($(el) s)"
grep -E "Duration|Executed Ipc A|Issue Slots Busy|Warp Cycles Per Issued|Local Memory|No Eligible|Registers Per|Stall|Executed Instructions  " $O/ncu.txt | head -40
ncu --set full --import-source yes --kernel-name regex:resident -c 1 --page source --csv --print-source sass /tmp/rc bf16 528 50257 10 random > $O/sass.csv 2>/dev/null
gzip -f $O/sass.csv
echo "done ($(el) s)"
