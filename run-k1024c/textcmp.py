#!/usr/bin/env python3
"""md5 of each .text section of two cubins (anonymous-namespace hash stripped from names); prints
identical / differing / only-in-one counts and the differing names."""
import hashlib, re, subprocess, sys
def secs(f):
    out = subprocess.run(["readelf", "-W", "-S", f], capture_output=True, text=True).stdout
    names = re.findall(r"\]\s+(\.text\.\S+)", out)
    res = {}
    data = open(f, "rb").read()
    for line in out.splitlines():
        m = re.search(r"\]\s+(\.text\.\S+)\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            name, off, size = m.group(1), int(m.group(2), 16), int(m.group(3), 16)
            key = re.sub(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+", "ANON", name)
            res[key] = hashlib.md5(data[off:off + size]).hexdigest()
    return res
a, b = secs(sys.argv[1]), secs(sys.argv[2])
same = [k for k in a if k in b and a[k] == b[k]]
diff = [k for k in a if k in b and a[k] != b[k]]
print(f"identical {len(same)}, differ {len(diff)}, only in A {len(set(a) - set(b))}, only in B {len(set(b) - set(a))}")
for k in diff: print("  differ:", k[:160])
for k in sorted(set(b) - set(a)): print("  only B:", k[:160])
for k in sorted(set(a) - set(b)): print("  only A:", k[:160])
