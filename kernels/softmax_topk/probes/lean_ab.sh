#!/usr/bin/env bash
# Device script (not part of the build): fused_stream's K <= 32 kernel with and without Lean
# (consume_vec_lean: lane-by-lane appends, one-instruction bf16 unpacks), built from one source with
# FUSEBENCH_STREAM_LEAN=0 / 1 and the L2 prefetch fixed off (FUSEBENCH_STREAM_L2PF=0, the H200's
# choice; a fixed knob also keeps the launch path free of the device-attribute query), timed on one board,
# three interleaved rounds, std 10 (sd -1: ascending rows), events (probes/stream_ab.cu: indices
# compared with the first build's output). Written for the next H200 call (kernels/softmax_topk/NOTES.md, "The 16-bit stream on the H200", "What is
# left"): fp16 with Lean was tested but not timed cleanly, so the library gives Lean to bf16 only.
# FUSEBENCH_LEAN_LANES_MAX (default 4) is the lane count above which a step keeps append_elems;
#   OUT=/tmp/out bash kernels/softmax_topk/probes/lean_ab.sh      (~3 min: three builds in parallel, then runs)
set -uo pipefail
# FUSEBENCH_STREAM_SMALL_MAX_K=32: K = 16..32 stay in the K <= 32 kernel (on fast memory the library
# sends fused_stream's 16-bit K >= 16 to the K > 32 kernel; fused_stream_resample keeps them here).
# L2PF: the K <= 32 kernel's one-batch L2 prefetch, fixed for all three builds: 0 is the H200's choice (default),
# 1 the H100's (L2PF=1 bash .../lean_ab.sh to A/B Lean under the H100's own setting).
L2PF=${L2PF:-0}; case "$L2PF" in 0|1) ;; *) echo "L2PF must be 0 or 1"; exit 2;; esac
# CASES overrides the list (type:V:K:sd, sd -1 = ascending rows), e.g. CASES="bf16:50257:10:10 f16:32000:10:10".
CASES=${CASES:-"bf16:50257:10:10 f16:50257:10:10 bf16:151936:10:10 f16:151936:10:10 bf16:32000:10:10 f16:32000:10:10 bf16:50257:32:10 f16:50257:32:10 f32:50257:10:10 bf16:50257:10:-1 f16:50257:10:-1"} \
  COMMON_FLAGS="-DFUSEBENCH_STREAM_L2PF=$L2PF -DFUSEBENCH_STREAM_SMALL_MAX_K=32" TAG=lean_ab \
  VARIANTS="base=-DFUSEBENCH_STREAM_LEAN=0;lean=-DFUSEBENCH_STREAM_LEAN=1;lean8=-DFUSEBENCH_STREAM_LEAN=1 -DFUSEBENCH_LEAN_LANES_MAX=8" \
  exec bash "$(dirname "$0")/knob_ab.sh"
