#!/usr/bin/env bash
# Call F: the share kernel with chunked owner claims (C batches an atomic, claimed one batch ahead, unchecked
# refills inside the owner's batches) against the library (one block of 32 warps), knob_ab.sh, 4096 rows.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; t0=$(date +%s)
VARIANTS="lib=;share4=-DFUSEBENCH_STREAM_SHARE=1;share8=-DFUSEBENCH_STREAM_SHARE=1 -DFUSEBENCH_STREAM_SHARE_CHUNK=8" TAG=share_chunk \
CASES="bf16:50257:10:10 bf16:32000:10:10 f16:50257:10:10 bf16:151936:10:10 bf16:50257:10:-1" \
OUT=$O timeout 520 bash kernels/softmax_topk/probes/knob_ab.sh > "$O/share_chunk.log" 2>&1
echo "ab rc=$? ($(( $(date +%s) - t0 )) s)"; tail -7 "$O/share_chunk.log"
