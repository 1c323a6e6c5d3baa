#!/usr/bin/env bash
# Session k, call 8 (binary built on the workstation, gzipped in build-probe/): the library form of v9e
# (kernels/softmax_topk/fused_bound.cu, `lib`: launch_softmax_topk_fused_bound, U 3 at K <= 16, 4 above) checked on
# every kind by the probe's check, and timed against the library's fused_stream in the same binary.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
B=/tmp/bp; mkdir -p $B; for f in build-probe/*.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 1 10 16 32; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned; do
    timeout 60 $B/bc_full lib $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 31 31" "6 4099 1" "6 9000 32" "2 52224 20" "9 17 16" "130 300 3" "140 40000 32" "50 32000 10" "20 65536 32" "7 2066 10"; do
    for k in random misaligned ascending ties; do timeout 60 $B/bc_full lib $ty $s $k >> $P 2>&1 || echo "rc=$? $ty $s $k" >> $P; done; done
  for sd in 1 100; do for K in 10 32; do timeout 60 $B/bc_full lib $ty 64 50257 $K random $sd >> $P 2>&1 || echo "rc=$? $ty K $K sd$sd" >> $P; done; done
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
T=$O/timing.txt
for ty in bf16 f16; do for K in 10 16 32; do for v in stream lib; do $B/bc_full $v $ty 4096 50257 $K random >> $T 2>&1; done; done; done
for V in 32000 65536; do for K in 10 32; do for v in stream lib; do $B/bc_full $v bf16 4096 $V $K random >> $T 2>&1; done; done; done
for k in ascending all_equal; do for v in stream lib; do $B/bc_full $v bf16 4096 50257 10 $k >> $T 2>&1; done; done
echo "timings $(el) s"; grep -o "LIB.*\|STR.*" $T | sed 's/(.*)//'
timeout 100 compute-sanitizer --tool memcheck $B/bc_full lib bf16 300 9000 32 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 100 compute-sanitizer --tool racecheck $B/bc_full lib f16 140 9000 16 misaligned >> $O/sanitizer.txt 2>&1; echo "racecheck rc=$? $(tail -1 $O/sanitizer.txt)"
echo "done $(el) s"
