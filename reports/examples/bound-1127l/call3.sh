#!/usr/bin/env bash
# Session l, call 3 (H200): fused_stream's lane sum in three builds of probes/stream_ab.cu on one board, three
# interleaved rounds (ab_common.sh): sab_k2 the terms straight into the lane's sum (the library before session l),
# sab_k0 each vector's terms summed on their own then a plain add, sab_k1 the same with the compensated add
# (the library now). Indices must equal sab_k2's; p rel is the largest probability change against it.
# CASES (type:V:K:sd ...) replaces the case list (call6.sh).
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ] && ! grep -q "$WANT" $O/gpu.txt; then echo "not an $WANT"; exit 3; fi
B=/tmp/bp; mkdir -p $B/ref; for f in build-probe/sab_*.xz; do n=$B/$(basename $f .xz); xz -dc $f > $n 2>/dev/null || python3 -c "import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())" $f > $n; chmod +x $n; done
source kernels/softmax_topk/probes/ab_common.sh
ab_rounds $B "sab_k2 sab_k0 sab_k1" "${CASES:-bf16:50257:10:10 f16:50257:10:10 bf16:50257:32:10 bf16:50257:256:10 f16:50257:256:10 bf16:151936:256:10 f32:50257:10:10 f32:50257:256:10 bf16:50257:1024:10}" > $O/stream-ab.txt 2>&1
ab_summary $O/stream-ab.txt "sab_k2 sab_k0 sab_k1" | tee $O/stream-ab-summary.txt
echo "stream A/B $(el) s"; grep -v "^rep" $O/stream-ab.txt | head -5
