#!/usr/bin/env bash
# Call A (2026-11-27 session 2): base / WHOLE_SM / SHARE timed and index-compared with knob_ab on one board.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
t0=$(date +%s)
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$O/gpu0.txt"
VARIANTS="base=;whole=-DFUSEBENCH_STREAM_WHOLE_SM=1;share=-DFUSEBENCH_STREAM_SHARE=1" TAG=share_ab \
CASES="bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:16:10 f32:50257:10:10 bf16:50257:10:1 bf16:50257:10:-1" \
OUT=$O timeout 540 bash kernels/softmax_topk/probes/knob_ab.sh > "$O/share_ab.log" 2>&1
echo "ab rc=$? ($(( $(date +%s) - t0 )) s)"; tail -12 "$O/share_ab.log"
