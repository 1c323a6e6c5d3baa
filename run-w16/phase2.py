# Per-row costs by category for the bf16 wide kernel: helper lines of other files (cuda_bf16.hpp,
# select.cuh, intrinsics) are given to the fused_stream.cu helper around them (nearest fused_stream line
# before, else after, in the same outer function).
import sys
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'phase.py')).read().split('tot = sum(')[0])
n = len(ins)
own = [x['fn'] if x['f'] == 'fused_stream.cu' and x['fn'] else None for x in ins]
prevh = [None]*n; cur=None
for k in range(n):
    if own[k]: cur = own[k]
    prevh[k] = cur
cat_of = {'consume_stats':'stream: stats (max, exp, sum)', 'rescale_to':'stream: stats (max, exp, sum)', 'vec_max':'stream: stats (max, exp, sum)',
          'elem_at':'stream: stats (max, exp, sum)', 'consume_vec':'stream: vote / park', 'vote_vec':'stream: vote / park',
          'insert_round':'drain: insert rounds', 'drain_list':'drain: insert rounds', 'beats':'drain: insert rounds', 'cthr_of':'drain: insert rounds',
          'compact':'compactions', 'warp_radix_select':'compactions', 'big_limit':'compactions', 'relaxed_limit':'compactions',
          'load_or_neg_inf':'loads', 'scalar_range':'head / tail', 'row_stats':'row end (stats)', 'append_one':'head / tail'}
agg = collections.defaultdict(lambda: [0.0, 0.0])
for k, x in enumerate(ins):
    o = x['outer']
    if o in ('finish_wide', 'finish_big_row', 'key_range'): c = 'finish_wide (row end)'
    elif o == 'sample_by_maxima':
        h = x['fn'] if own[k] else prevh[k]
        c = 'sample: ' + ('first use of loads' if 'cuda_bf16.hpp' == x['f'] and x['ln'] == 3717 else (cat_of.get(h, 'own lines') if h != 'sample_by_maxima' else 'own lines'))
    elif o == 'big_pass':
        h = x['fn'] if own[k] else prevh[k]
        if x['f'] == 'cuda_bf16.hpp' and x['ln'] == 3717: c = 'stream: first use of loads (vec_max, long_sb)'
        else: c = cat_of.get(h, 'big_pass own lines (loop, phases, checks)')
    else: c = str(o)
    agg[c][0] += x['s']; agg[c][1] += x['i']
tot = sum(x['s'] for x in ins); ti = sum(x['i'] for x in ins)
print("| category | stall samples | instructions | warp instructions a row |\n|---|---|---|---|")
for c, (s_, i_) in sorted(agg.items(), key=lambda kv: -kv[1][0]):
    print(f"| {c} | {100*s_/tot:.1f}% | {100*i_/ti:.1f}% | {i_/4096/1000:.1f}k |")
