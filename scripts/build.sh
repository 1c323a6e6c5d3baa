#!/usr/bin/env bash
# Configures and builds every target into build/ (or $FUSEBENCH_BUILD_DIR). Extra arguments go to
# the CMake configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=80;90.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSEBENCH_BUILD_DIR:-$root/build}
jobs=${FUSEBENCH_JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && generator=(-G Ninja)
# cuDNN (the attention suite's peer row): $FUSEBENCH_CUDNN_ROOT when set, else a Python
# environment's nvidia-cudnn wheel when there is one, else what CMake finds in the CUDA toolkit and
# the system paths (cmake/cudnn.cmake); without cuDNN the peer rows are skipped with the reason.
cudnn=()
root_hint=${FUSEBENCH_CUDNN_ROOT:-}
if [ -z "$root_hint" ] && command -v python3 >/dev/null; then
  root_hint=$(python3 -c "import nvidia.cudnn as m; print(m.__path__[0])" 2>/dev/null || true)
fi
[ -n "$root_hint" ] && cudnn=(-DFUSEBENCH_CUDNN_ROOT="$root_hint")
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${cudnn[@]}" "$@" >/dev/null
# FUSEBENCH_TARGETS="fusebench fusebench_tests" builds only those.
targets=()
for t in ${FUSEBENCH_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
