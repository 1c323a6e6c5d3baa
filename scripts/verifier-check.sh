#!/usr/bin/env bash
# Issue 7's GPU acceptance in one device call: the mutants suite (catch rate, crash isolation past
# the illegal-address mutant), the verifier's own GPU tests, 100 fresh seeds over every real
# variant (no false failures) and the sanitizer table. Writes logs under $OUT (or ./out) and prints
# a summary last. Each step has its own time limit (T_* seconds) so a slow one cannot starve the
# rest; set them to fit the call.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/out}
mkdir -p "$out"
export FUSEBENCH_BUILD_DIR=${FUSEBENCH_BUILD_DIR:-$root/build-gpu}
b=$FUSEBENCH_BUILD_DIR
t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
nvidia-smi -L
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; echo "BUILD FAILED"; exit 1; }
echo "build: $(el)"

timeout "${T_MUTANTS:-150}" "$b/fusebench" run --suite mutants --json "$out/mutants.json" >"$out/mutants.txt" 2>"$out/mutants.err"
echo "run --suite mutants rc=$? ($(el))"
timeout "${T_TESTS:-120}" "$b/fusebench_tests" "[mutants],[launch_checks],[verifier]" >"$out/tests.txt" 2>&1
echo "verifier tests rc=$? ($(el)): $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
timeout "${T_SEEDS:-300}" "$b/fusebench_tests" "[seeds]" >"$out/seeds.txt" 2>&1
echo "100-seed test rc=$? ($(el)): $(tail -3 "$out/seeds.txt" | tr '\n' ' ')"
# The real suites at cases of at most 2^20 elements (racecheck on 64x50257 softmax rows takes
# minutes), expecting no mutant; then the mutants suite at its own cases (the missing-sync mutant
# needs its 4096x4096 case), expecting the two mutants the sanitizer must flag.
FUSEBENCH="$b/fusebench" SANITIZE_OUT=/tmp/sanitize-real SANITIZE_TIMEOUT="${T_SAN_EACH:-120}" SANITIZE_EXPECT="" \
  SANITIZE_MAX_ELEMENTS=${SAN_MAX_ELEMENTS:-1048576} timeout "${T_SAN:-200}" scripts/sanitize.sh glu rmsnorm softmax_topk \
  >"$out/sanitize.txt" 2>"$out/sanitize.err"
echo "sanitize (real suites) rc=$? ($(el))"
FUSEBENCH="$b/fusebench" SANITIZE_OUT=/tmp/sanitize-mutants SANITIZE_TIMEOUT="${T_SAN_EACH:-120}" \
  timeout "${T_SAN_MUTANTS:-150}" scripts/sanitize.sh mutants >"$out/sanitize-mutants.txt" 2>>"$out/sanitize.err"
echo "sanitize (mutants) rc=$? ($(el))"
tar czf "$out/sanitize-logs.tgz" -C /tmp sanitize-real sanitize-mutants 2>/dev/null

echo "== mutants"
grep -E "mutants:|MISSED|passed,|restart|not run" "$out/mutants.txt" "$out/mutants.err"
echo "== sanitizer"
tail -40 "$out/sanitize.txt"
tail -30 "$out/sanitize-mutants.txt"
