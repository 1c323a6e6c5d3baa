#!/usr/bin/env bash
# Session j, call 4: per-warp candidate regions (ballot appends), 8-bit shuffle counts in the 16-bin rounds, at most 32
# candidates sorted by warp 0, the next copy issued before the output order (scratch apart from the row).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
F="-O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. -lineinfo"
nvcc $F -DFUSEBENCH_RES_TIMELINE=1 kernels/softmax_topk/probes/resident_check.cu -o /tmp/rct &
nvcc $F kernels/softmax_topk/probes/resident_check.cu -o /tmp/rc > $O/build.txt 2>&1 &
wait; echo "built $(el) s"
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 10 256 1024; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned; do
    timeout 60 /tmp/rc $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 1003 1003" "6 4099 1" "6 9000 600" "3 5000 1000" "7 50688 1024" "2 50688 50" "9 17 16" "130 300 3" "140 40000 1024"; do
    timeout 60 /tmp/rc $ty $s random >> $P 2>&1 || echo "rc=$? $ty $s" >> $P
    timeout 60 /tmp/rc $ty $s misaligned >> $P 2>&1 || echo "rc=$? $ty $s misaligned" >> $P
    timeout 60 /tmp/rc $ty $s ascending >> $P 2>&1 || echo "rc=$? $ty $s ascending" >> $P; done
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -5
timeout 120 compute-sanitizer --tool memcheck /tmp/rc bf16 300 9000 600 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 120 compute-sanitizer --tool synccheck /tmp/rc bf16 300 5000 1000 ascending >> $O/sanitizer.txt 2>&1; echo "synccheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 200 compute-sanitizer --tool racecheck /tmp/rc bf16 140 9000 600 ties >> $O/sanitizer.txt 2>&1; echo "racecheck rc=$? $(tail -1 $O/sanitizer.txt)"
T=$O/timing.txt
for a in "bf16 4096 50257 10 random" "bf16 4096 50257 256 random" "bf16 4096 50257 1024 random" "bf16 4096 50257 10 ascending" "bf16 4096 50257 256 all_equal"; do /tmp/rct $a >> $T 2>&1; done
for ty in bf16 f16; do for K in 10 64 256 1024; do /tmp/rc $ty 4096 50257 $K random >> $T 2>&1; done; done
for K in 10 256 1024; do /tmp/rc bf16 4096 32000 $K random >> $T 2>&1; done
for K in 10 256; do for k in ascending descending all_equal ties cluster256 masked nan misaligned; do /tmp/rc bf16 4096 50257 $K $k >> $T 2>&1; done; done
echo "timings $(el) s"; grep -o "RES.*\|TL.*" $T | sed 's/(.*)//'
