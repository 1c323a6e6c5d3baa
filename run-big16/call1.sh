#!/bin/bash
# big16 call 1: where the 16-bit K > 32 ("big") kernel's time goes. ncu (SourceCounters, WarpStateStats)
# of the library kernel (probes/stream_plain.cu) at bf16 4096 x 50257 K = 64, 256 and the K <= 32 kernel
# at K = 16, with the disassembly (nvdisasm -gi) for a per-phase attribution; per-row timelines and
# counters (probes/stream_big_timeline.cu, hooks by big_timeline_patch.py, host parameters by
# big_params_patch.py); sample strides / kinds timed without hooks (probes/stream_big_params.cu).
set -u
[ -d scratch/wt-big16 ] && cd scratch/wt-big16
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
git log -1 --format=%H 2>/dev/null | head -1; head -2 .fusebench-commit 2>/dev/null
P=kernels/softmax_topk/probes
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I."
mkdir -p /tmp/tl /tmp/bp /tmp/ncu /tmp/dis
python3 $P/big_timeline_patch.py kernels/softmax_topk/fused_stream.cu /tmp/tl/fs_tl0.cu || echo PATCH1 FAILED
python3 $P/big_params_patch.py /tmp/tl/fs_tl0.cu /tmp/tl/fs_tl.cu || echo PATCH2 FAILED
python3 $P/big_params_patch.py kernels/softmax_topk/fused_stream.cu /tmp/bp/fs_params.cu || echo PATCH3 FAILED
$NV -lineinfo $P/stream_plain.cu -o /tmp/sp > /tmp/cc_sp.txt 2>&1 & PSP=$!
$NV -DBIG_PARAMS -I/tmp/tl $P/stream_big_timeline.cu -o /tmp/tlb > /tmp/cc_tl.txt 2>&1 & PTL=$!
$NV -I/tmp/bp $P/stream_big_params.cu -o /tmp/bpb > /tmp/cc_bp.txt 2>&1 & PBP=$!
wait $PSP; echo "stream_plain built $(el) s"; [ -x /tmp/sp ] || { tail -20 /tmp/cc_sp.txt; }
prof() { # name, args
  timeout 90 ncu --kernel-name regex:softmax_topk_stream --launch-skip 1 --launch-count 1 --section SourceCounters \
    --section WarpStateStats --section SpeedOfLight --section SchedulerStats --section InstructionStats \
    -o /tmp/ncu/$1 /tmp/sp $2 > /tmp/ncu/$1.run.txt 2>&1; echo "ncu $1 rc=$? $(el) s"; tail -2 /tmp/ncu/$1.run.txt
  if [ -f /tmp/ncu/$1.ncu-rep ]; then
    ncu -i /tmp/ncu/$1.ncu-rep --page details > /tmp/ncu/$1.details.txt 2>&1
    ncu -i /tmp/ncu/$1.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > /tmp/ncu/$1.sass.csv.gz
    ncu -i /tmp/ncu/$1.ncu-rep --page source --csv --print-source cuda,sass 2>&1 | gzip > /tmp/ncu/$1.cudasass.csv.gz
  fi
}
prof k64 "bf16 4096 50257 64 10"
prof k256 "bf16 4096 50257 256 10"
( cd /tmp/dis && cuobjdump -xelf all /tmp/sp > /dev/null 2>&1; c=$(ls -S *.cubin | head -1); \
  nvdisasm -gi -c $c > /tmp/dis/all.txt 2> /tmp/dis/err.txt || nvdisasm -g -c $c > /tmp/dis/all.txt; \
  awk '/^[[:space:]]*\.section[[:space:]]+\.text\./ { keep = ($0 ~ /nv_bfloat16/) } keep' /tmp/dis/all.txt | gzip > /tmp/ncu/dis_bf16.txt.gz; \
  head -c 3000 /tmp/dis/err.txt ) &
prof k16 "bf16 4096 50257 16 10"
wait $PTL; wait $PBP; echo "probes built $(el) s"; [ -x /tmp/tlb ] || tail -20 /tmp/cc_tl.txt; [ -x /tmp/bpb ] || tail -20 /tmp/cc_bp.txt
{
for c in "bf16 33 0:0:-1:0" "bf16 33 2:0:0:0" "bf16 33 4:0:1:0" "bf16 64 0:0:-1:0" "bf16 64 4:0:0:0" "bf16 64 4:0:1:0" \
         "bf16 128 0:0:-1:0" "bf16 128 8:0:0:0" "bf16 128 10:0:1:0" "bf16 256 0:0:-1:0" \
         "f16 64 0:0:-1:0" "f16 256 0:0:-1:0" "f32 64 0:0:-1:0" "f32 256 0:0:-1:0"; do
  set -- $c; echo "== TL $c"; [ $(el) -lt 330 ] && timeout 20 /tmp/tlb $1 4096 50257 $2 10 $3
done
set -- bf16 256 0:0:-1:0; echo "== TL bf16 151936 $2"; timeout 20 /tmp/tlb bf16 4096 151936 256 10 0:0:-1:0
} > $O/timeline.txt 2>&1
echo "timelines $(el) s"
{
[ $(el) -lt 360 ] && timeout 40 /tmp/bpb bf16 4096 50257 33 10 3 0:0:-1:0 2:0:0:0 3:0:0:0 4:0:1:0 2:0:1:0
[ $(el) -lt 380 ] && timeout 40 /tmp/bpb bf16 4096 50257 64 10 3 0:0:-1:0 3:0:0:0 4:0:0:0 4:0:1:0 6:0:1:0
[ $(el) -lt 400 ] && timeout 40 /tmp/bpb bf16 4096 50257 128 10 3 0:0:-1:0 7:0:0:0 8:0:0:0 10:0:1:0 8:0:1:0
[ $(el) -lt 420 ] && timeout 40 /tmp/bpb bf16 4096 50257 256 10 3 0:0:-1:0 8:0:0:0 13:0:1:0 8:0:1:0
[ $(el) -lt 440 ] && timeout 40 /tmp/bpb f16 4096 50257 64 10 3 0:0:-1:0 4:0:1:0 4:0:0:0
} > $O/params.txt 2>&1
echo "params $(el) s"
grep -E 'RESULT' $O/params.txt | sed 's/, probabilities.*//'
wait
cp /tmp/ncu/*.details.txt $O/ 2>/dev/null
tar czf $O/ncu.tgz -C /tmp/ncu $(cd /tmp/ncu && ls *.csv.gz *.txt.gz *.run.txt 2>/dev/null) 2>/dev/null
ls -la $O; echo "done $(el) s"
