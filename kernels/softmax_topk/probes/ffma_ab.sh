#!/usr/bin/env bash
# Device script (not part of the build): fused_stream with and without FUSEBENCH_STREAM_FFMA (a term in one
# FFMA, exp2(fma(x, log2e, -bl)); rows whose fast sum is not finite or whose |max| > 2^20 summed again
# exactly; fused_stream.cu, the comment above lane_stats), built from one source, the device's own
# choices otherwise (L2 prefetch, Lean, routing), timed on one board: probes/stream_ab.cu, events, cold L2,
# median of 5 launches, three interleaved rounds; indices must equal the base build's, probabilities move
# in their last bits (p rel, printed; above 1e-6 is a finding). Written for an H200, where the 16-bit
# stream is issue-bound (kernels/softmax_topk/NOTES.md, 2026-11-27); on an H100 topk8's earlier form
# bought 0.7%.
#   OUT=/tmp/out bash kernels/softmax_topk/probes/ffma_ab.sh      (~2.5 min: two builds in parallel, then runs)
# Correctness of the knob beyond random rows (extreme, NaN, +inf, -inf-prefixed rows): build the tests with
# it, `FUSEBENCH_BUILD_DIR=build-ffma scripts/build.sh -DCMAKE_CUDA_FLAGS=-DFUSEBENCH_STREAM_FFMA=1`, then
# `build-ffma/fusebench_tests "[gpu][softmax_topk]"`; the cost of the exact pass on those rows:
# `build-ffma/fusebench run --suite softmax_topk_adversarial --case "4096x50257:K10:huge,4096x50257:K10:nan,4096x50257:K10:posinf,4096x50257:K10:std1"
# --variant fused_stream,fused_stream_resample --no-counters` against the same from build-gpu.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
P=kernels/softmax_topk/probes
mkdir -p /tmp/ffma_ab/ref
$NV $P/stream_ab.cu -o /tmp/ffma_ab/base &
$NV -DFUSEBENCH_STREAM_FFMA=1 $P/stream_ab.cu -o /tmp/ffma_ab/ffma &
wait
for b in base ffma; do [ -x /tmp/ffma_ab/$b ] || { echo "build $b failed"; exit 1; }; done
# CASES overrides the list (type:V:K:sd, sd -1 = ascending rows).
CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:32:10 bf16:50257:64:10 bf16:50257:256:10 f16:50257:256:10 bf16:151936:256:10 f32:50257:10:10 f32:50257:256:10 bf16:50257:1024:10 bf16:50257:10:-1"}
. "$P/ab_common.sh"
ab_rounds /tmp/ffma_ab "base ffma" "$CASES" | tee "$O/ffma_ab.txt"
ab_summary "$O/ffma_ab.txt" "base ffma"
