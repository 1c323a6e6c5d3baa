#!/usr/bin/env bash
# One call on the GPU machine: configure, build, run the GPU tests and the suites, write the
# report(s) and logs under $OUT (or ./out). Usage: scripts/gpu-check.sh [fusebench run args...]
# Environment: FUSEBENCH_SKIP_TESTS=1 skips ctest; FUSEBENCH_CTEST_JOBS=N (default 1); FUSEBENCH_CTEST_ARGS="-R re"
# passes more arguments to ctest (a subset, when device time is short); FUSEBENCH_SKIP_EXAMPLE=1 skips the
# installed-package example; FUSEBENCH_EXTRA="cmd"
# runs a command at the end; FUSEBENCH_BUNDLE_LOGS=1 packs every file under $OUT but the report and
# run.txt into logs.tgz at the end (a device call returns at most 8 files). FUSEBENCH_REQUIRE_GPU=H200 (any
# part of the name nvidia-smi gives) exits 3 before the build when another model came: a board's
# baseline is only regenerated on its own model.
# Reports name the build's commit: on a copy of the tree without .git, run scripts/stamp-commit.sh
# here first and send the (git-ignored) .fusebench-commit along with the tree.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
export FUSEBENCH_BUILD_DIR=${FUSEBENCH_BUILD_DIR:-$root/build-gpu}
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | tee "$out/gpu.txt"
if [ -n "${FUSEBENCH_REQUIRE_GPU:-}" ] && ! grep -qi -- "$FUSEBENCH_REQUIRE_GPU" "$out/gpu.txt"; then
  echo "gpu-check: FUSEBENCH_REQUIRE_GPU=$FUSEBENCH_REQUIRE_GPU, but this machine has: $(head -1 "$out/gpu.txt" | cut -d, -f1); nothing run"
  exit 3
fi

if ! "$root/scripts/build.sh" >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; echo "BUILD FAILED"; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"

if [ "${FUSEBENCH_SKIP_TESTS:-0}" != 1 ]; then
  # GPU tests hold one CTest resource lock, so -j N runs CPU tests beside one GPU test at a time.
  (cd "$FUSEBENCH_BUILD_DIR" && ctest --output-on-failure -j "${FUSEBENCH_CTEST_JOBS:-1}" --timeout 600 ${FUSEBENCH_CTEST_ARGS:-}) >"$out/ctest.log" 2>&1
  echo "ctest rc=$? ($(( $(date +%s) - t0 )) s): $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
  grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Subprocess)' "$out/ctest.log" | head -20
  # fusebench as a library: examples/external against the installed package, its GPU run included.
  if [ "${FUSEBENCH_SKIP_EXAMPLE:-0}" != 1 ]; then
    "$root/scripts/example.sh" >"$out/example.log" 2>&1
    echo "example rc=$? ($(( $(date +%s) - t0 )) s): $(grep -E 'tests passed|tests failed' "$out/example.log")"
  fi
fi

label=$("$FUSEBENCH_BUILD_DIR/fusebench" version >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | grep -oE 'h100|h200|a100|b200|h800' | head -1)
label=${label:-gpu}
"$FUSEBENCH_BUILD_DIR/fusebench" run --json "$out/$label.json" "$@" >"$out/run.txt" 2>"$out/run.err"
rc=$?
echo "fusebench run rc=$rc ($(( $(date +%s) - t0 )) s)"
# The device returns files of at most 16 MiB: a larger report (the H100 default run's was 17.7 MB at
# a24f77c) comes back gzipped (gunzip it into reports/baselines/).
if [ -f "$out/$label.json" ] && [ "$(stat -c %s "$out/$label.json")" -gt 15000000 ]; then
  gzip -f "$out/$label.json" && echo "report gzipped: $out/$label.json.gz"
fi
tail -5 "$out/run.err"
if [ -n "${FUSEBENCH_EXTRA:-}" ]; then
  bash -c "$FUSEBENCH_EXTRA" >"$out/extra.log" 2>&1; echo "extra rc=$?"
fi
cat "$out/run.txt"
if [ "${FUSEBENCH_BUNDLE_LOGS:-0}" = 1 ]; then
  (cd "$out" && find . -maxdepth 1 -type f ! -name logs.tgz ! -name "$label.json" ! -name "$label.json.gz" ! -name run.txt ! -name .bundle -printf '%f\n' >.bundle &&
    tar czf logs.tgz -T .bundle && xargs rm -f <.bundle && rm -f .bundle)
fi
