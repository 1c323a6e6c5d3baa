#!/usr/bin/env bash
# GPU acceptance of the regression gate, in one call on a GPU machine:
#   1. builds fusebench twice at once: normally (build-gpu) and with the gate-test slowdown
#      (build-gpu-slow, -DFUSEBENCH_SLOWDOWN_FOR_GATE_TEST=glu/fused_vec);
#   2. slowdown check: a normal run, then a run of the slowed build, compared: expect exit 1 and
#      SLOWER for glu fused_vec only;
#   3. A/A check: five more normal runs; the six normal runs compared pairwise in order (5
#      comparisons): expect exit 0 and no SLOWER.
# Each run is `fusebench run --suite glu --case 4096x14336 --raw-samples $AA_RUN_ARGS` with its own
# report. Reports, comparisons (terminal, Markdown, JSON, JUnit) and logs go to ./out/aa, or, when
# $OUT is set (a device call), into the single archive $OUT/aa-check.tgz. A deadline (AA_DEADLINE_S, default 400 s) stops before a run that would not finish:
# the slowdown check runs first, so a short budget still gets it and as many A/A pairs as fit.
# Exit 0 when every check that ran passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}/aa
mkdir -p "$out"
deadline=${AA_DEADLINE_S:-400}
# shellcheck disable=SC2206
run_args=(--suite glu --case 4096x14336 --raw-samples ${AA_RUN_ARGS:-})
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

# Both builds at once: each is bound by its few largest nvcc units, so sharing the cores roughly
# halves the wall time. The normal build clears the switch in case its cache had it.
jobs=$(nproc)
half=$(( jobs > 1 ? jobs / 2 : 1 ))
FUSEBENCH_BUILD_DIR=$root/build-gpu FUSEBENCH_TARGETS=fusebench FUSEBENCH_JOBS=$half \
  "$root/scripts/build.sh" -DFUSEBENCH_SLOWDOWN_FOR_GATE_TEST= >"$out/build.log" 2>&1 &
pid_normal=$!
FUSEBENCH_BUILD_DIR=$root/build-gpu-slow FUSEBENCH_TARGETS=fusebench FUSEBENCH_JOBS=$half \
  "$root/scripts/build.sh" -DFUSEBENCH_SLOWDOWN_FOR_GATE_TEST=glu/fused_vec >"$out/build-slow.log" 2>&1 &
pid_slow=$!
wait $pid_normal; rc_normal=$?
wait $pid_slow; rc_slow=$?
echo "builds: normal rc=$rc_normal, slowed rc=$rc_slow ($(elapsed) s)"
if [ $rc_normal -ne 0 ] || [ $rc_slow -ne 0 ]; then
  tail -30 "$out/build.log" "$out/build-slow.log"
  echo "aa-check: FAIL (build)"
  exit 1
fi
normal=$root/build-gpu/fusebench
slow=$root/build-gpu-slow/fusebench

run_seconds=0
# run <binary> <name>: one report; refuses to start when the deadline would pass.
run() {
  local start now
  start=$(date +%s)
  if [ $(( start - t0 + run_seconds + 10 )) -gt "$deadline" ]; then
    echo "run $2: skipped, the ${deadline} s deadline would pass ($(elapsed) s used, a run takes ~${run_seconds} s)"
    return 99
  fi
  local left=$(( deadline - (start - t0) ))
  [ $left -lt 10 ] && left=10
  timeout $left "$1" run "${run_args[@]}" --json "$out/$2.json" >"$out/$2.txt" 2>"$out/$2.err"
  local rc=$?
  now=$(date +%s)
  [ $(( now - start )) -gt $run_seconds ] && run_seconds=$(( now - start ))
  echo "run $2: rc=$rc, $(( now - start )) s ($(elapsed) s)"
  return $rc
}

summary=()
failed=0
# compare <base> <new> <name> <expected exit>: writes every output format, records a summary row.
compare() {
  local base=$1 new=$2 name=$3 want=$4
  "$normal" compare "$out/$base.json" "$out/$new.json" --markdown "$out/$name.md" --json "$out/$name.json" \
    --junit "$out/$name.xml" >"$out/$name.txt" 2>&1
  local rc=$?
  local slower fused_vec_slower verdicts ok
  slower=$(grep -c '^SLOWER ' "$out/$name.txt")
  fused_vec_slower=$(grep -cE '^SLOWER +glu .* fused_vec( |$)' "$out/$name.txt")
  verdicts=$(sed -n 's/^verdicts: //p' "$out/$name.txt")
  if [ "$want" = 0 ]; then
    [ $rc -eq 0 ] && [ "$slower" -eq 0 ] && ok=PASS || ok=FAIL
  else
    [ $rc -eq 1 ] && [ "$fused_vec_slower" -gt 0 ] && [ "$slower" -eq "$fused_vec_slower" ] && ok=PASS || ok=FAIL
  fi
  [ $ok = PASS ] || failed=1
  summary+=("$(printf '%-22s %-6s exit=%-2s SLOWER=%-2s %s' "$name" "$ok" "$rc" "$slower" "$verdicts")")
}

# Slowdown first: it is the check a short budget must not lose.
run "$normal" normal-1 || { echo "aa-check: FAIL (first normal run)"; tail -5 "$out/normal-1.err"; exit 1; }
if run "$slow" slowed; then
  compare normal-1 slowed slowdown 1
else
  summary+=("slowdown               FAIL   the slowed run did not complete")
  failed=1
fi

last=normal-1
for i in 2 3 4 5 6; do
  run "$normal" "normal-$i" || break
  compare "$last" "normal-$i" "aa-$(( i - 1 ))-vs-$i" 0
  last=normal-$i
done

echo
echo "--- slowdown comparison (BASE normal-1, NEW slowed) ---"
sed -n '1,40p' "$out/slowdown.txt" 2>/dev/null
echo
echo "--- summary ($(elapsed) s; run args: ${run_args[*]}) ---"
printf '%s\n' "${summary[@]}"
aa_done=$(printf '%s\n' "${summary[@]}" | grep -c '^aa-')
aa_slower=$(printf '%s\n' "${summary[@]}" | awk '/^aa-/ && match($0, /SLOWER=[0-9]+/) { s += substr($0, RSTART + 7, RLENGTH - 7) } END { print s + 0 }')
echo "A/A comparisons: $aa_done of 5, SLOWER verdicts in them: $aa_slower"
verdict=FAIL
[ $failed -eq 0 ] && [ "$aa_done" -eq 5 ] && verdict=PASS
# A device call returns only a handful of files from $OUT: there, everything travels as one archive.
if [ -n "${OUT:-}" ]; then
  tar czf "$OUT/aa-check.tgz" -C "$OUT" aa && rm -rf "$out" && echo "outputs packed in \$OUT/aa-check.tgz"
fi
echo "aa-check: $verdict"
[ $verdict = PASS ]
