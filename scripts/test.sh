#!/usr/bin/env bash
# Installs what is missing, builds every target (all CUDA code compiles) and runs the tests with
# CTest. Without a GPU, tests tagged [gpu] are reported as skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${FUSEBENCH_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j "${FUSEBENCH_JOBS:-$(nproc)}" "$@"
