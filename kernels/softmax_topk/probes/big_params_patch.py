#!/usr/bin/env python3
"""Diagnostic (not part of the build): writes a copy of fused_stream.cu (or of the copy that
big_timeline_patch.py wrote) whose K > 32 launches take their sample stride P, sample rank r and sample
kind (by maxima or parked), and whose K > 256 launches take their key room per warp (cap), from fusebench::kernels::big_params (0 / -1:
the library's choice; a cap given must fit the block's warps), for probes/stream_big_params.cu. Host code only: the kernels are the file's.
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
sub("    const std::size_t smem = static_cast<std::size_t>(nwarps) * per_warp;\n",
    "    if (a.K > 256 && big_params.cap > 0) {\n"
    "        per_warp = per_warp - static_cast<std::size_t>(cap) * 8 + static_cast<std::size_t>(big_params.cap) * 8;\n"
    "        cap = big_params.cap;\n"
    "    }\n"
    "    const std::size_t smem = static_cast<std::size_t>(nwarps) * per_warp;\n")
sub("    const int P = a.K <= 256 ?", "    int P = a.K <= 256 ?")
sub("    const int r_sample = a.K > 256 ? wide_sample_rank(a.K, P, nfull_max - 1) : sample_rank;\n",
    "    if (big_params.P > 0) P = big_params.P;\n"
    "    const int r_sample = big_params.r > 0 ? big_params.r : a.K > 256 ? wide_sample_rank(a.K, P, nfull_max - 1) : sample_rank;\n")
sub("    if (P > 1 && (a.K > 256 || (nfull_max + P - 1) / P * 32 <= maxima_sample_vectors)) {\n",
    "    if (P > 1 && (big_params.maxima >= 0 ? big_params.maxima == 1\n"
    "                                                    : a.K > 256 || (nfull_max + P - 1) / P * 32 <= maxima_sample_vectors)) {\n")
open(dst, "w").write(s)
