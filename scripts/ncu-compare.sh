#!/usr/bin/env bash
# Cross-checks fusebench's CUPTI timing and DRAM counters against Nsight Compute on one case, on a
# GPU machine. Usage: scripts/ncu-compare.sh [--suite S --case C --dtype T] (default: GLU SwiGLU
# 4096x14336 bf16). Writes fusebench.json, ncu.csv and prints a table; needs a built build dir
# ($FUSEBENCH_BUILD_DIR, default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSEBENCH_BUILD_DIR:-$root/build}
out=${OUT:-$root/out}
mkdir -p "$out"
sel=("$@")
[ ${#sel[@]} -gt 0 ] || sel=(--suite glu --case swiglu:4096x14336 --dtype bf16)
# 1. fusebench: CUPTI timing + counter pass.
"$build/fusebench" run "${sel[@]}" --json "$out/fusebench.json" >/dev/null 2>"$out/fusebench.err" || true
# 2. Nsight Compute on one verified launch per variant (--profile-once), clocks left alone.
#    fusebench flushes L2 before that launch as before a cold sample, so by default ncu's own cache
#    control is off: a multi-kernel variant then runs as in fusebench's passes, without a flush
#    between its kernels. NCU_CACHE_CONTROL=all flushes before every kernel instead, which writes
#    back the dirty lines one kernel leaves for the next outside any kernel (the GLU naive
#    baseline's intermediate: about 17.6 MB fewer DRAM bytes in its second kernel on an H200).
ncu --clock-control none --cache-control "${NCU_CACHE_CONTROL:-none}" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
    "$build/fusebench" run "${sel[@]}" --profile-once --no-ceilings --json "$out/profile-once.json" \
    >"$out/ncu.csv" 2>"$out/ncu.err" || true
python3 "$root/scripts/ncu_table.py" "$out/fusebench.json" "$out/ncu.csv"
