#!/usr/bin/env bash
# Session p, call 2's FUSEBENCH_EXTRA on an H200 (after the default run, from gpu-check's build): the softmax_topk
# GPU tests, the time_vs_random CLI test, and call 4's selection (every adversarial kind at 4096 x 50257, K = 10
# and 256, fp32 and bf16, fused_stream_resample; the time / std1 time beside the report's own time_vs_random).
B=${FUSEBENCH_BUILD_DIR:-build-gpu}; O=$OUT
timeout 150 $B/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "softmax_topk tests rc=$?: $(tail -2 $O/tests-softmax_topk.txt | tr '\n' ' ')"
timeout 90 $B/fusebench_tests "a run of an adversarial pair reports time_vs_random and prints it" > $O/tests-tvr.txt 2>&1
echo "tvr test rc=$?: $(tail -2 $O/tests-tvr.txt | tr '\n' ' ')"
# K = 10 and 256 (call 4's selection: issue 22's 1.5x target; 79 s of run on an H100)
for ty in fp32 bf16; do
  timeout 150 $B/fusebench run --suite softmax_topk_adversarial --no-counters --dtype $ty --variant fused_stream_resample \
    --case 4096x50257:K10:,4096x50257:K256: --json $O/adv-$ty.json > $O/adv-$ty.txt 2> $O/adv-$ty.err
  echo "$ty rc=$?: $(grep -E 'passed,' $O/adv-$ty.txt | tail -1)"
done
python3 - "$O" <<'P'
import json, sys, os
for ty in ("fp32", "bf16"):
    p = os.path.join(sys.argv[1], f"adv-{ty}.json")
    if not os.path.exists(p): continue
    for r in sorted(json.load(open(p))["results"], key=lambda r: r["case"]):
        t = (r.get("timing") or {}).get("median_us"); x = (r.get("derived") or {}).get("time_vs_random")
        print(f"{ty} {r['case']:30s} {r.get('outcome'):5s} {'-' if t is None else round(t, 1):>8} us  x random "
              f"{'-' if x is None else round(x, 2):>5}" + ("  OVER 1.5x" if x is not None and x > 1.5 else ""))
P
