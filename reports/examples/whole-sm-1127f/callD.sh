#!/usr/bin/env bash
# Call D: the 32-warp blocks one an SM with the rows spread evenly (FUSEBENCH_STREAM_SPREAD, 132 blocks of
# 31-32 rows) against the library (128 blocks of 32 rows, 4 SMs idle), 4096 rows, knob_ab.sh.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; t0=$(date +%s)
VARIANTS="lib=;spread=-DFUSEBENCH_STREAM_SPREAD=1" TAG=spread_ab \
CASES="bf16:50257:10:10 bf16:32000:10:10 f16:50257:10:10 bf16:151936:10:10 bf16:50257:16:10 f32:50257:10:10 bf16:50257:10:-1" \
OUT=$O timeout 500 bash kernels/softmax_topk/probes/knob_ab.sh > "$O/spread_ab.log" 2>&1
echo "ab rc=$? ($(( $(date +%s) - t0 )) s)"; tail -9 "$O/spread_ab.log"
