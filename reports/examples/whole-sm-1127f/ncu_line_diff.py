# Per source line, instructions executed and stall samples of two ncu source pages (--page source --csv
# --print-source cuda,sass, gzipped): python3 ncu_line_diff.py run from the folder holding whole.cudasass.csv.gz
# and share.cudasass.csv.gz (callE2/). Lines sorted by the instructions the second run added.
import csv, gzip, sys, collections
def agg(p):
    out=collections.Counter(); samp=collections.Counter(); src={}
    f=None
    for row in csv.reader(gzip.open(p,'rt')):
        if not row: continue
        if row[0]=='File Path': f=row[1].split('/')[-1]; continue
        if row[0] in ('Function Name','Line No'): continue
        if len(row)>8 and row[0].isdigit() and row[2]=='-':
            k=(f,int(row[0])); out[k]+=int(row[7] or 0); samp[k]+=int(row[4] or 0); src[k]=row[1][:90]
    return out,samp,src
a,sa,srca=agg('whole.cudasass.csv.gz'); b,sb,srcb=agg('share.cudasass.csv.gz')
print('total inst', sum(a.values()), sum(b.values()), 'samples', sum(sa.values()), sum(sb.values()))
keys=set(a)|set(b)
d=sorted(keys,key=lambda k: -(b[k]-a[k]))
for k in d[:30]:
    print(f"{k[0][:18]:18s} {k[1]:5d} {a[k]:10d} {b[k]:10d} {b[k]-a[k]:+10d} samp {sa[k]:6d} {sb[k]:6d}  {(srcb.get(k) or srca.get(k))}")
print('--- most negative')
for k in d[-8:]:
    print(f"{k[0][:18]:18s} {k[1]:5d} {a[k]:10d} {b[k]:10d} {b[k]-a[k]:+10d} samp {sa[k]:6d} {sb[k]:6d}  {(srcb.get(k) or srca.get(k))}")
