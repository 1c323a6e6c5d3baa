#!/usr/bin/env python3
"""Diagnostic (not part of the build): writes a copy of fused_stream.cu (or of the copy that
big_timeline_patch.py wrote) whose K > 256 launches take their sample stride P, sample rank r, sample
kind (by maxima or parked) and key room per warp (cap) from fusebench::kernels::big_params (0 / -1:
the library's choice), for probes/stream_big_params.cu. Host code only: the kernels are the file's.
  python3 kernels/softmax_topk/probes/big_params_patch.py kernels/softmax_topk/fused_stream.cu out.cu"""
import sys

src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()

def sub(old, new):
    global s
    n = s.count(old)
    if n != 1:
        sys.exit(f"anchor found {n} times (want 1): {old[:80]!r}")
    s = s.replace(old, new)

hooks = r'''
namespace fusebench::kernels {
struct big_params_t { int P = 0, r = 0, maxima = -1, cap = 0; };
inline big_params_t big_params;
}
'''
sub('#include "kernels/softmax_topk/warp_row.cuh"\n', '#include "kernels/softmax_topk/warp_row.cuh"\n' + hooks)
sub("    const int cap = kpad + (kpad + step < budget ? budget - kpad : step);\n",
    "    int cap = kpad + (kpad + step < budget ? budget - kpad : step);\n"
    "    if (a.K > 256 && big_params.cap > 0) cap = big_params.cap;\n")
sub("    const int P = sample_stride(a.K, nfull_max - 2);\n",
    "    int P = sample_stride(a.K, nfull_max - 2);\n"
    "    if (a.K > 256 && big_params.P > 0) P = big_params.P;\n"
    "    const int r_sample = a.K > 256 && big_params.r > 0 ? big_params.r : sample_rank;\n")
sub("a.rows, a.V, K, cap, P, sample_rank);\n", "a.rows, a.V, K, cap, P, r_sample);\n")
sub("    if (P > 1 && (nfull_max + P - 1) / P * 32 <= maxima_sample_vectors) {\n",
    "    if (P > 1 && (a.K > 256 && big_params.maxima >= 0 ? big_params.maxima == 1\n"
    "                                                    : (nfull_max + P - 1) / P * 32 <= maxima_sample_vectors)) {\n")
open(dst, "w").write(s)
