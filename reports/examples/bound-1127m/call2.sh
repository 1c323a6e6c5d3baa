#!/usr/bin/env bash
# Session m, call 2 (either board): the library with fused_bound's vote floor sampled from step 16 at K <= 16
# (bcb_m1 = probes/bound_check.cu -DBOUND_ONLY of this tree) and fused_warp's compensated lane sums.
# (1) build-gpu in the background; (2) bcb_m1's checks on every kind (bf16 / fp16, K 1 / 10 / 16 / 17 / 32);
# (3) with the build done, the A/B against bcb_s0 (the library before, c3b36fb's fused_bound) on random logits and
# the order kinds, events, two interleaved rounds; (4) the adversarial selection: fused_bound on every bf16 K = 10
# kind at 4096 x 50257 and fused_warp on the plateau rows; (5) [gpu][softmax_topk].
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -qi "$WANT" $O/gpu.txt; then echo "wanted $WANT"; exit 3; fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
(nice scripts/build.sh > /tmp/build.log 2>&1; echo "build rc=$?" >> /tmp/build.log) &
bpid=$!
B=/tmp/bp; mkdir -p $B; for f in build-probe/bcb_s0.gz build-probe/bcb_m1.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
P=$O/probe.txt
for ty in bf16 f16; do for K in 1 10 16 17 32; do
  kinds="random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned huge plateau"; [ $ty = f16 ] && kinds="random ascending ties misaligned plateau"
  for k in $kinds; do timeout 60 $B/bcb_m1 lib $ty 64 50257 $K $k > /tmp/one.txt 2>&1 || echo "rc=$? $ty $K $k" >> $P; cat /tmp/one.txt >> $P; done
  for s in "6 9000 32" "9 4099 16" "20 65536 16" "130 300 3" "40 65536 $K"; do timeout 60 $B/bcb_m1 lib $ty $s ascending > /tmp/one.txt 2>&1 || echo "rc=$? $ty $s" >> $P; cat /tmp/one.txt >> $P; done
done; done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
wait $bpid; tail -2 /tmp/build.log; echo "build done $(el) s"
T=$O/sample-ab.txt
for rep in 1 2; do
  for c in "bf16 50257 10 random" "bf16 50257 16 random" "bf16 50257 32 random" "f16 50257 10 random" "bf16 32000 10 random" "bf16 65536 10 random" \
           "bf16 50257 10 ascending" "bf16 50257 16 ascending" "bf16 50257 10 descending" "bf16 50257 10 all_equal" "bf16 50257 10 ties" "bf16 50257 10 cluster256" "bf16 50257 10 plateau"; do
    set -- $c
    for b in bcb_s0 bcb_m1; do echo "rep$rep $b $($B/$b lib $1 4096 $2 $3 $4 2>&1 | grep -o 'LIB.*')" >> $T; done
  done
done
python3 reports/examples/bound-1127l/ab_summary.py $T bcb_s0 bcb_m1 | tee $O/sample-ab-summary.txt
echo "A/B $(el) s"
[ -x build-gpu/fusebench ] || { echo "no fusebench"; exit 1; }
timeout 200 build-gpu/fusebench run --suite softmax_topk_adversarial --no-counters --dtype bf16 --variant fused_bound,fused_warp \
  --case "4096x50257:K10:,4096x50257:K256:plateau,4096x151936:K10:plateau,4096x151936:K256:plateau" \
  --json $O/adv.json > $O/adv.txt 2> /tmp/adv.err
echo "adversarial rc=$? $(el) s"; tail -2 /tmp/adv.err; grep -i "fail" $O/adv.txt | head -20
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "tests rc=$? $(el) s: $(tail -3 $O/tests-softmax_topk.txt | tr '\n' ' ')"
gzip -f $P $O/adv.json
