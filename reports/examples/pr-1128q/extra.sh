#!/usr/bin/env bash
# Session q, call 5's FUSEBENCH_EXTRA (after the default run, from gpu-check's build): the softmax_topk GPU tests,
# then fused_bound (the list kernel at K = 256) against fused_stream and fused_stream_resample at 16-bit
# 4096 x {32000, 50257} K = 256 random and every adversarial kind at bf16 / fp16 4096 x 50257 K = 256.
B=${FUSEBENCH_BUILD_DIR:-build-gpu}; O=$OUT
timeout 150 $B/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "softmax_topk tests rc=$?: $(tail -2 $O/tests-softmax_topk.txt | tr '\n' ' ')"
timeout 200 $B/fusebench run --suite softmax_topk,softmax_topk_adversarial --full \
  --variant fused_bound,fused_stream,fused_stream_resample --dtype bf16,fp16 --no-counters \
  --case 4096x50257:K256:,4096x32000:K256: --json $O/k256.json > $O/k256.txt 2> $O/k256.err
echo "k256 rc=$?: $(grep -E 'passed,' $O/k256.txt | tail -1)"
python3 - $O/k256.json <<'P'
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
for r in sorted(rs, key=lambda r: (r["suite"], r["dtype"], r["case"], r["variant"])):
    t = (r.get("timing") or {}).get("median_us"); d = r.get("derived") or {}
    x = d.get("time_vs_random"); p = d.get("pct_of_ceiling")
    print(f'{r["suite"][-11:]:11s} {r["dtype"]} {r["case"]:28s} {r["variant"]:22s} {r.get("outcome","?"):5s} '
          f'{"-" if t is None else round(t, 1):>8} us  floor {"-" if p is None else round(p, 1)}%  x random {"-" if x is None else round(x, 2)}')
P
gzip -f $O/k256.json
