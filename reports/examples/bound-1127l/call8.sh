#!/usr/bin/env bash
# Session l, call 8 (either board): fused_bound's vote floor from a sample of the row (FUSEBENCH_BOUND_SAMPLE, a
# probe knob, 0 in the library), probes/bound_check.cu -DBOUND_ONLY built on the workstation: bcb_s0 (the library),
# bcb_s4a0 (4 vectors a lane sampled at the row's start), bcb_s4a3 / bcb_s2a3 (4 / 2 a lane, sampled from the rest
# of the row at its 3rd network-merged step). The probe's checks of the sampled forms on every kind, then an A/B
# (events, two interleaved rounds) on random logits and the order kinds. SAMPLED (the sampled builds) and KS (the
# checks' K) replace the lists (call9.sh).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
B=/tmp/bp; mkdir -p $B; for f in build-probe/bcb_s*.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
P=$O/probe.txt
for b in ${SAMPLED:-bcb_s4a0 bcb_s4a3 bcb_s2a3}; do for ty in bf16 f16; do for K in ${KS:-1 10 16 32}; do
  kinds="random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned huge plateau"; [ $ty = f16 ] && kinds="random ascending ties misaligned"
  for k in $kinds; do timeout 60 $B/$b lib $ty 64 50257 $K $k > /tmp/one.txt 2>&1 || echo "rc=$? $b $ty $K $k" >> $P; sed "s/^/$b /" /tmp/one.txt >> $P; done
  for s in "6 9000 32" "9 4099 16" "20 65536 32" "130 300 3"; do timeout 60 $B/$b lib $ty $s ascending > /tmp/one.txt 2>&1 || echo "rc=$? $b $ty $s" >> $P; sed "s/^/$b /" /tmp/one.txt >> $P; done
done; done; done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
T=$O/sample-ab.txt
for rep in 1 2; do
  for c in "bf16 50257 10 random" "bf16 50257 32 random" "f16 50257 10 random" "bf16 32000 10 random" "bf16 65536 32 random" \
           "bf16 50257 10 ascending" "bf16 50257 32 ascending" "bf16 50257 10 descending" "bf16 50257 10 all_equal" "bf16 50257 32 ties" "bf16 50257 10 cluster256"; do
    set -- $c
    for b in bcb_s0 ${SAMPLED:-bcb_s4a0 bcb_s4a3 bcb_s2a3}; do echo "rep$rep $b $($B/$b lib $1 4096 $2 $3 $4 2>&1 | grep -o 'LIB.*')" >> $T; done
  done
done
for b in ${SAMPLED:-bcb_s4a0 bcb_s4a3 bcb_s2a3}; do python3 reports/examples/bound-1127l/ab_summary.py $T bcb_s0 $b; done | tee $O/sample-ab-summary.txt
echo "A/B $(el) s"
