#!/usr/bin/env bash
# Session k, call 5 (binaries built on the workstation, gzipped in build-probe/): v9c with its end as one bitonic
# sort of <= 64 candidates (K lanes write at once; more candidates: the K rounds), U = 2 by default; 32 warps
# (bc_full) against 16 warps x U 4 / 6 (bc_n16u4, bc_n16u6), and the library's fused_stream, one board.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
B=/tmp/bp; mkdir -p $B; for f in build-probe/*.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 1 10 16 32; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned; do
    timeout 60 $B/bc_full bound32 $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 31 31" "6 4099 1" "6 9000 32" "2 52224 20" "9 17 16" "130 300 3" "140 40000 32" "50 32000 10" "20 65536 32"; do
    for k in random misaligned ascending ties; do timeout 60 $B/bc_full bound32 $ty $s $k >> $P 2>&1 || echo "rc=$? $ty $s $k" >> $P; done; done
  for sd in 1 100; do for K in 10 32; do timeout 60 $B/bc_full bound32 $ty 64 50257 $K random $sd >> $P 2>&1 || echo "rc=$? $ty K $K sd$sd" >> $P; done; done
  timeout 60 $B/bc_n16u4 bound32 $ty 64 50257 32 ties >> $P 2>&1 || echo "rc=$? n16u4 $ty" >> $P
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
T=$O/timing.txt
for r in 1 2 3; do
  for ty in bf16 f16; do for K in 10 16 32; do
    for v in stream bound32; do $B/bc_full $v $ty 4096 50257 $K random >> $T 2>&1; done
    for b in bc_n16u4 bc_n16u6; do echo "== $b" >> $T; $B/$b bound32 $ty 4096 50257 $K random >> $T 2>&1; done
  done; done
  for V in 32000 65536; do for v in stream bound32; do $B/bc_full $v bf16 4096 $V 10 random >> $T 2>&1; $B/bc_full $v f16 4096 $V 32 random >> $T 2>&1; done; done
  for v in stream bound32; do $B/bc_full $v bf16 4096 50257 10 random 1 >> $T 2>&1; done
  for k in ascending descending all_equal ties cluster256; do for v in stream bound32; do $B/bc_full $v bf16 4096 50257 10 $k >> $T 2>&1; done; done
done
echo "timings $(el) s"; grep -o "==.*\|B32.*\|STR.*" $T | sed 's/(.*)//'
L=$O/timeline.txt
for K in 10 32; do $B/bc_tl bound32 bf16 4096 50257 $K random >> $L 2>&1; done
grep "^TL" $L
timeout 100 compute-sanitizer --tool memcheck $B/bc_full bound32 bf16 300 9000 32 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
timeout 100 compute-sanitizer --tool racecheck $B/bc_full bound32 f16 140 9000 16 random >> $O/sanitizer.txt 2>&1; echo "racecheck rc=$? $(tail -1 $O/sanitizer.txt)"
echo "done $(el) s"
