#!/usr/bin/env bash
# Session m, call 1 (either board): (1) the library build (build-gpu) in the background; (2) session l's call 9: the
# probe's checks of fused_bound's vote floor sampled at the first network-merged step from step 16 on
# (bcb_s4a16 / bcb_s2a16, probes/bound_check.cu -DBOUND_ONLY -DFUSEBENCH_BOUND_SAMPLE=4 / 2
# -DFUSEBENCH_BOUND_SAMPLE_AFTER=16; bcb_s0 the library form), then, once the build is done (the A/B is timed with
# the CPU idle), the A/B on random logits and the order kinds (events, two interleaved rounds); (3) the adversarial
# selection's plateau rows (first run on a GPU) for every variant, and its ascending / huge rows for fused_bound.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -qi "$WANT" $O/gpu.txt; then echo "wanted $WANT"; exit 3; fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
(nice scripts/build.sh > $O/build.log 2>&1; echo "build rc=$?" >> $O/build.log) &
bpid=$!
B=/tmp/bp; mkdir -p $B; for f in build-probe/bcb_s*.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
SAMPLED="bcb_s4a16 bcb_s2a16"
P=$O/probe.txt
for b in $SAMPLED; do for ty in bf16 f16; do for K in 10 32; do
  kinds="random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned huge plateau"; [ $ty = f16 ] && kinds="random ascending ties misaligned"
  for k in $kinds; do timeout 60 $B/$b lib $ty 64 50257 $K $k > /tmp/one.txt 2>&1 || echo "rc=$? $b $ty $K $k" >> $P; sed "s/^/$b /" /tmp/one.txt >> $P; done
  for s in "6 9000 32" "9 4099 16" "20 65536 32" "130 300 3"; do timeout 60 $B/$b lib $ty $s ascending > /tmp/one.txt 2>&1 || echo "rc=$? $b $ty $s" >> $P; sed "s/^/$b /" /tmp/one.txt >> $P; done
done; done; done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
wait $bpid; tail -2 $O/build.log; echo "build done $(el) s"
T=$O/sample-ab.txt
for rep in 1 2; do
  for c in "bf16 50257 10 random" "bf16 50257 32 random" "f16 50257 10 random" "bf16 32000 10 random" "bf16 65536 32 random" \
           "bf16 50257 10 ascending" "bf16 50257 32 ascending" "bf16 50257 10 descending" "bf16 50257 10 all_equal" "bf16 50257 32 ties" "bf16 50257 10 cluster256"; do
    set -- $c
    for b in bcb_s0 $SAMPLED; do echo "rep$rep $b $($B/$b lib $1 4096 $2 $3 $4 2>&1 | grep -o 'LIB.*')" >> $T; done
  done
done
for b in $SAMPLED; do python3 reports/examples/bound-1127l/ab_summary.py $T bcb_s0 $b; done | tee $O/sample-ab-summary.txt
echo "A/B $(el) s"
[ -x build-gpu/fusebench ] || { echo "no fusebench"; exit 1; }
timeout 240 build-gpu/fusebench run --suite softmax_topk_adversarial --case plateau --no-counters \
  --json $O/plateau.json > $O/plateau.txt 2> $O/plateau.err
echo "plateau rc=$? $(el) s"; tail -3 $O/plateau.err; grep -i "fail" $O/plateau.txt | head -20
gzip -f $P
