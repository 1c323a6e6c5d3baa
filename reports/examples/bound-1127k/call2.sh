#!/usr/bin/env bash
# Session k, call 2: binaries built on the workstation (nvcc 13.0, sm_90a; carried in build-probe/): where
# fused_bound's time goes. bc_full: bound and the library's fused_stream (A/B on this board); bc_base: the
# kernel after call 1 (list sized to one gather chunk at K <= 256; the check's suite bound for underflowing
# probabilities); bc_so*: the stream alone (STREAM_ONLY: the row ends after its max and sum; outputs wrong by
# design, the FAIL lines expected) with U = 4 / 8 steps a batch, L2 prefetch 2 / 4 batches ahead, 8 warps U 8.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
B=build-probe
T=$O/timing.txt
for r in 1 2; do
  for v in stream bound; do for K in 10 256; do $B/bc_full $v bf16 4096 50257 $K random >> $T 2>&1; done; $B/bc_full $v f16 4096 50257 256 random >> $T 2>&1; done
  for b in bc_so bc_so_u8 bc_so_a2 bc_so_a4 bc_so_nw8u8; do echo "== $b" >> $T; $B/$b bound bf16 4096 50257 10 random >> $T 2>&1; done
  echo "== bc_base" >> $T; for K in 10 64 256 1024; do $B/bc_base bound bf16 4096 50257 $K random >> $T 2>&1; done
done
echo "timings $(el) s"; grep -o "==.*\|BND.*\|STR.*" $T | sed 's/(.*)//'
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 10 256; do for k in random ascending descending all_equal ties cluster256 masked nan posinf misaligned; do
    timeout 60 $B/bc_base bound $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "5 7 7" "6 9000 600" "9 17 16" "130 300 3" "140 40000 1024" "50 32000 256"; do
    for k in random ascending ties; do timeout 60 $B/bc_base bound $ty $s $k >> $P 2>&1 || echo "rc=$? $ty $s $k" >> $P; done; done
  for sd in 1 100; do for K in 10 256 1024; do timeout 60 $B/bc_base bound $ty 64 50257 $K random $sd >> $P 2>&1 || echo "rc=$? $ty K $K sd$sd" >> $P; done; done
  timeout 60 $B/bc_full stream $ty 64 50257 256 random 100 >> $P 2>&1 || echo "rc=$? stream $ty sd100" >> $P
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
timeout 100 compute-sanitizer --tool memcheck $B/bc_base bound bf16 300 9000 200 ties > $O/sanitizer.txt 2>&1; echo "memcheck rc=$? $(tail -1 $O/sanitizer.txt)"
echo "done $(el) s"
