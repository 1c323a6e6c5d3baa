#!/usr/bin/env bash
# Session m, call 3 (WANT=H100 / H200): the library at the commit sent (fused_bound's sampled vote floor at K <= 16,
# inline: bcb_m2 = probes/bound_check.cu -DBOUND_ONLY of this tree; fused_warp's compensated sums). While build-gpu
# builds: bcb_m2's checks on every kind; then the A/B against bcb_s0 (c3b36fb's fused_bound; events, two
# interleaved rounds), fused_bound on every bf16 K = 10 kind of the adversarial selection, the suite's softmax_topk
# GPU tests and the default run (the board's baseline). Returns the report, run.txt, the summaries and logs.tgz.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -qi "$WANT" $O/gpu.txt; then echo "wanted $WANT"; exit 3; fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
(nice scripts/build.sh > /tmp/build.log 2>&1; echo "build rc=$?" >> /tmp/build.log) &
bpid=$!
B=/tmp/bp; mkdir -p $B; for f in build-probe/bcb_s0.gz build-probe/bcb_m2.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
P=$O/probe.txt
for ty in bf16 f16; do for K in 1 10 16 17 32; do
  kinds="random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned huge plateau"; [ $ty = f16 ] && kinds="random ascending ties misaligned plateau"
  for k in $kinds; do timeout 60 $B/bcb_m2 lib $ty 64 50257 $K $k > /tmp/one.txt 2>&1 || echo "rc=$? $ty $K $k" >> $P; cat /tmp/one.txt >> $P; done
  for s in "6 9000 32" "9 4099 16" "20 65536 16" "130 300 3" "40 65536 $K"; do timeout 60 $B/bcb_m2 lib $ty $s ascending > /tmp/one.txt 2>&1 || echo "rc=$? $ty $s" >> $P; cat /tmp/one.txt >> $P; done
done; done
timeout 100 compute-sanitizer --tool memcheck $B/bcb_m2 lib bf16 300 9000 10 ascending > /tmp/san.txt 2>&1; echo "memcheck rc=$? $(tail -1 /tmp/san.txt)"; cat /tmp/san.txt >> $P
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
wait $bpid; tail -1 /tmp/build.log; grep -q "build rc=0" /tmp/build.log || { tail -30 /tmp/build.log; exit 1; }
echo "build done $(el) s"
T=$O/sample-ab.txt
for rep in 1 2; do
  for c in "bf16 50257 10 random" "bf16 50257 16 random" "bf16 50257 32 random" "f16 50257 10 random" "bf16 32000 10 random" "bf16 65536 10 random" \
           "bf16 50257 10 ascending" "bf16 50257 16 ascending" "bf16 50257 10 descending" "bf16 50257 10 all_equal" "bf16 50257 10 ties" "bf16 50257 10 plateau"; do
    set -- $c
    for b in bcb_s0 bcb_m2; do echo "rep$rep $b $($B/$b lib $1 4096 $2 $3 $4 2>&1 | grep -o 'LIB.*')" >> $T; done
  done
done
python3 reports/examples/bound-1127l/ab_summary.py $T bcb_s0 bcb_m2 | tee $O/sample-ab-summary.txt
echo "A/B $(el) s"
timeout 100 build-gpu/fusebench run --suite softmax_topk_adversarial --no-counters --dtype bf16 --variant fused_bound \
  --case "4096x50257:K10:" --json $O/adv.json > $O/adv.txt 2> $O/adv.err
echo "adversarial rc=$? $(el) s"; grep -i "fail" $O/adv.txt | head
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "tests rc=$? $(el) s: $(tail -3 $O/tests-softmax_topk.txt | tr '\n' ' ')"
label=$(grep -oiE 'h100|h200' $O/gpu.txt | head -1 | tr 'A-Z' 'a-z')
timeout $(( 592 - $(el) )) build-gpu/fusebench run --json $O/${label:-gpu}.json > $O/run.txt 2> $O/run.err
echo "run rc=$? $(el) s"; tail -2 $O/run.err
f=$O/${label:-gpu}.json; [ -f $f ] && [ $(stat -c %s $f) -gt 15000000 ] && gzip -f $f
grep -E "fail" $O/run.txt | head; grep -E "fused_bound" $O/run.txt | grep -v skipped | head -12
gzip -f $P; gzip -f $O/adv.json
(cd $O && tar czf logs.tgz gpu.txt probe.txt.gz sample-ab.txt adv.json.gz adv.err run.err && rm -f probe.txt.gz sample-ab.txt adv.json.gz adv.err run.err)
