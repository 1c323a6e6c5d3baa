import json, sys
j = json.load(open(sys.argv[1]))
print("status", j.get("status"), "summary", j.get("summary"), "device", (j.get("device") or {}).get("name"))
for r in j["results"]:
    v = r["variant"] + ("[" + r["config"] + "]" if r.get("config") else "")
    out = {}
    c = r.get("correctness") or {}
    for o in c.get("outputs", []):
        out[o["output"]] = o
    def f(x):
        return "-" if x is None or isinstance(x, str) else "%.3g" % x
    lse = out.get("lse", {}); o = out.get("o", {})
    rel = lse.get("relative_to_baseline") or {}
    orel = o.get("relative_to_baseline") or {}
    t = r.get("timing") or {}
    med = t.get("median_us", t.get("median"))
    line = "%-34s %-32s %-7s lse_max %s (base %s %s allow %s) o_max %s o_rel_l2 %s (base %s allow_rel %s) med_us %s" % (
        r["case"], v, r["outcome"], f(lse.get("max_abs")), rel.get("baseline", "-"), f(rel.get("baseline_max_abs")),
        f(rel.get("allowed_max_abs")), f(o.get("max_abs")), f(o.get("rel_l2")), f(orel.get("baseline_rel_l2")),
        f(orel.get("allowed_rel_l2")), f(med))
    if r["outcome"] in ("fail", "error"):
        line += " REASON " + (r.get("reason") or "")[:300]
    if r["outcome"] == "skipped":
        line = "%-34s %-32s skipped: %s" % (r["case"], v, (r.get("reason") or "")[:120])
    print(line)
