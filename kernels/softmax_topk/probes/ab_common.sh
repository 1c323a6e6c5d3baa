# Sourced by lean_ab.sh and ffma_ab.sh (device scripts, not part of the build).
# ab_rounds DIR "v1 v2 ..." "CASES": three rounds over CASES (type:V:K:sd, sd -1 = ascending rows, 4096 rows),
# each case's variants in the given order on odd rounds and reversed on even ones; the binaries are
# DIR/<variant> (probes/stream_ab.cu builds), their reference files under DIR/ref (the first run of a case
# writes it, the others compare indices and probabilities with it).
ab_rounds() {
  local dir=$1 vars=$2 cases=$3 rev rep c ty v k sd ord b tag
  rev=$(echo "$vars" | tr ' ' '\n' | tac | tr '\n' ' ')
  for rep in 1 2 3; do
    for c in $cases; do
      IFS=: read -r ty v k sd <<< "$c"
      if [ $((rep % 2)) = 1 ]; then ord=$vars; else ord=$rev; fi
      for b in $ord; do
        tag=$b; [ "$sd" = -1 ] && tag=${b}A
        echo "rep$rep $(timeout 30 "$dir/$b" "$ty" 4096 "$v" "$k" "$sd" "$tag" "$dir/ref" | tail -1)"
      done
    done
  done
}
# ab_summary FILE "v1 v2 ...": per case the median of each variant and its ratio to the first variant's; the
# runs whose indices differed from the reference, and the largest relative probability difference.
ab_summary() {
  python3 - "$1" "$2" <<'PY'
import collections, re, statistics, sys
variants = sys.argv[2].split()
t = collections.defaultdict(list); bad = 0; prel = 0.0
for line in open(sys.argv[1]):
    m = re.match(r'rep\d AB (\w+)\s+(\S+) (\d+) x (\d+) K (\d+): median ([\d.]+) us \(events\); .*\((\d+) differ, p rel ([\d.e+-]+)\)', line)
    if not m: continue
    b, ty, rows, v, k, us, nd, rel = m.groups()
    if b.endswith('A'): ty, b = ty + '-asc', b[:-1]
    t[(ty, int(v), int(k))].append((b, float(us)))
    bad += int(nd) > 0
    prel = max(prel, float(rel))
for key in sorted(t):
    med = {b: statistics.median([u for bb, u in t[key] if bb == b] or [float('nan')]) for b in variants}
    ratios = "  ".join(f"{b}/{variants[0]} {med[b] / med[variants[0]]:.3f}" for b in variants[1:])
    print(f"{key[0]:8s} 4096 x {key[1]:6d} K {key[2]:4d}: " + "  ".join(f"{b} {med[b]:7.1f}" for b in variants) + "  " + ratios)
print("runs with index differences:", bad, "; largest probability difference (relative):", f"{prel:.1e}")
PY
}
