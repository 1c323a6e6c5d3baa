#!/usr/bin/env bash
# Device script (not part of the build): fused_bound's list kernel (16-bit K in (32, 256]) built once per variant
# from one source with its compile-time knobs (probes/bound_check.cu -DBOUND_ONLY, `lib`), timed on one board.
# Every run checks its rows against a double top K (probes/topk16_check.cuh; every 7th row at 4096 rows, more on
# the odd-row shapes) and times the launch (cold L2, events, median of 5).
#   VARIANTS="lib=;plain=-DFUSEBENCH_BOUND_LIST_X=1" OUT=/tmp/out bash kernels/softmax_topk/probes/list_ab.sh
# VARIANTS: ';'-separated name=flags, the first the reference (empty flags: the library as committed);
# ROUNDS (2): rounds over the main cases, the variants' order reversed on even rounds; ADV (1): also every
# adversarial kind once at bf16 4096 x 50257 K = 256; ODD (1): the odd-row shapes for each variant but the first;
# TL (1): each variant built again with FUSEBENCH_BOUND_LIST_TL=1 and its phase timeline printed for three cases.
# Outputs under OUT: gpu.txt, probe.txt (every run, prefixed with its variant), summary.txt (list_ab_summary.py),
# builds.tgz (each build's ptxas report: registers and spills). About 60-70 s of builds, then ~0.7 s a run.
set -uo pipefail
: "${VARIANTS:?VARIANTS=\"name=flags;...\" is required}"
O=${OUT:-/tmp/out}; mkdir -p "$O"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
echo "VARIANTS=$VARIANTS" | tee -a "$O/gpu.txt"
P=/tmp/list_ab; B=$P/builds; mkdir -p "$B"
NV="nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. -DBOUND_ONLY -Xptxas -v"
SRC=kernels/softmax_topk/probes/bound_check.cu
names=()
IFS=';' read -r -a entries <<< "$VARIANTS"
for e in "${entries[@]}"; do
  name=${e%%=*} flags=${e#*=}
  names+=("$name")
  # shellcheck disable=SC2086  # the flags are words
  $NV $flags $SRC -o "$P/$name" > "$B/$name.txt" 2>&1 &
  # shellcheck disable=SC2086
  [ "${TL:-1}" = 1 ] && $NV $flags -DFUSEBENCH_BOUND_LIST_TL=1 $SRC -o "$P/${name}_tl" > "$B/${name}_tl.txt" 2>&1 &
done
wait
for b in "${names[@]}"; do [ -x "$P/$b" ] || { echo "build $b failed:"; tail -20 "$B/$b.txt"; exit 1; }; done
echo "built $(el) s"
(cd "$P" && tar czf "$O/builds.tgz" builds)
run() {  # each output line tagged with the variant; a run that printed nothing (crash, timeout) says so
  local b=$1 out; shift
  out=$(timeout 60 "$P/$b" lib "$@" 2>&1); local rc=$?
  if [ -n "$out" ]; then printf '%s\n' "$out" | sed "s/^/[$b] /"; fi
  [ $rc = 0 ] || echo "[$b] RUN FAILED rc=$rc: lib $*"
}
rev=$(printf '%s\n' "${names[@]}" | tac | tr '\n' ' ')
{
for ((round = 1; round <= ${ROUNDS:-2}; ++round)); do
  if [ $((round % 2)) = 1 ]; then ord="${names[*]}"; else ord=$rev; fi
  for b in $ord; do
    for k in random descending ascending; do run "$b" bf16 4096 50257 256 $k; done
    run "$b" f16 4096 50257 256 random
    run "$b" bf16 4096 32000 256 random
    for K in 64 128; do run "$b" bf16 4096 50257 $K random; done
  done
done
if [ "${ADV:-1}" = 1 ]; then
  for k in ties all_equal cluster256 masked nan posinf all_masked misaligned huge plateau; do
    for b in "${names[@]}"; do run "$b" bf16 4096 50257 256 $k; done
  done
fi
if [ "${ODD:-1}" = 1 ]; then
  for b in "${names[@]:1}"; do
    run "$b" bf16 1000 50257 256 random; run "$b" f16 4100 32000 64 ties 1; run "$b" bf16 100 50257 128 ascending
  done
fi
if [ "${TL:-1}" = 1 ]; then
  for b in "${names[@]}"; do
    for k in random descending; do run "${b}_tl" bf16 4096 50257 256 $k; done
    run "${b}_tl" f16 4096 50257 256 random
  done
fi
} > "$O/probe.txt" 2>&1
echo "runs done $(el) s"
python3 kernels/softmax_topk/probes/list_ab_summary.py "$O/probe.txt" "${names[@]}" | tee "$O/summary.txt"
