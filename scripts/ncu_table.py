#!/usr/bin/env python3
"""Table of fusebench (CUPTI time, counter bytes) against Nsight Compute for the same launches.

ncu profiles every launch of `fusebench run --profile-once`: two verification launches and one
profile launch per variant, in that order. The last launch of each variant is matched to it by
its kernel names (taken from the fusebench report's CUPTI kernel list)."""
import csv
import io
import json
import sys


def ncu_rows(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    start = text.find('"ID"')
    if start < 0:
        sys.exit(f"no ncu CSV in {path}")
    rows = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        key = (r["ID"], r["Kernel Name"])
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "")
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "nsecond": 1e-3, "usecond": 1, "msecond": 1e3}.get(unit, 1)
        rows.setdefault(key, {})[r["Metric Name"]] = v * scale
    return [(int(i), name, m) for (i, name), m in sorted(rows.items(), key=lambda kv: int(kv[0][0]))]


def main():
    report = json.load(open(sys.argv[1]))
    launches = ncu_rows(sys.argv[2])
    print("| variant | CUPTI us | ncu us | diff | DRAM bytes fusebench | DRAM bytes ncu | diff | model bytes | % of ceiling |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in report["results"]:
        t, c = r.get("timing"), r.get("counters")
        if not t or "cupti" not in t:
            continue
        names = t["cupti"]["kernel_names"]
        k = len(names)
        # The last k profiled kernels whose names match this variant's kernels, in order.
        matched = [row for row in launches if any(row[1].startswith(n.split("(")[0].split("<")[0].split("::")[-1]) or n.split("(")[0] in row[1] for n in names)]
        last = matched[-k:] if len(matched) >= k else []
        ncu_us = sum(m["gpu__time_duration.sum"] for _, _, m in last) if last else None
        ncu_bytes = sum(m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"] for _, _, m in last) if last else None
        fb_bytes = c["reconciliation"]["measured_dram_bytes"] if c else None
        model = r["traffic_model"]["bytes_read"] + r["traffic_model"]["bytes_written"]
        fmt = lambda x, f: "-" if x is None else f.format(x)
        dt = None if ncu_us is None else 100 * (t["median_us"] - ncu_us) / ncu_us
        db = None if (ncu_bytes is None or fb_bytes is None) else 100 * (fb_bytes - ncu_bytes) / ncu_bytes
        print(f"| {r['variant']} | {t['median_us']:.2f} | {fmt(ncu_us, '{:.2f}')} | {fmt(dt, '{:+.1f}%')} | {fmt(fb_bytes, '{:.0f}')} | "
              f"{fmt(ncu_bytes, '{:.0f}')} | {fmt(db, '{:+.1f}%')} | {model:.0f} | {fmt(r['derived'].get('pct_of_ceiling'), '{:.1f}')} |")


if __name__ == "__main__":
    main()
