#!/usr/bin/env bash
# Runs compute-sanitizer's memcheck, racecheck, initcheck and synccheck over every variant of the
# given suites at small cases, and prints a table variant x tool: clean, N err (N warn), or -
# (not run under that tool).
#
# One fusebench process per suite and tool (--no-isolation: the sanitizer watches one process),
# with FUSEBENCH_SANITIZE=1: tensors get no guard bands (each ends where its allocation ends, so
# memcheck flags a write just past it, which a guard band would absorb) and each variant is
# announced on stdout before it runs, so each sanitizer report is
# attributed to the variant that was running when it was printed. A variant that loses the CUDA
# context ends its process; a fresh process then runs the variants it left. compute-sanitizer holds
# CUPTI, so fusebench times nothing and falls back to events (--verify-only, --no-cupti-timing).
#
# Cases: the --quick cases whose shape (the first RxC in the case name) has at most
# SANITIZE_MAX_ELEMENTS elements (default 2^24). The memory-fault mutants (a write past the end, a
# null write) run under memcheck only: under the other tools nothing stops their stray writes.
#
# Usage: scripts/sanitize.sh [SUITE ...]    (default: glu rmsnorm softmax_topk mutants)
# Environment: FUSEBENCH (binary; default $FUSEBENCH_BUILD_DIR/fusebench or build/fusebench),
#   SANITIZE_OUT (logs and reports; default ./sanitize-out), SANITIZE_TOOLS (default all four),
#   SANITIZE_MAX_ELEMENTS, SANITIZE_TIMEOUT (seconds per process, default 900),
#   SANITIZE_EXPECT ("tool:variant ..." that must be flagged, empty for none; default (unset): the mutants for a write
#   past the end and a missing __syncthreads).
# Exit: 0 when every real variant is clean under every tool it ran under and every expected
# mutant is flagged by its tool; 1 otherwise; 2 when compute-sanitizer or fusebench is missing.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${FUSEBENCH:-${FUSEBENCH_BUILD_DIR:-$root/build}/fusebench}
out=${SANITIZE_OUT:-$PWD/sanitize-out}
tools=${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}
max_elements=${SANITIZE_MAX_ELEMENTS:-16777216}
timeout_s=${SANITIZE_TIMEOUT:-900}
expect=${SANITIZE_EXPECT-memcheck:glu_scalar_past_end racecheck:rmsnorm_block_missing_sync}
memcheck_only="glu_scalar_past_end glu_naive_null_workspace"
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(glu rmsnorm softmax_topk mutants)

sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -z "$sanitizer" ]; then echo "sanitize.sh: compute-sanitizer not found" >&2; exit 2; fi
if [ ! -x "$bin" ]; then echo "sanitize.sh: no fusebench binary at $bin (build first, or set FUSEBENCH)" >&2; exit 2; fi
mkdir -p "$out"
rm -f "$out"/*.log "$out"/*.json "$out/planned.txt"

for suite in "${suites[@]}"; do
  listing=$("$bin" list --suite "$suite" --quick) || { echo "sanitize.sh: cannot list suite $suite" >&2; exit 2; }
  variants=$(awk '$1 == "variant" {print $2}' <<<"$listing")
  # Case names are unique per dtype; passing the full name as the --case substring may also select
  # a longer name that contains it, which --quick and the size limit keep small.
  cases=$(awk '$1 == "case" {print $2}' <<<"$listing" | sort -u | python3 -c '
import re, sys
limit = int(sys.argv[1])
keep = []
for name in sys.stdin.read().split():
    m = re.search(r"(\d+)x(\d+)", name)
    if m and int(m.group(1)) * int(m.group(2)) <= limit:
        keep.append(name)
print(",".join(keep))' "$max_elements")
  if [ -z "$cases" ]; then echo "sanitize.sh: suite $suite has no quick case under $max_elements elements" >&2; continue; fi
  for tool in $tools; do
    todo=()
    for v in $variants; do
      if [ "$tool" != memcheck ] && [[ " $memcheck_only " == *" $v "* ]]; then continue; fi
      todo+=("$v")
      echo "$suite $tool $v" >>"$out/planned.txt"
    done
    attempt=0
    while [ ${#todo[@]} -gt 0 ] && [ $attempt -lt 8 ]; do
      attempt=$((attempt + 1))
      tag="$suite.$tool.$attempt"
      list=$(IFS=,; echo "${todo[*]}")
      echo "sanitize: $suite under $tool (process $attempt, ${#todo[@]} variant(s))" >&2
      FUSEBENCH_SANITIZE=1 timeout "$timeout_s" "$sanitizer" --tool "$tool" --print-limit 100 \
        "$bin" run --suite "$suite" --variant "$list" --case "$cases" --quick --verify-only --no-ceilings --no-isolation \
        --no-counters --no-cupti-timing --seed 1 --json "$out/$tag.json" >"$out/$tag.log" 2>&1
      echo "  rc=$?" >&2
      # Variants left unrun by a lost context (minus the one that lost it) go to a fresh process.
      mapfile -t todo < <(python3 - "$out/$tag.json" <<'EOF'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
crashed = ""
if report.get("status") == "context_lost":
    crashed = (report.get("status_reason") or "").split(":")[0]
left = []
for r in report.get("results", []):
    if r.get("outcome") == "skipped" and "context was lost" in (r.get("reason") or "") and r["variant"] != crashed:
        if r["variant"] not in left:
            left.append(r["variant"])
print("\n".join(left))
EOF
)
      [ ${#todo[@]} -eq 1 ] && [ -z "${todo[0]}" ] && todo=()
    done
  done
done

python3 - "$out" "$expect" $tools <<'EOF'
import collections, glob, json, os, re, sys

out, expect, tools = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
ignore = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Target application returned")
# (suite, case, dtype, variant) -> tool -> [errors, warnings]; the latest process wins for a key.
found = {}
kinds = collections.Counter()
mutant = {}
outcome = {}
for log in sorted(glob.glob(os.path.join(out, "*.log")), key=lambda p: (p.rsplit(".", 2)[0], int(p.rsplit(".", 2)[1]))):
    suite, tool, _ = os.path.basename(log)[:-4].rsplit(".", 2)
    key = (suite, "(startup)", "", "(startup)")
    seen = {}
    for line in open(log, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("fusebench-sanitize: variant "):
            parts = line.split(" ", 2)[2].split("/")
            key = (parts[0], "/".join(parts[1:-2]), parts[-2], parts[-1])
            seen[key] = [0, 0]
            continue
        m = re.match(r"^========= (\S.*)$", line)
        if not m or m.group(1).startswith(ignore):
            continue
        head = m.group(1)
        seen.setdefault(key, [0, 0])[1 if head.startswith("Warning") else 0] += 1
        kinds[(tool, re.sub(r"0x[0-9a-f]+|\d+", "N", head)[:90])] += 1
    for k, v in seen.items():
        found.setdefault(k, {})[tool] = v
    rep = log[:-4] + ".json"
    if os.path.exists(rep):
        try:
            for r in json.load(open(rep)).get("results", []):
                k = (r["suite"], r["case"], r["dtype"], r["variant"])
                mutant[r["variant"]] = "mutant" in r
                if r.get("outcome") != "skipped" or k not in outcome:
                    outcome[k] = r.get("outcome")
        except Exception:
            pass

per_variant = collections.OrderedDict()
for (suite, case, dtype, variant), by_tool in sorted(found.items()):
    cell = per_variant.setdefault((suite, variant), {})
    for tool, (e, w) in by_tool.items():
        t = cell.setdefault(tool, [0, 0])
        t[0] += e
        t[1] += w

def fmt(c):
    if c is None:
        return "-"
    if c == [0, 0]:
        return "clean"
    return f"{c[0]} err" + (f", {c[1]} warn" if c[1] else "")

rows = [("suite", "variant", "kind") + tuple(tools)]
bad = []
for (suite, variant), cell in per_variant.items():
    kind = "mutant" if mutant.get(variant) else ("harness" if variant == "(startup)" else "real")
    rows.append((suite, variant, kind) + tuple(fmt(cell.get(t)) for t in tools))
    if kind != "mutant":
        for t in tools:
            if cell.get(t) not in (None, [0, 0]):
                bad.append(f"{suite} {variant} is not clean under {t}: {fmt(cell.get(t))}")
for e in expect:
    tool, variant = e.split(":", 1)
    hits = [c.get(tool) for (s, v), c in per_variant.items() if v == variant]
    if not any(h and h[0] > 0 for h in hits):
        bad.append(f"expected mutant {variant} was not flagged by {tool}")
width = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for i, r in enumerate(rows):
    print(" | ".join(c.ljust(width[j]) for j, c in enumerate(r)))
    if i == 0:
        print("-|-".join("-" * w for w in width))
# A real variant planned under a tool but never announced is a gap: it timed out, its process
# crashed, or it was outside its declared domain on every selected case (then nothing checked it).
reasons = collections.defaultdict(list)
for rep in glob.glob(os.path.join(out, "*.json")):
    suite, tool, _ = os.path.basename(rep)[:-5].rsplit(".", 2)
    try:
        for r in json.load(open(rep)).get("results", []):
            reasons[(suite, tool, r["variant"])].append((r.get("outcome"), r.get("reason") or ""))
    except Exception:
        pass
for line in open(os.path.join(out, "planned.txt")):
    suite, tool, variant = line.split()
    if tool not in tools or per_variant.get((suite, variant), {}).get(tool) is not None or mutant.get(variant):
        continue
    rs = reasons.get((suite, tool, variant), [])
    if rs and all(o == "skipped" and rr.startswith("outside declared domain") for o, rr in rs):
        bad.append(f"{suite} {variant} was not checked under {tool}: outside its declared domain on every selected case")
    else:
        bad.append(f"{suite} {variant} did not run under {tool} (see the logs in {out})")
not_pass = [f"{k[0]} {k[1]} {k[2]} {k[3]}: {o}" for k, o in outcome.items() if o not in ("pass", "skipped") and not mutant.get(k[3])]
print(f"\nsanitizer report kinds (tool, first words): {len(kinds)}")
for (tool, head), n in sorted(kinds.items()):
    print(f"  {tool:9} {n:5}  {head}")
if not_pass:
    print("\nreal variants that did not pass fusebench's own verification under a sanitizer:")
    for line in not_pass[:20]:
        print("  " + line)
if bad:
    print("\nSANITIZE FAILED:")
    for b in bad:
        print("  " + b)
    sys.exit(1)
print("\nsanitize: every real variant clean; every expected mutant flagged")
EOF
