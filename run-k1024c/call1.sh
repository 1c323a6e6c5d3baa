#!/bin/bash
# k1024c call 1: the wide kernel's read pattern without selection (stream_pattern), ncu of the wide
# kernel (fp32 K = 1024), and the A/B of the wide-kernel knobs (stream_ab, one binary per variant).
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=kernels/softmax_topk/probes
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -lineinfo -I."
declare -A VAR=( [base]="" [pipe]="-DFUSEBENCH_WIDE_PIPE=1" [u4p]="-DFUSEBENCH_WIDE_PIPE=1 -DFUSEBENCH_WIDE_U32=4 -DFUSEBENCH_WIDE_U16=3"
                 [runs]="-DFUSEBENCH_WIDE_RUNS=1" [runs4]="-DFUSEBENCH_WIDE_RUNS=1 -DFUSEBENCH_WIDE_U32=4 -DFUSEBENCH_WIDE_U16=4"
                 [rpf]="-DFUSEBENCH_WIDE_RUNS=1 -DFUSEBENCH_WIDE_NEXTPF=1" )
ORDER="base pipe u4p runs runs4 rpf"
for v in $ORDER; do $NV ${VAR[$v]} $P/stream_ab.cu -o /tmp/ab_$v > /tmp/cc_$v.txt 2>&1 & done
$NV $P/stream_pattern.cu -o /tmp/sp > /tmp/cc_sp.txt 2>&1 || cat /tmp/cc_sp.txt
{ /tmp/sp 4096 50257 16; /tmp/sp 4096 50257 32; } > $O/pattern.txt 2>&1
echo "pattern done $(el) s"; grep PATTERN $O/pattern.txt
wait
echo "compile done $(el) s"; for v in $ORDER; do [ -x /tmp/ab_$v ] || { echo "compile $v failed"; tail -5 /tmp/cc_$v.txt; }; done
mkdir -p /tmp/ref /tmp/ref_ncu
# ncu of the base wide kernel, fp32 K = 1024 (second launch: cold L2 after the memset)
timeout 150 ncu --kernel-name regex:wide --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy -o /tmp/ncu_f32 \
  /tmp/ab_base f32 4096 50257 1024 10 base /tmp/ref_ncu > /tmp/ncu_run.txt 2>&1; echo "ncu rc=$? $(el) s"; tail -3 /tmp/ncu_run.txt
if [ -f /tmp/ncu_f32.ncu-rep ]; then
  ncu -i /tmp/ncu_f32.ncu-rep --page details > $O/ncu_details.txt 2>&1
  ncu -i /tmp/ncu_f32.ncu-rep --page source --csv --print-source cuda,sass 2>&1 | gzip > $O/ncu_cuda_sass.csv.gz
  ncu -i /tmp/ncu_f32.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $O/ncu_sass.csv.gz
  ls -la $O
fi
echo "ncu export $(el) s"
cuobjdump -xelf all /tmp/ab_base > /dev/null 2>&1 && ls *.cubin > /dev/null 2>&1 && { c=$(ls -S *.cubin | head -1); nvdisasm -g -c $c 2>/dev/null | awk '/^[[:space:]]*\.section[[:space:]]+\.text\./ { keep = ($0 ~ /wide_kernelIf|finish_wide|finish_big_rowIfLi3|big_pass_in_orderIfLi3ELb0/) } keep' | gzip > $O/dis.txt.gz; rm -f *.cubin; }
echo "disasm $(el) s"
{
for rd in 0 1; do
  for c in "f32 4096 50257 1024 10" "bf16 4096 50257 1024 10"; do
    for v in $ORDER; do [ $(el) -lt 440 ] && timeout 30 /tmp/ab_$v $c $v /tmp/ref; done
  done
done
for c in "f32 4096 50257 512 10" "f16 4096 50257 1024 10" "bf16 4096 50257 512 10"; do
  for v in $ORDER; do [ $(el) -lt 440 ] && timeout 30 /tmp/ab_$v $c $v /tmp/ref; done
done
} > $O/ab.txt 2>&1
echo "ab done $(el) s"
cat $O/ab.txt
