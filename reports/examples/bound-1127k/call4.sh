#!/usr/bin/env bash
# Session k, call 4 (binaries built on the workstation, carried in build-probe/): v9c, the K best vectors in
# registers (`bound32`, K <= 32; bc_full: U = 4 steps a batch, bc_b32u2 / u3: 2 / 3), checked on every kind and
# timed against the library's fused_stream on this board; its phase timeline (bc_tl, U = 2).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
B=/tmp/bp; mkdir -p $B; for f in build-probe/*.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 1 10 32; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned; do
    timeout 60 $B/bc_full bound32 $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 31 31" "6 4099 1" "6 9000 32" "2 52224 20" "9 17 16" "130 300 3" "140 40000 32" "50 32000 10" "20 65536 32"; do
    for k in random misaligned ascending ties; do timeout 60 $B/bc_full bound32 $ty $s $k >> $P 2>&1 || echo "rc=$? $ty $s $k" >> $P; done; done
  for sd in 1 100; do for K in 10 32; do timeout 60 $B/bc_full bound32 $ty 64 50257 $K random $sd >> $P 2>&1 || echo "rc=$? $ty K $K sd$sd" >> $P; done; done
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
T=$O/timing.txt
for r in 1 2; do
  for ty in bf16 f16; do for K in 10 32; do
    for v in stream bound32; do $B/bc_full $v $ty 4096 50257 $K random >> $T 2>&1; done
    echo "== u2" >> $T; $B/bc_b32u2 bound32 $ty 4096 50257 $K random >> $T 2>&1
    echo "== u3" >> $T; $B/bc_b32u3 bound32 $ty 4096 50257 $K random >> $T 2>&1
  done; done
  for V in 32000 65536; do for v in stream bound32; do $B/bc_full $v bf16 4096 $V 10 random >> $T 2>&1; done; done
  for v in stream bound32; do $B/bc_full $v bf16 4096 50257 10 random 1 >> $T 2>&1; done
  for k in ascending descending all_equal ties cluster256; do for v in stream bound32; do $B/bc_full $v bf16 4096 50257 10 $k >> $T 2>&1; done; done
  for k in ascending all_equal; do $B/bc_full bound32 bf16 4096 50257 32 $k >> $T 2>&1; done
done
echo "timings $(el) s"; grep -o "==.*\|B32.*\|STR.*" $T | sed 's/(.*)//'
L=$O/timeline.txt
for k in random ascending; do $B/bc_tl bound32 bf16 4096 50257 10 $k >> $L 2>&1; done; $B/bc_tl bound32 bf16 4096 50257 32 random >> $L 2>&1
grep "^TL" $L
timeout 100 compute-sanitizer --tool memcheck $B/bc_full bound32 bf16 300 9000 32 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 100 compute-sanitizer --tool racecheck $B/bc_full bound32 f16 140 9000 10 ascending >> $O/sanitizer.txt 2>&1; echo "racecheck rc=$? $(tail -1 $O/sanitizer.txt)"
echo "done $(el) s"
