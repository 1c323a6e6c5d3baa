#!/usr/bin/env bash
# Session p, call 2's FUSEBENCH_EXTRA on an H200 (after the default run, from gpu-check's build): the softmax_topk
# GPU tests, the time_vs_random CLI test, and session o's call 4 (pr-1127o/call4.sh without its build).
B=${FUSEBENCH_BUILD_DIR:-build-gpu}; O=$OUT
timeout 150 $B/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "softmax_topk tests rc=$?: $(tail -2 $O/tests-softmax_topk.txt | tr '\n' ' ')"
timeout 90 $B/fusebench_tests "a run of an adversarial pair reports time_vs_random and prints it" > $O/tests-tvr.txt 2>&1
echo "tvr test rc=$?: $(tail -2 $O/tests-tvr.txt | tr '\n' ' ')"
for ty in fp32 bf16; do
  timeout 150 $B/fusebench run --suite softmax_topk_adversarial --no-counters --dtype $ty --variant fused_stream_resample \
    --case 4096x50257:K256: --json $O/adv-$ty.json > $O/adv-$ty.txt 2> $O/adv-$ty.err
  echo "$ty rc=$?: $(grep -E 'passed,' $O/adv-$ty.txt | tail -1)"
done
python3 - "$O" <<'P'
import json, sys, os
for ty in ("fp32", "bf16"):
    p = os.path.join(sys.argv[1], f"adv-{ty}.json")
    if not os.path.exists(p): continue
    rs = json.load(open(p))["results"]
    t = {r["case"]: r for r in rs}
    base = next((r for c, r in t.items() if c.endswith(":std1")), None)
    b = base["timing"]["median_us"] if base and base.get("timing") else None
    for c, r in sorted(t.items()):
        m = (r.get("timing") or {}).get("median_us")
        tvr = (r.get("derived") or {}).get("time_vs_random")
        print(f"{ty} {c:32s} {r.get('outcome')} {m if m is None else round(m, 2)} us  x std1 {'-' if not (m and b) else round(m / b, 3)}"
              f"  report {'-' if tvr is None else round(tvr, 3)}")
P
