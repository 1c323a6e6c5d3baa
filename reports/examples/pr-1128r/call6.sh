#!/usr/bin/env bash
# Session r, PREPARED, NOT RUN (either board, ~150 s): where the list kernel's time goes, by phase. ncu
# (SourceCounters, WarpStateStats, SpeedOfLight, SchedulerStats) of the library's list kernel through the probe
# (-lineinfo, fused_bound.cu only) at bf16 / fp16 4096 x 50257 K = 256 random and bf16 descending; the cubin's
# `nvdisasm -gi` for the inline chains; ncu_list_phases.py attributes each SASS instruction's samples and
# executions to the kernel's phases (the stream, its compactions, max+sum, the end's compaction, the K vectors
# read again, the K-th, the emission, the sort and the writes) and lists the lines with the most samples.
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=/tmp/probes; N=/tmp/ncu; D=/tmp/dis; mkdir -p $P $N $D
nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -lineinfo -I. -DBOUND_ONLY \
  kernels/softmax_topk/probes/bound_check.cu -o $P/lib > $O/build.txt 2>&1
echo "built rc=$? $(el) s"
(cd $D && cuobjdump -xelf all $P/lib > /dev/null 2>&1; c=$(ls -S *.cubin | head -1); echo "cubin $c";
 nvdisasm -gi -c $c > $D/all.txt 2> $D/err.txt || nvdisasm -g -c $c > $D/all.txt; head -c 2000 $D/err.txt)
prof() { # name, probe args
  timeout 120 ncu --kernel-name regex:bound_list_kernel --launch-skip 1 --launch-count 1 --section SourceCounters \
    --section WarpStateStats --section SpeedOfLight --section SchedulerStats --section InstructionStats \
    -o $N/$1 $P/lib lib $2 > $N/$1.run.txt 2>&1
  echo "ncu $1 rc=$? $(el) s"; grep -E 'PASS|FAIL' $N/$1.run.txt | head -2
  [ -f $N/$1.ncu-rep ] || { tail -5 $N/$1.run.txt; return; }
  ncu -i $N/$1.ncu-rep --page details > $N/$1.details.txt 2>&1
  ncu -i $N/$1.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $N/$1.sass.csv.gz
}
prof bf16r "bf16 4096 50257 256 random"
prof f16r "f16 4096 50257 256 random"
prof bf16d "bf16 4096 50257 256 descending"
{
for n in bf16r f16r bf16d; do
  case $n in f16r) sec='bound_list_kernelI6__halfLi3ELi8EE' ;; *) sec='bound_list_kernelI13__nv_bfloat16Li3ELi8EE' ;; esac
  echo "=== $n (section /$sec/)"
  grep -E 'Duration|Executed Ipc Active|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|DRAM Throughput|Registers Per Thread' $N/$n.details.txt | head -12
  python3 reports/examples/pr-1128r/ncu_list_phases.py $D/all.txt "$sec" $N/$n.sass.csv.gz kernels/softmax_topk/fused_bound.cu 30
done
} > $O/phases.txt 2>&1
cat $O/phases.txt
cat $N/bf16r.details.txt $N/f16r.details.txt $N/bf16d.details.txt > $O/details.txt
cp $N/bf16r.sass.csv.gz $N/f16r.sass.csv.gz $O/
awk '/^[[:space:]]*\.section[[:space:]]+\.text\./ { keep = ($0 ~ /bound_list_kernel/) } keep' $D/all.txt | gzip > $O/dis_list.txt.gz
echo "done $(el) s"; ls -la $O
