#!/usr/bin/env bash
# Session k, call 3 (binaries built on the workstation, carried in build-probe/): v9b, the list built in the
# stream (`bound`), against call 1's form (`boundk`) and the library's fused_stream (`stream`), one board:
# checks on every kind, the A/B, phase timelines (bc_tl), 8 warps x U 8 (bc_nw8u8), the stream alone (bc_so).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
B=build-probe
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 10 256 1024; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned; do
    timeout 60 $B/bc_full bound $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 1003 1003" "6 4099 1" "6 9000 600" "3 5000 1000" "7 52224 1024" "2 52224 50" "9 17 16" "130 300 3" "140 40000 1024" "50 32000 256"; do
    for k in random misaligned ascending ties; do timeout 60 $B/bc_full bound $ty $s $k >> $P 2>&1 || echo "rc=$? $ty $s $k" >> $P; done; done
  for sd in 1 100; do for K in 10 256 1024; do timeout 60 $B/bc_full bound $ty 64 50257 $K random $sd >> $P 2>&1 || echo "rc=$? $ty K $K sd$sd" >> $P; done; done
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
T=$O/timing.txt
for r in 1 2; do
  for ty in bf16 f16; do for K in 10 64 256 1024; do for v in stream bound boundk; do $B/bc_full $v $ty 4096 50257 $K random >> $T 2>&1; done; done; done
  for K in 10 256; do for v in stream bound; do $B/bc_full $v bf16 4096 32000 $K random >> $T 2>&1; $B/bc_full $v bf16 4096 50257 $K random 1 >> $T 2>&1; done; done
  for K in 10 256; do for k in ascending descending all_equal ties cluster256; do for v in stream bound; do $B/bc_full $v bf16 4096 50257 $K $k >> $T 2>&1; done; done; done
  echo "== nw8u8" >> $T; for K in 10 256 1024; do $B/bc_nw8u8 bound bf16 4096 50257 $K random >> $T 2>&1; done
  echo "== so" >> $T; $B/bc_so bound bf16 4096 50257 10 random >> $T 2>&1
done
echo "timings $(el) s"; grep -o "==.*\|BN[DK].*\|STR.*" $T | sed 's/(.*)//'
L=$O/timeline.txt
for K in 10 256 1024; do for v in bound boundk; do $B/bc_tl $v bf16 4096 50257 $K random >> $L 2>&1; done; done
$B/bc_tl bound bf16 4096 50257 256 ascending >> $L 2>&1; $B/bc_tl bound f16 4096 50257 256 random >> $L 2>&1
grep "^TL" $L
timeout 100 compute-sanitizer --tool memcheck $B/bc_full bound bf16 300 9000 600 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 100 compute-sanitizer --tool racecheck $B/bc_full bound f16 140 9000 600 ascending >> $O/sanitizer.txt 2>&1; echo "racecheck rc=$? $(tail -1 $O/sanitizer.txt)"
echo "done $(el) s"
