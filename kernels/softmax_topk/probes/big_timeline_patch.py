#!/usr/bin/env python3
"""Diagnostic (not part of the build): writes a copy of fused_stream.cu with per-row stamps in the
K > 32 kernel (softmax_topk_stream_big_kernel) for probes/stream_big_timeline.cu. The library file
has no hooks there; this inserts them at fixed anchors and fails loudly when an anchor is gone.
  python3 kernels/softmax_topk/probes/big_timeline_patch.py kernels/softmax_topk/fused_stream.cu out.cu
Points (slot of row r: big_tl[r * 16 + point]): 0 start, 1 end of sample, 2 end of stream (before
the row statistics), 3 end of the final select, 4 end of the sort, 5 row written; counters: 6 SM,
7 compactions, 8 composites inserted, 9 vectors drained, 10 in-order passes, 11 keys at the end,
12 radix passes (K > 32 compactions), 13 insert rounds (drain and sample rounds), 14 finish_by_bins
gave up, 15 composites inserted by the end of the sample."""
import sys

src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()

def sub(old, new, count=1):
    global s
    n = s.count(old)
    if n != count:
        sys.exit(f"anchor found {n} times (want {count}): {old[:80]!r}")
    s = s.replace(old, new)

hooks = r'''
#include "kernels/common/globaltimer.cuh"
namespace fusebench::kernels {
__device__ unsigned long long* big_tl = nullptr;
__device__ long long big_row[1 << 16];
}
#define BTL_SLOT(pt) big_tl[static_cast<std::size_t>(big_row[blockIdx.x * 32 + threadIdx.x / 32]) * 16 + (pt)]
#define BTL(pt) do { if (big_tl != nullptr && threadIdx.x % 32 == 0) BTL_SLOT(pt) = globaltimer_ns(); } while (0)
#define BTC(pt, v) do { if (big_tl != nullptr && threadIdx.x % 32 == 0) atomicAdd(&BTL_SLOT(pt), static_cast<unsigned long long>(v)); } while (0)
#define BTS(pt, v) do { if (big_tl != nullptr && threadIdx.x % 32 == 0) BTL_SLOT(pt) = static_cast<unsigned long long>(v); } while (0)
'''
sub('#include "kernels/softmax_topk/warp_row.cuh"\n', '#include "kernels/softmax_topk/warp_row.cuh"\n' + hooks)
sub("    if (r >= static_cast<std::int64_t>(blockIdx.x + 1) * rows / gridDim.x) return;  // warp-uniform; no block barrier follows\n",
    "    if (r >= static_cast<std::int64_t>(blockIdx.x + 1) * rows / gridDim.x) return;  // warp-uniform; no block barrier follows\n"
    "    if (lane == 0) big_row[blockIdx.x * 32 + warp] = r;\n    __syncwarp();\n"
    "    { unsigned sm; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(sm)); BTS(6, sm); }\n    BTL(0);\n")
_sr = "            return false;\n        }\n        st = sr.st;\n"
sub(_sr, _sr.replace("        st = sr.st;\n", "        BTL(1);\n        if (big_tl != nullptr && lane == 0) BTL_SLOT(15) = BTL_SLOT(8);\n        st = sr.st;\n"))
sub("                end_sample();\n                if (lane == 0) *s0_slot = w.count;\n",
    "                end_sample();\n                if (lane == 0) *s0_slot = w.count;\n                BTL(1);\n"
    "                if (big_tl != nullptr && lane == 0) BTL_SLOT(15) = BTL_SLOT(8);\n")
sub("    float M, S;\n    if (!row_stats(st, M, S, row, V)) {\n        topk_detail::warp_write_no_softmax(p_out, i_out, K, lane);\n        return true;\n    }\n    if (Sampled",
    "    BTL(2);\n    BTS(11, w.count);\n    float M, S;\n    if (!row_stats(st, M, S, row, V)) {\n        topk_detail::warp_write_no_softmax(p_out, i_out, K, lane);\n        return true;\n    }\n    if (Sampled")
