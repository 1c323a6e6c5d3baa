#!/usr/bin/env bash
# Session p, call 4 (either board). H200: call2.sh's H200 path (the baseline and extra.sh). H100: issue 22's
# 1.5x target as it stands at this commit: the library's fused_stream_resample on every adversarial kind at
# 4096 x 50257, K = 10 and 256, fp32 and bf16, one run (CUPTI medians, --no-counters; the run table's `x random`
# column and the per-variant worst line), stopped by SIGTERM at ~520 s of the call if it runs long (the report is
# then written as interrupted with the finished cases).
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
board=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | grep -oE 'h100|h200' | head -1)
echo "board: ${board:-unknown}"
if [ "$board" = h200 ]; then exec bash reports/examples/pr-1127p/call2.sh; fi
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS=fusebench
scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; exit 1; }
echo "build $(el) s"
left=$(( 520 - $(el) ))
timeout $left build-gpu/fusebench run --suite softmax_topk_adversarial --variant fused_stream_resample --dtype fp32,bf16 \
  --no-counters --case 4096x50257:K10:,4096x50257:K256: --json $O/adv.json > $O/adv.txt 2> $O/adv.err
echo "run rc=$? $(el) s"
grep -E "passed,|x random|worst|fused_stream_resample (fp32|bf16):" $O/adv.txt | head -20
python3 - $O/adv.json <<'P'
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
rows = []
for r in rs:
    t = (r.get("timing") or {}).get("median_us"); d = r.get("derived") or {}
    rows.append((r["dtype"], r["case"], r.get("outcome"), t, d.get("time_vs_random"), d.get("pct_of_ceiling")))
for ty, c, o, t, x, p in sorted(rows):
    print(f"{ty} {c:30s} {o:5s} {'-' if t is None else round(t, 1):>8} us  x random {'-' if x is None else round(x, 2):>5}  floor {'-' if p is None else round(p, 1)}%"
          + ("  OVER 1.5x" if x is not None and x > 1.5 else ""))
P
gzip -f $O/build.log $O/adv.json
