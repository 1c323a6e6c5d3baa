#!/usr/bin/env bash
# The main job: install what is missing, build, run the default suites, print the results table
# and write the JSON report. Arguments go to `fusebench run` (for example --quick or --suite glu).
# Exit codes are fusebench's: 0 all passed, 1 correctness failure, 2 bad usage, 3 no GPU, 4 internal.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${FUSEBENCH_BUILD_DIR:-$root/build}
mkdir -p "$root/out"
has_json=0
for a in "$@"; do [ "$a" = --json ] && has_json=1; done
if [ $has_json = 1 ]; then
  exec "$build/fusebench" run "$@"
fi
exec "$build/fusebench" run --json "$root/out/fusebench-report.json" "$@"
