#!/usr/bin/env bash
# Device script (not part of the build): fused_stream built once per variant from one source with its
# own probe knobs (-D... of fused_stream.cu), timed on one board: probes/stream_ab.cu, events, cold L2,
# median of 5 launches, three interleaved rounds; indices must equal the first variant's, probabilities
# may move in their last bits (p rel, printed; above 1e-6 is a finding). The device's own choices
# otherwise (L2 prefetch, Lean, routing) unless COMMON_FLAGS fixes them.
#   VARIANTS="base=;w32=-DFUSEBENCH_STREAM_WARPS=32" OUT=/tmp/out bash kernels/softmax_topk/probes/knob_ab.sh
# VARIANTS: ';'-separated name=flags (the first is the reference; empty flags: the library's defaults);
# COMMON_FLAGS: added to every build; CASES: the case list (type:V:K:sd, sd -1 = ascending rows); TAG names
# the output file and the build folder. ~3 min for two or three variants (builds in parallel, then runs).
set -uo pipefail
: "${VARIANTS:?VARIANTS=\"name=flags;...\" is required}"
O=${OUT:-/tmp/out}; mkdir -p "$O"
tag=${TAG:-knob_ab}
dir=/tmp/$tag
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
echo "COMMON_FLAGS=${COMMON_FLAGS:-}; VARIANTS=$VARIANTS" | tee -a "$O/gpu.txt"
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. ${COMMON_FLAGS:-}"
P=kernels/softmax_topk/probes
mkdir -p "$dir/ref"
names=() pids=()
IFS=';' read -r -a entries <<< "$VARIANTS"
for e in "${entries[@]}"; do
  name=${e%%=*} flags=${e#*=}
  names+=("$name")
  # shellcheck disable=SC2086  # the flags are words
  $NV $flags $P/stream_ab.cu -o "$dir/$name" &
  pids+=($!)
done
wait "${pids[@]}"  # these builds only (a caller's own background jobs are not waited for)
for b in "${names[@]}"; do [ -x "$dir/$b" ] || { echo "build $b failed"; exit 1; }; done
CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:32000:10:10 bf16:151936:10:10 bf16:50257:32:10 bf16:50257:64:10 bf16:50257:256:10 f16:50257:256:10 bf16:151936:256:10 f32:50257:10:10 f32:50257:256:10 bf16:50257:1024:10 bf16:50257:10:-1"}
. "$P/ab_common.sh"
ab_rounds "$dir" "${names[*]}" "$CASES" | tee "$O/$tag.txt"
ab_summary "$O/$tag.txt" "${names[*]}"
