#!/usr/bin/env python3
# Medians per case of two probe builds' LIB lines (rep<N> <build> LIB ...), and their ratio: ab_summary.py FILE A B
import collections, re, statistics, sys
path, a, b = sys.argv[1:4]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(path):
    m = re.match(r'rep\d (\S+) LIB\s+(\S+)\s+(\d+) x (\d+) K (\d+) (\S+)\s*: (\S+).*?median ([\d.]+) us', l)
    if m:
        t[m.group(2, 4, 5, 6)][m.group(1)].append(float(m.group(8)))
for key in sorted(t, key=lambda k: (k[0], int(k[1]), int(k[2]), k[3])):
    x, y = statistics.median(t[key][a]), statistics.median(t[key][b])
    print(f"{key[0]:5s} 4096 x {key[1]:>6s} K {key[2]:>3s} {key[3]:10s} {a} {x:7.1f} {b} {y:7.1f} us  {b}/{a} {y / x:.3f}")
