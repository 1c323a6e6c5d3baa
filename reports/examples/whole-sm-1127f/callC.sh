#!/usr/bin/env bash
# Call C: does sharing pay once its kernel does not spill? H100 with the L2 prefetch off in every variant
# (the share kernel's PF = 1 forms spill 36-52 bytes a thread; its PF = 0 forms do not).
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; t0=$(date +%s)
VARIANTS="whole=;wpf0=-DFUSEBENCH_STREAM_L2PF=0;spf0=-DFUSEBENCH_STREAM_SHARE=1 -DFUSEBENCH_STREAM_L2PF=0" TAG=share_pf0 \
CASES="bf16:50257:10:10 bf16:32000:10:10 f16:50257:10:10 bf16:151936:10:10" \
OUT=$O timeout 500 bash kernels/softmax_topk/probes/knob_ab.sh > "$O/share_pf0.log" 2>&1
echo "ab rc=$? ($(( $(date +%s) - t0 )) s)"; tail -6 "$O/share_pf0.log"
