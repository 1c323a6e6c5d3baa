#!/usr/bin/env bash
# Builds examples/external as an outside project would: installs the fusebench build (build/, or
# $FUSEBENCH_BUILD_DIR) into $build/_install with `cmake --install`, configures the example with
# find_package(fusebench) against that prefix, builds it and runs its tests (on a machine without
# a GPU the GPU run is reported as skipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSEBENCH_BUILD_DIR:-$root/build}
jobs=${FUSEBENCH_JOBS:-$(nproc)}
prefix=$build/_install
example=$build/_example
generator=()
command -v ninja >/dev/null && [ ! -f "$example/Makefile" ] && generator=(-G Ninja)
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$root/examples/external" -B "$example" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$example" -j "$jobs"
cd "$example"
ctest --output-on-failure
