#!/usr/bin/env python3
"""The README's two board-against-board tables, from two fusebench reports (default runs).

Usage: scripts/readme_tables.py H100.json H200.json [--section memory|attention|cudnn|softmax|all]

- memory: glu, rmsnorm and softmax_topk, one row per timed (suite, case, dtype): the fastest
  passing fused variant of the first report, with its figures on both boards (`% floor` =
  derived.pct_of_floor, `vs naive` = derived.speedup_vs_baseline).
- attention: every timed attention result of the first report (variant[config]), naive, fused
  and peers, with the same result of the second report (`% ceiling` = derived.pct_of_ceiling).
- cudnn: wgmma_tma against cuDNN, the rows of CUDNN_ROWS: the default configuration (ping-pong)
  and, first board only, the unturned one, with `cudnn_sdpa` of the same run; `vs cuDNN` = cuDNN's
  time / ours. Decode rows are times only. Then one line per board with the 1k..16k causal figures
  the README's text quotes.
- softmax: the line of fused_stream figures (% of the floor, first / second board) the README's
  softmax + top-k paragraph quotes.

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


# (README row, case, dtype, decode: times only)
CUDNN_ROWS = (
    ("S=1k", "b1h32s1024d128:causal", "bf16", False),
    ("S=2k", "b1h32s2048d128:causal", "bf16", False),
    ("S=4k", "b1h32s4096d128:causal", "bf16", False),
    ("S=8k", "b1h32s8192d128:causal", "bf16", False),
    ("S=16k", "b1h32s16384d128:causal", "bf16", False),
    ("S=4k fp16", "b1h32s4096d128:causal", "fp16", False),
    ("S=4k no mask", "b1h32s4096d128:full", "bf16", False),
    ("S=4k head_dim 64", "b1h32s4096d64:causal", "bf16", False),
    ("S=4k GQA 8 KV heads", "b1h32kv8s4096d128:causal", "bf16", False),
    ("decode q1 k4096 (us)", "b1h32q1k4096d128:causal", "bf16", True),
    ("decode q1 k32768 (us)", "b1h32q1k32768d128:causal", "bf16", True),
    ("decode GQA q1 k32768 (us)", "b1h32kv8q1k32768d128:causal", "bf16", True),
    ("S=4k head_dim 256, H=16", "b1h16s4096d256:causal", "bf16", False),
)


def cudnn_table(a, b):
    la, ra = a
    lb, rb = b

    def index(rs):
        return {key(x)[1:]: x for x in rs if x["suite"] == "attention" and timed(x)}

    ia, ib = index(ra), index(rb)

    def fig(ix, case, dt, var, cfg, decode, with_rate=True):
        x = ix.get((case, dt, var, cfg))
        if x is None:
            return None, "-"
        us = x["timing"]["median_us"]
        d = x.get("derived") or {}
        if decode or not with_rate:
            return us, f"{us:.2f}" if decode else f"{d.get('achieved_tflops', float('nan')):.1f}"
        return us, f"{us:.2f} / {d.get('achieved_tflops', float('nan')):.1f} / {d.get('pct_of_ceiling', float('nan')):.1f}"

    def vs(ours, theirs):
        return f"{100 * theirs / ours:.1f}%" if ours and theirs else "-"

    print(f"| case | {la} default us / TFLOP/s / % ceiling | {la} unturned us / TFLOP/s / % ceiling | {la} cudnn_sdpa TFLOP/s | "
          f"{la} default vs cuDNN | {lb} default us / TFLOP/s / % ceiling | {lb} cudnn_sdpa TFLOP/s | {lb} default vs cuDNN |")
    print("|---|---|---|---|---|---|---|---|")
    summary = {la: [], lb: []}
    for row, case, dt, decode in CUDNN_ROWS:
        d256 = "d256" in case
        dflt, unt = ("bm128_bn64_s2_pp", "bm128_bn64_s2") if d256 else ("bm128_bn128_s2_pp", "bm128_bn128_s2")
        cells_out = []
        for ix, label, with_unturned in ((ia, la, True), (ib, lb, False)):
            us_d, c_d = fig(ix, case, dt, "wgmma_tma", dflt, decode)
            cells_out.append(c_d)
            if with_unturned:
                cells_out.append(fig(ix, case, dt, "wgmma_tma", unt, decode)[1])
            us_c, c_c = fig(ix, case, dt, "cudnn_sdpa", "", decode, with_rate=False)
            cells_out.append(c_c + (" (us)" if decode and us_c is not None else ""))
            cells_out.append(vs(us_d, us_c))
            if row in ("S=1k", "S=2k", "S=4k", "S=8k", "S=16k"):
                summary[label].append((row, vs(us_d, us_c), ix.get((case, dt, "wgmma_tma", dflt))))
        print(f"| {row} | " + " | ".join(cells_out) + " |")
    print()
    for label, items in summary.items():
        last = items[-1][2] if items else None
        tail = ""
        if last is not None:
            d = last.get("derived") or {}
            tail = f" ({d.get('achieved_tflops', float('nan')):.1f} TFLOP/s at 16k, {d.get('pct_of_ceiling', float('nan')):.1f}% of the ceiling)"
        print(f"{label} default vs cuDNN, causal bf16 1k..16k: " + ", ".join(v for _, v, _ in items) + tail)


# (label, case, dtype) of the softmax + top-k paragraph's fused_stream figures
SOFTMAX_FIGURES = (
    ("fp32 K = 10", "4096x50257:K10:std10", "fp32"),
    ("K = 256", "4096x50257:K256:std10", "fp32"),
    ("bf16 K = 10", "4096x50257:K10:std10", "bf16"),
    ("K = 256", "4096x50257:K256:std10", "bf16"),
    ("fp16 K = 256", "4096x50257:K256:std10", "fp16"),
    ("bf16 4096 x 151936 K = 256", "4096x151936:K256:std10", "bf16"),
)


def softmax_line(a, b):
    def pct(rs, case, dt):
        for x in rs:
            if x["suite"] == "softmax_topk" and x["case"] == case and x["dtype"] == dt and x["variant"] == "fused_stream" and timed(x):
                v = (x.get("derived") or {}).get("pct_of_floor")
                return f"{v:.1f}" if v is not None else "-"
        return "-"

    parts = [f"{label} {pct(a[1], case, dt)} / {pct(b[1], case, dt)}%" for label, case, dt in SOFTMAX_FIGURES]
    print(f"fused_stream, % of the floor, {a[0]} / {b[0]}: " + "; ".join(parts))


SECTIONS = (("memory", memory_table), ("attention", attention_table), ("cudnn", cudnn_table), ("softmax", softmax_line))


def main(argv):
    ap = argparse.ArgumentParser(description="The README's board-against-board tables from two default-run reports.")
    ap.add_argument("first", help="report whose timed results choose the rows (e.g. h100.json)")
    ap.add_argument("second", help="report shown beside it (e.g. h200.json)")
    ap.add_argument("--section", choices=tuple(n for n, _ in SECTIONS) + ("all",), default="all")
    args = ap.parse_args(argv)
    a, b = load(args.first), load(args.second)
    sections = [f for n, f in SECTIONS if args.section in (n, "all")]
    for i, section in enumerate(sections):
        if i:
            print()
        section(a, b)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
