# Prints one line per result of a fusebench report: case, variant:config, outcome, median us, TFLOP/s,
# speedup, max |err| (against the verdict's reference), the baseline's, bound use, fp32-input error.
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    print(f"# {path}: {r['device']['name']} commit {r['tool']['git_commit'][:7]} dirty {r['tool']['git_dirty']} seed {r['settings']['seed']}")
    for x in r["results"]:
        t = (x.get("timing") or {}).get("median_us")
        d = x.get("derived") or {}
        c = x.get("correctness") or {}
        o = (c.get("outputs") or [{}])[0]
        rel = o.get("relative_to_baseline") or {}
        fig = o.get("figures") or {}
        def f(k):
            v = fig.get(k)
            return v.get("value") if isinstance(v, dict) else v
        tf = d.get("achieved_tflops")
        sp = d.get("speedup_vs_baseline")
        print(f"{x['case']:28s} {x['dtype']:4s} {x['variant'] + (':' + x['config'] if x.get('config') else ''):30s} {x['outcome']:7s} "
              f"{t if t is None else round(t, 2)!s:>9} us  {tf if tf is None else round(tf, 1)!s:>6} TF  x{sp if sp is None else round(sp, 2)!s:>6}  "
              f"err {o.get("max_abs")!s:>10} relL2 {o.get("rel_l2")!s:>10} base {rel.get("baseline_max_abs")!s:>10} "
              f"use {f("tf32_bound_use")!s:>8} fp32in {f("fp32_inputs_max_abs")!s:>9} {'' if x['outcome'] == 'pass' else (x.get('reason') or '')[:90]}")
