#!/usr/bin/env bash
# Configures and builds every target into build/ (or $FUSEBENCH_BUILD_DIR). Extra arguments go to
# the CMake configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=80;90.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSEBENCH_BUILD_DIR:-$root/build}
jobs=${FUSEBENCH_JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
# FUSEBENCH_TARGETS="fusebench fusebench_tests" builds only those.
targets=()
for t in ${FUSEBENCH_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
