#!/usr/bin/env bash
# Device script (not part of the build): fused_stream with the two-op terms everywhere (FUSEBENCH_STREAM_FFMA=0,
# "base") against the library ("ffma": one-FFMA terms in its 16-bit kernels; fused_stream.cu, above lane_stats_t),
# built from one source, the device's own choices otherwise (L2 prefetch, Lean, routing), timed on one board:
# probes/stream_ab.cu, events, cold L2, median of 5 launches, three interleaved rounds; indices must equal the
# base build's, probabilities move in their last bits (p rel, printed; above 1e-6 is a finding). fp32 is the
# same code in both builds (a control). Measured on an H200 2026-11-27 (NOTES, "One-FFMA terms").
#   OUT=/tmp/out bash kernels/softmax_topk/probes/ffma_ab.sh      (~3 min: two builds in parallel, then runs)
# Rows of extreme logits: the test "fused_stream: rows of extreme logits next to ordinary ones" ([gpu][softmax_topk]).
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
P=kernels/softmax_topk/probes
mkdir -p /tmp/ffma_ab/ref
$NV -DFUSEBENCH_STREAM_FFMA=0 $P/stream_ab.cu -o /tmp/ffma_ab/base &
$NV $P/stream_ab.cu -o /tmp/ffma_ab/ffma &
wait
for b in base ffma; do [ -x /tmp/ffma_ab/$b ] || { echo "build $b failed"; exit 1; }; done
# CASES overrides the list (type:V:K:sd, sd -1 = ascending rows).
CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:32:10 bf16:50257:64:10 bf16:50257:256:10 f16:50257:256:10 bf16:151936:256:10 f32:50257:10:10 f32:50257:256:10 bf16:50257:1024:10 bf16:50257:10:-1"}
. "$P/ab_common.sh"
ab_rounds /tmp/ffma_ab "base ffma" "$CASES" | tee "$O/ffma_ab.txt"
ab_summary "$O/ffma_ab.txt" "base ffma"
