#!/usr/bin/env bash
# One call on a machine with two or more GPUs: build, run the default suites on one GPU, then the
# same selection sharded over N GPUs (one process per GPU, --device i --shard i+1/N), merge the
# shards, and write both reports and the wall times under $OUT (or ./out).
# Usage: scripts/sharded-run.sh [N] [fusebench run args...]   (N defaults to the GPU count)
# Environment: FUSEBENCH_SKIP_SINGLE=1 skips the one-GPU run.
set -uo pipefail
ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { local d=$(( $(ms) - $1 )); printf "%d.%03d" $((d / 1000)) $((d % 1000)); }
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
export FUSEBENCH_BUILD_DIR=${FUSEBENCH_BUILD_DIR:-$root/build-gpu}
ngpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
n=${1:-$ngpu}
[ $# -gt 0 ] && shift
if [ "$n" -lt 2 ] || [ "$n" -gt "$ngpu" ]; then
  echo "sharded-run: need 2 <= N <= $ngpu GPUs, got N=$n" >&2; exit 2
fi
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpus.txt"
nvidia-smi topo -m >"$out/topo.txt" 2>&1
t0=$(date +%s)
if ! "$root/scripts/build.sh" >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; echo "BUILD FAILED"; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s" | tee "$out/times.txt"
fb="$FUSEBENCH_BUILD_DIR/fusebench"

if [ "${FUSEBENCH_SKIP_SINGLE:-0}" != 1 ]; then
  s=$(ms)
  "$fb" run --device 0 --json "$out/one-gpu.json" "$@" >"$out/one-gpu.txt" 2>"$out/one-gpu.err"
  rc=$?
  echo "one GPU: rc=$rc wall $(secs "$s") s" | tee -a "$out/times.txt"
fi

s=$(ms)
pids=()
for ((i = 0; i < n; i++)); do
  "$fb" run --device "$i" --shard "$((i + 1))/$n" --json "$out/shard$((i + 1)).json" "$@" \
    >"$out/shard$((i + 1)).txt" 2>"$out/shard$((i + 1)).err" &
  pids+=($!)
done
for ((i = 0; i < n; i++)); do
  wait "${pids[$i]}"; echo "shard $((i + 1))/$n on GPU $i: rc=$? wall $(secs "$s") s" | tee -a "$out/times.txt"
done
echo "sharded over $n GPUs: wall $(secs "$s") s" | tee -a "$out/times.txt"
shards=()
for ((i = 1; i <= n; i++)); do shards+=("$out/shard$i.json"); done
"$fb" merge "$out/merged.json" "${shards[@]}" >"$out/merge.txt" 2>&1
echo "merge rc=$?" | tee -a "$out/times.txt"
tail -3 "$out/merge.txt"
for f in "$out"/*.err; do echo "== $f"; tail -3 "$f"; done
cat "$out/times.txt"
