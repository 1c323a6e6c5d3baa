#!/usr/bin/env bash
# Session k, call 1: fused_bound (v9, kernels/softmax_topk/probes/bound_kernel.cu) checked on every input kind
# against the CPU reference, sanitized, and timed against the library's fused_stream (same binary, inputs,
# check and timer: cold L2, events, median of 5).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
F="-O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I."
nvcc $F kernels/softmax_topk/probes/bound_check.cu -o /tmp/bc > $O/build.txt 2>&1 || { echo "build failed $(el) s"; tail -30 $O/build.txt; exit 1; }
echo "built $(el) s"
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 10 256 1024; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned; do
    timeout 60 /tmp/bc bound $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 1003 1003" "6 4099 1" "6 9000 600" "3 5000 1000" "7 52224 1024" "2 52224 50" "9 17 16" "130 300 3" "140 40000 1024" "50 32000 256"; do
    for k in random misaligned ascending ties; do timeout 60 /tmp/bc bound $ty $s $k >> $P 2>&1 || echo "rc=$? $ty $s $k" >> $P; done; done
  timeout 60 /tmp/bc bound $ty 64 50257 256 random 1 >> $P 2>&1 || echo "rc=$? $ty sd1" >> $P
  timeout 60 /tmp/bc bound $ty 64 50257 256 random 100 >> $P 2>&1 || echo "rc=$? $ty sd100" >> $P
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
T=$O/timing.txt
for ty in bf16 f16; do for K in 10 64 256 1024; do for v in stream bound; do /tmp/bc $v $ty 4096 50257 $K random >> $T 2>&1; done; done; done
for K in 10 256; do for v in stream bound; do /tmp/bc $v bf16 4096 32000 $K random >> $T 2>&1; /tmp/bc $v bf16 4096 50257 $K random 1 >> $T 2>&1; done; done
for K in 10 256; do for k in ascending all_equal ties; do for v in stream bound; do /tmp/bc $v bf16 4096 50257 $K $k >> $T 2>&1; done; done; done
echo "timings $(el) s"; grep -o "BND.*\|STR.*" $T | sed 's/(.*)//'
timeout 100 compute-sanitizer --tool memcheck /tmp/bc bound bf16 300 9000 600 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 100 compute-sanitizer --tool racecheck /tmp/bc bound bf16 140 9000 600 ties >> $O/sanitizer.txt 2>&1; echo "racecheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 100 compute-sanitizer --tool synccheck /tmp/bc bound f16 300 5000 1000 ascending >> $O/sanitizer.txt 2>&1; echo "synccheck rc=$? $(tail -1 $O/sanitizer.txt)"
echo "done $(el) s"
