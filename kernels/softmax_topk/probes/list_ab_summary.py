#!/usr/bin/env python3
"""Summary of a list_ab.sh run: probe.txt's lines "[variant] LIB dtype rows x V K k kind : PASS|FAIL ... median
T us ..." as one Markdown table, a row per case (dtype, rows, V, K, input kind) and a column per variant with its
median times in run order (one per round) and, for every variant but the first, the ratio of its median of
medians to the first's; then every run that did not PASS or did not finish ("RUN FAILED", with its line) and the
phase timelines ("TL LIST"; the timeline builds' own LIB lines carry a "_tl" variant name and are not tabled).

Usage: list_ab_summary.py probe.txt VARIANT [VARIANT ...]   (the first variant is the reference)
"""
import collections
import re
import statistics
import sys

LINE = re.compile(r"^\[(?P<v>[^\]]+)\] LIB (?P<dt>\S+)\s+(?P<rows>\d+) x (?P<V>\d+) K (?P<K>\d+) (?P<kind>\S+)\s*: "
                  r"(?P<verdict>\S+) .*?median (?P<us>[\d.]+) us")


def parse(path):
    times = collections.defaultdict(list)  # (case, variant) -> [us, ...]
    cases, bad, timelines = [], [], []
    for raw in open(path):
        line = raw.rstrip("\n")
        if "TL LIST" in line:
            timelines.append(line)
        if "RUN FAILED" in line:
            bad.append(line)
        m = LINE.match(line)
        if not m:
            continue
        case = (m["dt"], int(m["rows"]), int(m["V"]), int(m["K"]), m["kind"])
        if case not in cases:
            cases.append(case)
        times[(case, m["v"])].append(float(m["us"]))
        if m["verdict"] != "PASS":
            bad.append(line)
    return cases, times, bad, timelines


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cases, times, bad, timelines = parse(argv[1])
    variants = argv[2:]
    ref = variants[0]
    print("| case | " + " | ".join(variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for case in cases:
        cells = []
        for v in variants:
            t = times.get((case, v), [])
            if not t:
                cells.append("-")
                continue
            cell = "/".join(f"{x:.1f}" for x in t)
            r = times.get((case, ref), [])
            if v != ref and r:
                cell += f" ({statistics.median(t) / statistics.median(r):.3f}x)"
            cells.append(cell)
        dt, rows, V, K, kind = case
        print(f"| {dt} {rows} x {V} K {K} {kind} | " + " | ".join(cells) + " |")
    runs = sum(len(t) for t in times.values())
    print(f"\n{runs} runs parsed, {len(bad)} not PASS")
    for line in bad:
        print("  " + line)
    for line in timelines:
        print(line)
    return 0 if runs else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
