# Sourced by call1.sh / call3.sh (device scripts): the board's line into $OUT/gpu.txt (exit 3 when $WANT names
# another board), el (seconds since the start), B (the build folder) and build_lib (the build, its log's tail on failure).
set -uo pipefail
O=$OUT; t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
[ -z "${WANT:-}" ] || grep -qi "$WANT" $O/gpu.txt || { echo "wanted $WANT"; exit 3; }
B=$PWD/build-gpu
export FUSEBENCH_BUILD_DIR=$B FUSEBENCH_TARGETS="fusebench fusebench_tests"
build_lib() { scripts/build.sh > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }; echo "build $(el) s"; }