sub("    if (!Big) STREAM_COUNT_SMALL(stl_compactions);\n", "    if (!Big) STREAM_COUNT_SMALL(stl_compactions);\n    if (Big) BTC(7, 1);\n")
_ir = "        w = compact<true>(keys, hist, w, K, big_limit(K, cap, CountRoom ? cnt : 32 * W), lane, lane_max);\n    }\n"
sub(_ir, _ir + "    { const unsigned ins_ = __reduce_add_sync(full_mask, __popc(bits)); BTC(8, ins_); BTC(13, 1); }\n")
# radix passes of the K > 32 compactions (warp_radix_select<true>: Plain = Big)
sub("        if (static_cast<int>(K - need + in_bin) <= limit || shift == 0) return prefix;\n",
    "        if (Plain) BTC(12, 1);\n        if (static_cast<int>(K - need + in_bin) <= limit || shift == 0) return prefix;\n")
# finish_by_bins gave up (crowded bins): the select and sort instead
sub("        for (int b = lane; b < hist_words; b += 32) hist[b] = 0;\n        __syncwarp();\n        return false;\n",
    "        for (int b = lane; b < hist_words; b += 32) hist[b] = 0;\n        __syncwarp();\n        BTC(14, 1);\n        return false;\n")
sub("    const int first = whole ? 0 : w.vn % 32;\n", "    const int first = whole ? 0 : w.vn % 32;\n    BTC(9, w.vn - first);\n")
# the in-order pass (big_pass_in_order: after the retry variant's mark, if any)
sub("        }\n    }\n    auto* keys = static_cast<std::uint64_t*>(__cvta_shared_to_generic(keys_s));\n",
    "        }\n    }\n    BTC(10, 1);\n    auto* keys = static_cast<std::uint64_t*>(__cvta_shared_to_generic(keys_s));\n")
# softmax_topk_stream_wide_kernel (K > 256, rows taken in a loop), where present: a row's slots from its start
_wk = "        const T* row = logits + r * V;\n        const row_split rs = split_row<T, 128>(row, V);\n"
if _wk in s:
    sub(_wk, "        if (lane == 0) big_row[blockIdx.x * 32 + warp] = r;\n        __syncwarp();\n"
        "        { unsigned sm; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(sm)); BTS(6, sm); }\n        BTL(0);\n" + _wk)
# finish_big_row: the bins path and the select + sort path
_w = "        topk_detail::warp_write_topk(keys, min(w.count, K), row, V, K, M, S, p_out, i_out, lane);\n        return;\n"
sub(_w, "        BTL(3);\n        BTL(4);\n" + _w.replace("        return;\n", "        BTL(5);\n        return;\n"), count=s.count(_w) or 1)
sub("    if (w.count > K) w = compact<true>(keys, hist, w, K, K, lane, M);  // n <= 256 for K <= 256\n",
    "    if (w.count > K) w = compact<true>(keys, hist, w, K, K, lane, M);  // n <= 256 for K <= 256\n    BTL(3);\n")
sub("  // cap >= the next power of two of K\n    }\n    __syncwarp();\n    topk_detail::warp_write_topk(keys, n, row, V, K, M, S, p_out, i_out, lane);\n}\n",
    "  // cap >= the next power of two of K\n    }\n    __syncwarp();\n    BTL(4);\n    topk_detail::warp_write_topk(keys, n, row, V, K, M, S, p_out, i_out, lane);\n    BTL(5);\n}\n")
# finish_wide (K > 256), where present: the whole end is stamped as "select"
_f = "p_out, i_out, M, S))\n        return;\n"
if _f in s:
    sub(_f, "p_out, i_out, M, S)) {\n        BTL(3);\n        BTL(4);\n        BTL(5);\n        return;\n    }\n")
open(dst, "w").write(s)
