#!/usr/bin/env python3
"""Summary of call1.sh's A/B: ab-<dtype>-<base|pr>-<n>.json (fusebench reports) in the folder argv[1] (or the
ab-json.tgz there). Per case and dtype: each binary's median over its runs of the suite's median time, pr / base,
and each binary's time over the std1 (random logits) case of the same shape and K; outcomes of every run."""
import collections, glob, io, json, os, statistics, sys, tarfile


def reports(folder):
    tgz = os.path.join(folder, "ab-json.tgz")
    if os.path.exists(tgz):
        with tarfile.open(tgz) as t:
            for m in t.getmembers():
                yield m.name, json.load(t.extractfile(m))
    for f in sorted(glob.glob(os.path.join(folder, "ab-*.json"))):
        yield os.path.basename(f), json.load(open(f))


t = collections.defaultdict(lambda: collections.defaultdict(list))
outs = collections.defaultdict(set)
for name, rep in reports(sys.argv[1]):
    binary = name.split("-")[2]
    for r in rep["results"]:
        us = (r.get("timing") or {}).get("median_us")
        key = (r["case"], r["dtype"])
        if us is not None:
            t[key][binary].append(us)
        outs[key].add(r["outcome"])
med = {k: {b: statistics.median(v) for b, v in m.items()} for k, m in t.items()}
std = {(c.rsplit(":", 1)[0], d): m for (c, d), m in med.items() if c.endswith(":std1")}
f = lambda a, b: f"{a / b:8.3f}" if a and b else "       -"
print(f"{'case':34s} {'dtype':5s} {'base us':>9s} {'pr us':>9s} {'pr/base':>8s} {'base/std1':>9s} {'pr/std1':>8s} outcomes")
for (case, dt), m in sorted(med.items()):
    s = std.get((case.rsplit(":", 1)[0], dt), {})
    b, p = m.get("base"), m.get("pr")
    print(f"{case:34s} {dt:5s} {b or 0:9.2f} {p or 0:9.2f} {f(p, b)} {f(b, s.get('base')):>9s} {f(p, s.get('pr'))} "
          f"{','.join(sorted(outs[(case, dt)]))}")
