#!/bin/bash
# w16 call 1 (one board): ncu of the 16-bit wide kernel (bf16 4096 x 50257 K = 1024, then K = 512),
# SASS with line info for the phase attribution, and an A/B of 16-bit wide-kernel knobs (stream_ab,
# one binary per variant, events, cold L2, indices checked against the first variant's output).
# As run (e34a39e) the line after the disassembly was a bare `wait`, which also waited for the
# `exec > >(tee ...)` process substitution: the script hung there until the call's 420 s limit, after the
# ncu export, and ran no A/B (its outputs: call1/). Fixed below (wait $PIDS); the b2 / b4 variants
# (FUSEBENCH_WIDE_BSTATS16: one rescale a batch, four partial sums) were taken out afterwards, unmeasured.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
exec > >(tee $O/log.txt) 2>&1
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,driver_version --format=csv,noheader
P=kernels/softmax_topk/probes
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -lineinfo -I."
declare -A VAR=( [base]="" [u3]="-DFUSEBENCH_WIDE_U16=3" [u4]="-DFUSEBENCH_WIDE_U16=4" )
ORDER="base u3 u4"
PIDS=""
for v in $ORDER; do $NV ${VAR[$v]} $P/stream_ab.cu -o /tmp/ab_$v > /tmp/cc_$v.txt 2>&1 & eval "pid_$v=$!"; PIDS="$PIDS $!"; done
wait $pid_base; echo "base compiled $(el) s"
mkdir -p /tmp/ref /tmp/ref_ncu
NS="--section SourceCounters --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats"
prof() { # tag, case args
  local tag=$1; shift
  timeout 150 ncu --kernel-name regex:wide --launch-skip 1 --launch-count 1 $NS -o /tmp/ncu_$tag /tmp/ab_base "$@" base /tmp/ref_ncu > /tmp/ncu_run_$tag.txt 2>&1
  echo "ncu $tag rc=$? $(el) s"; tail -2 /tmp/ncu_run_$tag.txt
  if [ -f /tmp/ncu_$tag.ncu-rep ]; then
    ncu -i /tmp/ncu_$tag.ncu-rep --page details > $O/ncu_${tag}_details.txt 2>&1
    ncu -i /tmp/ncu_$tag.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $O/ncu_${tag}_sass.csv.gz
  fi
  echo "export $tag $(el) s"
}
prof bf16k1024 bf16 4096 50257 1024 10
(cd /tmp && cuobjdump -xelf all /tmp/ab_base > /dev/null 2>&1; c=$(ls -S /tmp/*.cubin | head -1); nvdisasm -g -c $c 2>/dev/null | \
  awk '/^[[:space:]]*\.section[[:space:]]+\.text\./ { keep = ($0 ~ /wide_kernelI13__nv_bfloat16Li2|finish_wideILb1|finish_big_rowI13__nv_bfloat16Li2ELb1|big_pass_in_orderI13__nv_bfloat16Li2ELb0/) } keep' | gzip > $O/dis_bf16.txt.gz; rm -f /tmp/*.cubin)
echo "disasm $(el) s"
wait $PIDS; echo "all compiled $(el) s"; for v in $ORDER; do [ -x /tmp/ab_$v ] || { echo "compile $v failed"; tail -5 /tmp/cc_$v.txt; }; done
{
for c in "bf16 4096 50257 1024 10" "fp16 4096 50257 1024 10" "bf16 4096 50257 512 10" "fp16 4096 50257 512 10"; do
  c=${c/fp16/f16}
  for v in $ORDER; do [ $(el) -lt 330 ] && timeout 30 /tmp/ab_$v $c $v /tmp/ref; done
done
for v in $ORDER; do [ $(el) -lt 340 ] && timeout 30 /tmp/ab_$v bf16 4096 50257 1024 10 $v /tmp/ref; done
} > $O/ab.txt 2>&1
echo "ab done $(el) s"; grep AB $O/ab.txt
[ $(el) -lt 330 ] && prof bf16k512 bf16 4096 50257 512 10
ls -la $O; echo "end $(el) s"
