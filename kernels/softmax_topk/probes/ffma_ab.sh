#!/usr/bin/env bash
# Device script (not part of the build): fused_stream with the two-op terms everywhere (FUSEBENCH_STREAM_FFMA=0,
# "base") against the library ("ffma": one-FFMA terms in its 16-bit kernels; fused_stream.cu, above lane_stats_t),
# built from one source, the device's own choices otherwise (L2 prefetch, Lean, routing), timed on one board:
# probes/stream_ab.cu, events, cold L2, median of 5 launches, three interleaved rounds; indices must equal the
# base build's, probabilities move in their last bits (p rel, printed; above 1e-6 is a finding). fp32 is the
# same code in both builds (a control). Measured on an H200 2026-11-27 (NOTES, "One-FFMA terms").
#   OUT=/tmp/out bash kernels/softmax_topk/probes/ffma_ab.sh      (~3 min: two builds in parallel, then runs)
# Rows of extreme logits: the test "fused_stream: rows of extreme logits next to ordinary ones" ([gpu][softmax_topk]).
set -uo pipefail
VARIANTS="base=-DFUSEBENCH_STREAM_FFMA=0;ffma=" TAG=ffma_ab exec bash "$(dirname "$0")/knob_ab.sh"
