#!/usr/bin/env bash
# Session l, call 5 (WANT=H100 / H200): fused_bound's terms in two operations, exp2((x - m) log2e) (the library,
# FUSEBENCH_BOUND_TWO_OP=1: exact at any magnitude, no second read for rows of |M| >= 2^20) against one FFMA with
# the exact re-read (=0, calls 2 and 4), probes/bound_check.cu -DBOUND_ONLY built on the workstation (bcb_t1 / bcb_t0,
# gzipped in build-probe/). While the library builds: the probe's checks of bcb_t1 on every kind and the A/B; then
# the suite's softmax_topk GPU tests and the default run (the board's baseline).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
B=/tmp/bp; mkdir -p $B; for f in build-probe/bcb_t*.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
(scripts/build.sh > /tmp/build.log 2>&1; echo "rc=$?" > /tmp/build.rc) &
bp=$!
P=$O/probe.txt
for ty in bf16 f16; do
  for K in 1 10 16 32; do for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned huge plateau; do
    timeout 60 $B/bcb_t1 lib $ty 64 50257 $K $k >> $P 2>&1 || echo "rc=$? $ty 64 50257 $K $k" >> $P; done; done
  for s in "3 1 1" "5 7 7" "4 31 31" "6 4099 1" "6 9000 32" "2 52224 20" "9 17 16" "130 300 3" "20 65536 32" "7 2066 10" "6 50256 16"; do
    for k in random misaligned huge plateau; do timeout 60 $B/bcb_t1 lib $ty $s $k >> $P 2>&1 || echo "rc=$? $ty $s $k" >> $P; done; done
done
echo "checks $(el) s: $(grep -c PASS $P) pass, $(grep -c 'FAIL\|rc=\|threw' $P) fail"; grep 'FAIL\|rc=\|threw' $P | head -8
T=$O/bound-ab.txt
for rep in 1 2; do
  for ty in bf16 f16; do for V in 32000 50257 65536; do for K in 10 32; do for b in bcb_t0 bcb_t1; do
    echo "rep$rep $b $($B/$b lib $ty 4096 $V $K random 2>&1 | grep -o 'LIB.*')" >> $T; done; done; done; done
  for k in huge ascending all_equal; do for b in bcb_t0 bcb_t1; do
    echo "rep$rep $b $($B/$b lib bf16 4096 50257 10 $k 2>&1 | grep -o 'LIB.*')" >> $T; done; done
done
python3 - $T <<'PY' | tee $O/bound-ab-summary.txt
import collections, re, statistics, sys
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    m = re.match(r'rep\d (\S+) LIB\s+(\S+) (\d+) x (\d+) K (\d+) (\S+)\s*: (\S+).*?median ([\d.]+) us', l)
    if m: t[m.group(2, 4, 5, 6)][m.group(1)].append(float(m.group(8)))
    elif l.strip(): print("unparsed:", l.strip()[:160])
for key in sorted(t):
    a, b = statistics.median(t[key]['bcb_t0']), statistics.median(t[key]['bcb_t1'])
    print(f"{key[0]:5s} 4096 x {key[1]:>6s} K {key[2]:>3s} {key[3]:10s} t0 {a:7.1f} t1 {b:7.1f} us  t1/t0 {b / a:.3f}")
PY
timeout 100 compute-sanitizer --tool memcheck $B/bcb_t1 lib bf16 300 9000 32 huge > /tmp/san.txt 2>&1; echo "memcheck rc=$? $(tail -1 /tmp/san.txt)"; cat /tmp/san.txt >> $P
echo "probe done $(el) s"
wait $bp; grep -q "rc=0" /tmp/build.rc || { tail -30 /tmp/build.log; exit 1; }
echo "build $(el) s"
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "tests rc=$? $(el) s: $(tail -3 $O/tests-softmax_topk.txt | tr '\n' ' ')"
label=$(grep -oiE 'h100|h200' $O/gpu.txt | head -1 | tr 'A-Z' 'a-z')
timeout $(( 590 - $(el) )) build-gpu/fusebench run --json $O/${label:-gpu}.json > $O/run.txt 2> $O/run.err
echo "run rc=$? $(el) s"; tail -2 $O/run.err
f=$O/${label:-gpu}.json; [ -f $f ] && [ $(stat -c %s $f) -gt 15000000 ] && gzip -f $f
grep -E "fail" $O/run.txt | head; grep -E "fused_bound|fused_stream " $O/run.txt | grep -v skipped | grep -v " - " | head -20
