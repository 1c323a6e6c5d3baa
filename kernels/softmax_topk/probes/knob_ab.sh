#!/usr/bin/env bash
# Device script (not part of the build): fused_stream built twice from one source, BASE_FLAGS against
# KNOB_FLAGS (-D... probe knobs of fused_stream.cu; either may be empty: the library's defaults), timed on one
# board: probes/stream_ab.cu, events, cold L2, median of 5 launches, three interleaved rounds; indices must
# equal the first build's, probabilities may move in their last bits (p rel, printed; above 1e-6 is a
# finding). The device's own choices otherwise (L2 prefetch, Lean, routing).
#   BASE_FLAGS="" KNOB_FLAGS="-DFUSEBENCH_STREAM_TWO_SUMS=1" NAMES="base two" OUT=/tmp/out \
#     bash kernels/softmax_topk/probes/knob_ab.sh            (~3 min: two builds in parallel, then runs)
# CASES overrides the case list (type:V:K:sd, sd -1 = ascending rows); TAG names the output file.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
read -r n0 n1 <<< "${NAMES:-base knob}"
tag=${TAG:-knob_ab}
dir=/tmp/$tag
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I."
P=kernels/softmax_topk/probes
mkdir -p "$dir/ref"
# shellcheck disable=SC2086  # the flags are words
$NV ${BASE_FLAGS:-} $P/stream_ab.cu -o "$dir/$n0" &
# shellcheck disable=SC2086
$NV ${KNOB_FLAGS:-} $P/stream_ab.cu -o "$dir/$n1" &
wait
for b in "$n0" "$n1"; do [ -x "$dir/$b" ] || { echo "build $b failed"; exit 1; }; done
CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:32:10 bf16:50257:64:10 bf16:50257:256:10 f16:50257:256:10 bf16:151936:256:10 f32:50257:10:10 f32:50257:256:10 bf16:50257:1024:10 bf16:50257:10:-1"}
. "$P/ab_common.sh"
ab_rounds "$dir" "$n0 $n1" "$CASES" | tee "$O/$tag.txt"
ab_summary "$O/$tag.txt" "$n0 $n1"
