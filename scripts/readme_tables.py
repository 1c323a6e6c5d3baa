#!/usr/bin/env python3
"""The README's two board-against-board tables, from two fusebench reports (default runs).

Usage: scripts/readme_tables.py H100.json H200.json [--section memory|attention|all]

- memory: glu, rmsnorm and softmax_topk, one row per timed (suite, case, dtype): the fastest
  passing fused variant of the first report, with its figures on both boards (`% floor` =
  derived.pct_of_floor, `vs naive` = derived.speedup_vs_baseline).
- attention: every timed attention result of the first report (variant[config]), naive, fused
  and peers, with the same result of the second report (`% ceiling` = derived.pct_of_ceiling).

A result missing from a report, or not timed there, prints "-" with no figure made up. The
column headers name each report's board label (device.label).
"""
import argparse
import gzip
import json
import sys

MEMORY_SUITES = ("glu", "rmsnorm", "softmax_topk")


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        r = json.load(f)
    label = (r.get("device") or {}).get("label") or path
    return label.upper(), r["results"]


def key(x):
    return (x["suite"], x["case"], x["dtype"], x["variant"], x.get("config") or "")


def name(x):
    return x["variant"] + (f"[{x['config']}]" if x.get("config") else "")


def timed(x):
    return x.get("outcome") == "pass" and (x.get("timing") or {}).get("median_us")


def cells(x, fig):
    if x is None or not timed(x):
        return ["-", "-", "-"]
    d = x.get("derived") or {}
    v = d.get(fig)
    sp = d.get("speedup_vs_baseline")
    out = [f"{x['timing']['median_us']:.2f}"]
    if fig == "pct_of_ceiling":
        tf = d.get("achieved_tflops")
        out.append(f"{tf:.1f}" if tf is not None else "-")
    out.append(f"{v:.1f}" if v is not None else "-")
    out.append(f"{sp:.2f}x" if sp is not None else "-")
    return out


def memory_table(a, b):
    la, ra = a
    lb, rb = b
    index_b = {key(x): x for x in rb}
    best = {}
    order = []
    for x in ra:
        if x["suite"] not in MEMORY_SUITES or x.get("role") != "fused" or not timed(x):
            continue
        k = (x["suite"], x["case"], x["dtype"])
        if k not in best:
            order.append(k)
            best[k] = x
        elif x["timing"]["median_us"] < best[k]["timing"]["median_us"]:
            best[k] = x
    print(f"| suite | case | dtype | variant | {la} us | {la} % floor | {la} vs naive | {lb} us | {lb} % floor | {lb} vs naive |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in order:
        x = best[k]
        ca = cells(x, "pct_of_floor")
        cb = cells(index_b.get(key(x)), "pct_of_floor")
        print(f"| {x['suite']} | {x['case']} | {x['dtype']} | {name(x)} | " + " | ".join(ca + cb) + " |")


def attention_table(a, b):
    la, ra = a
    lb, rb = b
    index_b = {key(x): x for x in rb}
    print(f"| case | dtype | variant | {la} us | {la} TFLOP/s | {la} % ceiling | {la} vs naive | "
          f"{lb} us | {lb} TFLOP/s | {lb} % ceiling | {lb} vs naive |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for x in ra:
        if x["suite"] != "attention" or not timed(x):
            continue
        ca = cells(x, "pct_of_ceiling")
        cb = cells(index_b.get(key(x)), "pct_of_ceiling")
        print(f"| {x['case']} | {x['dtype']} | {name(x)} | " + " | ".join(ca + cb) + " |")


def main(argv):
    ap = argparse.ArgumentParser(description="The README's board-against-board tables from two default-run reports.")
    ap.add_argument("first", help="report whose timed results choose the rows (e.g. h100.json)")
    ap.add_argument("second", help="report shown beside it (e.g. h200.json)")
    ap.add_argument("--section", choices=("memory", "attention", "all"), default="all")
    args = ap.parse_args(argv)
    a, b = load(args.first), load(args.second)
    if args.section in ("memory", "all"):
        memory_table(a, b)
    if args.section == "all":
        print()
    if args.section in ("attention", "all"):
        attention_table(a, b)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
