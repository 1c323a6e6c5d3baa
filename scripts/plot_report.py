#!/usr/bin/env python3
"""Plots from fusebench reports: a roofline per device and speedup bars per suite, PNG and SVG.

    scripts/plot_report.py REPORT.json [REPORT.json ...] [--out DIR] [--suite S,...] [--formats png,svg]

Roofline (one per device of each report): achieved TFLOP/s against arithmetic intensity
(model flops / model bytes), one point per timed (suite, case, dtype, variant), under the
device's own measured ceilings: the copy and read bandwidths as slanted roofs, the bf16/fp16
tensor-core and fp32 rates as flat ones. Speedup bars (one figure per suite and device): each
fused variant's speedup over the suite's naive baseline, per case, one panel per dtype; failed
results are marked FAIL where their bar would be.

Needs matplotlib (Debian: python3-matplotlib; scripts/setup.sh installs it with
FUSEBENCH_WITH_PLOTS=1). A report merged from several GPUs (fusebench merge) gives one roofline
per device.
"""
import argparse
import gzip
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Reproducible SVGs: no random ids, no date.
matplotlib.rcParams["svg.hashsalt"] = "fusebench"


def number(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def ceiling(ceilings, key):
    c = (ceilings or {}).get(key)
    return number(c.get("value")) if isinstance(c, dict) else None


def sources(path):
    """(label, device, ceilings, results) per device of a report."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        doc = json.load(f)
    if doc.get("schema", {}).get("name") != "fusebench-report":
        sys.exit(f"plot_report: {path}: not a fusebench report")
    if doc["schema"].get("version") != 1:
        sys.exit(f"plot_report: {path}: report schema version {doc['schema'].get('version')} is not 1")
    if isinstance(doc.get("devices"), list) and doc["devices"]:
        out = []
        for i, d in enumerate(doc["devices"]):
            results = [r for r in doc["results"] if r.get("device_index") == i]
            out.append((d["device"].get("label") or "gpu", d["device"], d.get("ceilings"), results))
        return out
    dev = doc.get("device") or {}
    return [(dev.get("label") or "gpu", dev, doc.get("ceilings"), doc["results"])]


def timed(r):
    return r.get("outcome") == "pass" and isinstance(r.get("timing"), dict)


def save(fig, out_dir, name, formats):
    paths = []
    for fmt in formats:
        p = os.path.join(out_dir, f"{name}.{fmt}")
        fig.savefig(p, dpi=130, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
        paths.append(p)
    plt.close(fig)
    return paths


def roofline(label, device, ceilings, results, out_dir, formats):
    pts = []
    for r in results:
        d = r.get("derived") or {}
        ai, tf = number(d.get("arithmetic_intensity")), number(d.get("achieved_tflops"))
        if timed(r) and ai and tf:
            pts.append((r["suite"], r["variant"], ai, tf))
    if not pts:
        return []
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [p[2] for p in pts]
    x_lo, x_hi = min(xs) / 4, max(max(xs) * 4, 1000)
    grid = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
    flat = [(k, name) for k, name in (("bf16_tflops", "bf16 tensor core"), ("fp16_tflops", "fp16 tensor core"),
                                      ("fp32_tflops", "fp32 FMA")) if ceiling(ceilings, k)]
    top = max([ceiling(ceilings, k) for k, _ in flat] or [None]) or None
    for key, name, style in (("copy_gbps", "copy", "-"), ("read_gbps", "read", "--")):
        bw = ceiling(ceilings, key)
        if bw:
            ys = [min(bw * x * 1e-3, top) if top else bw * x * 1e-3 for x in grid]
            ax.plot(grid, ys, style, color="black", linewidth=1.2, label=f"measured {name}: {bw:.0f} GB/s")
    # Flat roofs within 15% of each other share one label (bf16 and fp16 tensor cores).
    labelled = []
    for key, name in sorted(flat, key=lambda kn: -ceiling(ceilings, kn[0])):
        v = ceiling(ceilings, key)
        ax.axhline(v, color="grey", linewidth=0.8, linestyle=":")
        if labelled and labelled[-1][0] / v < 1.15:
            labelled[-1][1].append(f"{name} {v:.0f}")
        else:
            labelled.append((v, [f"{name} {v:.0f}"]))
    for v, names in labelled:
        ax.text(x_lo * 1.1, v * 1.08, ", ".join(names) + " TFLOP/s (measured)", va="bottom", ha="left", fontsize=8,
                color="dimgrey")
    variants = sorted({(p[0], p[1]) for p in pts})
    cmap = plt.get_cmap("tab10")
    markers = "osD^vP*Xh"
    suites = sorted({p[0] for p in pts})
    for i, (suite, variant) in enumerate(variants):
        sel = [p for p in pts if p[0] == suite and p[1] == variant]
        ax.scatter([p[2] for p in sel], [p[3] for p in sel], s=22, color=cmap(i % 10),
                   marker=markers[suites.index(suite) % len(markers)], label=f"{suite} {variant}", alpha=0.85,
                   edgecolors="none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ys = [p[3] for p in pts]
    ax.set_ylim(min(ys) / 4, (top or max(ys)) * 3)
    ax.set_xlabel("arithmetic intensity [flop/byte] (model flops / model bytes)")
    ax.set_ylabel("achieved [TFLOP/s]")
    name = device.get("name", "unknown device")
    ax.set_title(f"fusebench roofline: {name} ({label}), measured ceilings, {len(pts)} timed results")
    ax.grid(True, which="both", linewidth=0.3, alpha=0.5)
    ax.legend(fontsize=7, loc="lower right", frameon=True, framealpha=0.9)
    return save(fig, out_dir, f"roofline_{label}", formats)


def speedup_bars(label, device, results, suite, out_dir, formats):
    rs = [r for r in results if r["suite"] == suite and r.get("role") == "fused"]
    dtypes = [d for d in ("fp32", "bf16", "fp16") if any(r["dtype"] == d for r in rs)]
    dtypes += sorted({r["dtype"] for r in rs} - set(dtypes))
    panels = []
    for dt in dtypes:
        cases, variants, cell = [], [], {}
        for r in rs:
            if r["dtype"] != dt:
                continue
            failed = r.get("outcome") in ("fail", "error")
            sp = number((r.get("derived") or {}).get("speedup_vs_baseline"))
            if not (failed or (timed(r) and sp)):
                continue
            if r["case"] not in cases:
                cases.append(r["case"])
            if r["variant"] not in variants:
                variants.append(r["variant"])
            cell[(r["case"], r["variant"])] = None if failed else sp
        if cases:
            panels.append((dt, cases, variants, cell))
    if not panels:
        return []
    width = max(8, 0.55 * max(len(p[1]) * max(len(p[2]), 1) for p in panels) / 2 + 3)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 3.2 * len(panels)), squeeze=False)
    cmap = plt.get_cmap("tab10")
    # One color per variant across the dtype panels.
    order = list(dict.fromkeys(v for p in panels for v in p[2]))
    for ax, (dt, cases, variants, cell) in zip(axes[:, 0], panels):
        n = len(variants)
        w = 0.8 / n
        for vi, v in enumerate(variants):
            xs, hs = [], []
            for ci, c in enumerate(cases):
                if (c, v) not in cell:
                    continue
                x = ci - 0.4 + w * (vi + 0.5)
                if cell[(c, v)] is None:
                    ax.text(x, 1.0, "FAIL", rotation=90, ha="center", va="bottom", fontsize=7, color="red")
                else:
                    xs.append(x)
                    hs.append(cell[(c, v)])
            ax.bar(xs, hs, width=w, color=cmap(order.index(v) % 10), label=v)
        ax.axhline(1.0, color="black", linewidth=0.8)
        tallest = max([h for h in cell.values() if h] or [1.0])
        ax.set_ylim(0, tallest * 1.25)  # headroom for the legend
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(f"{dt}: speedup vs naive")
        ax.grid(True, axis="y", linewidth=0.3, alpha=0.5)
        ax.legend(fontsize=8, loc="upper left", frameon=False, ncol=n)
    axes[0, 0].set_title(f"fusebench {suite}: speedup over the naive baseline, {device.get('name', 'unknown device')} ({label})")
    fig.tight_layout()
    return save(fig, out_dir, f"speedup_{suite}_{label}", formats)


def main():
    ap = argparse.ArgumentParser(description="Roofline and speedup plots from fusebench reports.")
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--out", default="plots", help="output folder (default: plots)")
    ap.add_argument("--suite", default="", help="comma-separated suites (default: all)")
    ap.add_argument("--formats", default="png,svg", help="comma-separated formats (default: png,svg)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    formats = [f for f in a.formats.split(",") if f]
    wanted = {s for s in a.suite.split(",") if s}
    seen_labels = {}
    written = []
    for path in a.reports:
        for label, device, ceilings, results in sources(path):
            # Two boards of one model: the UUID's first digits keep their plots apart; the same
            # device in two reports: a count.
            tag = label
            if tag in seen_labels:
                uuid = (device.get("uuid") or "").removeprefix("GPU-")[:8]
                tag = f"{label}-{uuid}" if uuid else label
            n = seen_labels.get(tag, 0)
            seen_labels[tag] = n + 1
            if n:
                tag = f"{tag}-{n + 1}"
            seen_labels.setdefault(tag, 1)
            results = [r for r in results if not wanted or r["suite"] in wanted]
            written += roofline(tag, device, ceilings, results, a.out, formats)
            for suite in dict.fromkeys(r["suite"] for r in results):
                written += speedup_bars(tag, device, results, suite, a.out, formats)
    if not written:
        sys.exit("plot_report: no timed results to plot")
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
