#!/usr/bin/env python3
"""Table of fusebench (CUPTI time, counter bytes) against Nsight Compute for the same launches.

ncu profiles every launch of `fusebench run --profile-once`: two verification launches and one
profile launch per variant, in that order. The last launch of each variant is matched to it by
its kernel names (taken from the fusebench report's CUPTI kernel list)."""
import csv
import io
import json
import re
import sys


def base_name(demangled):
    """The kernel's own identifier: 'glu_vec_kernel' from 'void ns::(anonymous namespace)::glu_vec_kernel<...>(...)'."""
    s = demangled.replace("(anonymous namespace)", "")
    m = re.search(r"(\w+)\s*[<(]", s.split(" ", 1)[-1] if s.startswith("void ") else s)
    return m.group(1) if m else s


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
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
                 "nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}.get(unit)
        if scale is None:
            sys.exit(f"unknown ncu unit {unit!r} for {r['Metric Name']}")
        rows.setdefault(key, {})[r["Metric Name"]] = v * scale
    return [(int(i), name, m) for (i, name), m in sorted(rows.items(), key=lambda kv: int(kv[0][0]))]


def main():
    report = json.load(open(sys.argv[1]))
    launches = ncu_rows(sys.argv[2])
    print("| variant | CUPTI us (span) | CUPTI us (sum) | ncu us (sum) | diff (sum) | DRAM bytes fusebench | DRAM bytes ncu | diff | model bytes | % of ceiling |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in report["results"]:
        t, c = r.get("timing"), r.get("counters")
        if not t or "cupti" not in t:
            continue
        names = t["cupti"]["kernel_names"]
        k = len(names)
        # The last k profiled kernels whose names match this variant's kernels, in order.
        wanted = {base_name(n) for n in names}
        matched = [row for row in launches if base_name(row[1]) in wanted]
        last = matched[-k:] if len(matched) >= k else []
        ncu_us = sum(m["gpu__time_duration.sum"] for _, _, m in last) if last else None
        ncu_bytes = sum(m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"] for _, _, m in last) if last else None
        fb_bytes = c["reconciliation"]["measured_dram_bytes"] if c else None
        model = r["traffic_model"]["bytes_read"] + r["traffic_model"]["bytes_written"]
        fmt = lambda x, f: "-" if x is None else f.format(x)
        sum_us = t["cupti"]["sum_of_durations"]["median_us"]
        dt = None if ncu_us is None else 100 * (sum_us - ncu_us) / ncu_us
        db = None if (ncu_bytes is None or fb_bytes is None) else 100 * (fb_bytes - ncu_bytes) / ncu_bytes
        print(f"| {r['variant']} | {t['median_us']:.2f} | {sum_us:.2f} | {fmt(ncu_us, '{:.2f}')} | {fmt(dt, '{:+.1f}%')} | {fmt(fb_bytes, '{:.0f}')} | "
              f"{fmt(ncu_bytes, '{:.0f}')} | {fmt(db, '{:+.1f}%')} | {model:.0f} | {fmt(r['derived'].get('pct_of_ceiling'), '{:.1f}')} |")


if __name__ == "__main__":
    main()
