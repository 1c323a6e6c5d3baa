#!/usr/bin/env bash
# Session m, call 4 (either board): fused_stream_resample's route of rows with a plateau at the threshold's value
# to the retry kernel (tied_threshold, kernels/softmax_topk/fused_stream.cu; fused_stream's kernels are
# byte-identical to before, textcmp of the cubins). A/B in one build by the environment knob FUSEBENCH_TIE_ROUTE
# (0: the test off, the code before): the adversarial selection's K = 256 cases (every kind, 4096 x {50257,
# 151936}, fp32 / bf16) for fused_stream_resample, new and old interleaved by dtype, then [gpu][softmax_topk].
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -qi "$WANT" $O/gpu.txt; then echo "wanted $WANT"; exit 3; fi
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
scripts/build.sh > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(el) s"
CASES="${CASES:-4096x50257:K256:,4096x151936:K256:}"  # call4.sh: every K = 256 case; call5.sh / call6.sh name fewer
for ty in fp32 bf16; do for knob in 1 0; do
  FUSEBENCH_TIE_ROUTE=$knob timeout 200 build-gpu/fusebench run --suite softmax_topk_adversarial --no-counters --dtype $ty \
    --variant fused_stream_resample --case "$CASES" \
    --json $O/tie-$ty-$knob.json > /tmp/tie-$ty-$knob.txt 2> /tmp/tie-$ty-$knob.err
  echo "$ty knob $knob rc=$? $(el) s: $(grep -E 'passed,' /tmp/tie-$ty-$knob.txt | tail -1)"
done; done
python3 - $O <<'PY' | tee $O/tie-summary.txt
import json, sys, glob, collections
t = collections.defaultdict(dict); out = {}
for f in sorted(glob.glob(sys.argv[1] + "/tie-*.json")):
    knob = f.rsplit("-", 1)[1].split(".")[0]
    for r in json.load(open(f))["results"]:
        us = (r.get("timing") or {}).get("median_us")
        t[(r["case"], r["dtype"])][knob] = (us, r["outcome"])
std = {}
for (case, dt), m in t.items():
    if case.endswith(":std1"): std[(case.rsplit(":", 1)[0], dt)] = m
print(f"{'case':34s} {'dtype':5s} {'old us':>9s} {'new us':>9s} {'new/old':>8s} {'old/std1':>8s} {'new/std1':>8s} outcomes")
for (case, dt), m in sorted(t.items()):
    o, n = m.get("0", (None, "-")), m.get("1", (None, "-"))
    s = std.get((case.rsplit(":", 1)[0], dt), {})
    so, sn = s.get("0", (None,))[0], s.get("1", (None,))[0]
    f = lambda a, b: f"{a / b:8.3f}" if a and b else "       -"
    print(f"{case:34s} {dt:5s} {o[0] or 0:9.2f} {n[0] or 0:9.2f} {f(n[0], o[0])} {f(o[0], so)} {f(n[0], sn)} {o[1]}/{n[1]}")
PY
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "tests rc=$? $(el) s: $(tail -3 $O/tests-softmax_topk.txt | tr '\n' ' ')"
cat /tmp/tie-*.txt > $O/tie-runs.txt; for f in $O/tie-*.json; do gzip -f $f; done
