#!/usr/bin/env bash
# Installs what is missing, builds every target (all CUDA code compiles), runs the tests with CTest
# and builds and tests examples/external against the installed package. Without a GPU, tests
# tagged [gpu] (and the example's GPU run) are reported as skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${FUSEBENCH_BUILD_DIR:-$root/build}
cd "$build"
# GPU tests time kernels and read counters: on a machine with a GPU they must not share it.
jobs=${FUSEBENCH_JOBS:-$(nproc)}
if nvidia-smi -L >/dev/null 2>&1; then jobs=1; fi
ctest --output-on-failure -j "$jobs" "$@"
# fusebench as a library: the example project under examples/external, built against the
# installed package and tested as an outside consumer.
"$root/scripts/example.sh"
