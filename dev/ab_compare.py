#!/usr/bin/env python3
"""A/B of two fusebench reports of the same cases: base.json new.json [more base/new pairs].

Prints per (suite, case, dtype, kind, variant): outcome of each, median us (% of floor) of each,
new / base, and each side's time over its random-logit case of the same suite, V, dtype and K
(adversarial kinds only). Then the outcomes that are not pass and a one-line total.
Usage: ab_compare.py base1.json new1.json [base2.json new2.json ...]
"""
import json
import sys


def load(path):
    try:
        rep = json.load(open(path))
    except Exception as e:  # a run cut by its time limit may leave no report
        print("cannot read", path, e)
        return {}
    out = {}
    for r in rep.get("results", []):
        ci = r.get("case_info") or {}
        key = (r.get("suite"), r.get("case"), r.get("dtype"), ci.get("input_kind"), r.get("variant"))
        t = r.get("timing") or {}
        d = r.get("derived") or {}
        out[key] = (r.get("outcome"), t.get("median_us"), d.get("pct_of_floor"), (ci.get("dims") or {}).get("K"))
    return out


def fmt(x):
    if x is None or x[1] is None:
        return "%-26s" % (x[0] if x else "-")
    return "%-26s" % ("%s %.1f (%.1f%%)" % (x[0], x[1], x[2] or 0.0))


def main(args):
    if len(args) < 2 or len(args) % 2:
        print(__doc__)
        return 2
    base, new = {}, {}
    for i in range(0, len(args), 2):
        base.update(load(args[i]))
        new.update(load(args[i + 1]))

    def random_of(table, key):
        suite, case, dtype, kind, var = key
        v = case.split(":")[0]
        k = table[key][3]
        for k2, x in table.items():
            if k2[0] == suite and k2[1].split(":")[0] == v and k2[2] == dtype and k2[4] == var and x[3] == k and k2[3] == "random":
                return x[1]
        return None

    print("%-24s %-26s %-5s %-11s %-12s %-26s %-26s %8s %8s %8s" %
          ("suite", "case", "dtype", "kind", "variant", "base (outcome us %floor)", "new", "new/base", "base/rnd", "new/rnd"))
    bad = []
    ratios = []
    for key in sorted(set(base) | set(new), key=lambda k: tuple(str(x) for x in k)):
        b, n = base.get(key), new.get(key)
        r = "%.3f" % (n[1] / b[1]) if b and n and b[1] and n[1] else "-"
        if b and n and b[1] and n[1]:
            ratios.append(n[1] / b[1])
        br = random_of(base, key) if b and key[3] != "random" else None
        nr = random_of(new, key) if n and key[3] != "random" else None
        print("%-24s %-26s %-5s %-11s %-12s %s %s %8s %8s %8s" %
              (key[0], key[1], key[2], key[3], key[4], fmt(b), fmt(n), r,
               "%.2f" % (b[1] / br) if br and b[1] else "-", "%.2f" % (n[1] / nr) if nr and n[1] else "-"))
        for side, x in (("base", b), ("new", n)):
            if x is None or x[0] not in ("pass", "skipped"):
                bad.append((side, key, x[0] if x else "missing"))
    print("\nNOT PASS (or missing on one side): %d" % len(bad))
    for x in bad[:40]:
        print("  ", x)
    if ratios:
        ratios.sort()
        print("new/base over %d paired cases: min %.3f, median %.3f, max %.3f" %
              (len(ratios), ratios[0], ratios[len(ratios) // 2], ratios[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
