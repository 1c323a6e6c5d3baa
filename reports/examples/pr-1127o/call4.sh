#!/usr/bin/env bash
# Session o, call 4 (either board): the library's fused_stream_resample on every adversarial kind at 4096 x 50257
# K = 256 (the shape of issue 22's 1.5x target where the session's two knobs act), fp32 and bf16, one run a dtype.
# Outputs: adv-<dtype>.txt / .json under $OUT, the board's line in gpu.txt.
source reports/examples/pr-1127n/begin.sh
export FUSEBENCH_TARGETS=fusebench
build_lib
for ty in fp32 bf16; do
  timeout 150 $B/fusebench run --suite softmax_topk_adversarial --no-counters --dtype $ty --variant fused_stream_resample \
    --case 4096x50257:K256: --json $O/adv-$ty.json > $O/adv-$ty.txt 2> $O/adv-$ty.err
  echo "$ty rc=$? $(el) s: $(grep -E 'passed,' $O/adv-$ty.txt | tail -1)"
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
        tvr = (r.get("derived") or {}).get("time_vs_random")  # the report's own ratio (since 2026-11-28): must agree
        print(f"{ty} {c:32s} {r.get('outcome')} {m if m is None else round(m, 2)} us  x std1 {'-' if not (m and b) else round(m / b, 3)}"
              f"  report {'-' if tvr is None else round(tvr, 3)}")
P
