#!/usr/bin/env bash
# Session q, call 1 (either board): fused_bound's list kernel (16-bit K in (32, 256]) on a GPU for the first time.
# 1. probes/bound_check.cu built on the workstation (-DBOUND_ONLY: the library's fused_bound.cu only, carried in
#    scratch/ as bound_check_u3 / _u2: FUSEBENCH_BOUND_LIST_U = 3 / 2): every input kind at bf16 4096 x 50257
#    K = 256, random rows at K = 64 / 128 and V = 32000 / 65536, fp16; each checked row by row against a double
#    top K and timed (cold L2, events, median of 5). The library build runs beside it.
# 2. the library (fusebench, fusebench_tests): [gpu][softmax_topk] (the new list-kernel test among them);
# 3. the suite: fused_bound against fused_stream (and fused_stream_resample) at 16-bit 4096 x {32000, 50257} K = 256
#    random, and every adversarial kind at bf16 4096 x 50257 K = 256 (CUPTI medians, --no-counters).
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
(scripts/build.sh > $O/build.log 2>&1; echo "build rc=$? at $(el) s" >> $O/build.log) &
bpid=$!
P=scratch; chmod +x $P/bound_check_u3 $P/bound_check_u2
{
for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned huge plateau; do
  timeout 60 $P/bound_check_u3 lib bf16 4096 50257 256 $k
done
for K in 33 64 128 200; do timeout 60 $P/bound_check_u3 lib bf16 4096 50257 $K random; done
timeout 60 $P/bound_check_u3 lib f16 4096 50257 256 random
timeout 60 $P/bound_check_u3 lib f16 4096 50257 256 ascending
for V in 32000 65536; do timeout 60 $P/bound_check_u3 lib bf16 4096 $V 256 random; done
for K in 64 256; do timeout 60 $P/bound_check_u2 lib bf16 4096 50257 $K random; timeout 60 $P/bound_check_u3 lib bf16 4096 50257 $K random; done
} > $O/probe.txt 2>&1
echo "probe done $(el) s"; cat $O/probe.txt | cut -c1-230
wait $bpid; tail -2 $O/build.log
[ -x build-gpu/fusebench ] || exit 1
timeout 200 build-gpu/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
echo "tests rc=$? $(el) s"; tail -4 $O/tests-softmax_topk.txt
left=$(( 560 - $(el) ))
timeout $left build-gpu/fusebench run --suite softmax_topk,softmax_topk_adversarial --full \
  --variant fused_bound,fused_stream,fused_stream_resample --dtype bf16,fp16 --no-counters \
  --case 4096x50257:K256:,4096x32000:K256: --json $O/suite.json > $O/suite.txt 2> $O/suite.err
echo "suite rc=$? $(el) s"
python3 - $O/suite.json <<'P'
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
for r in sorted(rs, key=lambda r: (r["suite"], r["dtype"], r["case"], r["variant"])):
    t = (r.get("timing") or {}).get("median_us"); d = r.get("derived") or {}
    x = d.get("time_vs_random"); p = d.get("pct_of_ceiling")
    print(f'{r["suite"][-11:]:11s} {r["dtype"]} {r["case"]:28s} {r["variant"]:22s} {r.get("outcome","?"):5s} '
          f'{"-" if t is None else round(t, 1):>8} us  floor {"-" if p is None else round(p, 1)}%  x random {"-" if x is None else round(x, 2)}')
P
cd $O && gzip -f suite.json && tar czf logs.tgz build.log suite.err 2>/dev/null; rm -f build.log suite.err
