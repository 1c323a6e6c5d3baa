#!/usr/bin/env bash
# Session s, PREPARED, NOT RUN (either board, ~3-4 min): FUSEBENCH_HIST_PLAIN (select.cuh's hist_add by one shared
# atomic per active lane, no ballot / match) against the library, fused_stream's K <= 32 kernel being the one that
# calls it on the hot path; probes/knob_ab.sh (stream_ab.cu builds, cold L2, events, median of 5, three interleaved
# rounds, indices compared with the first variant's). The fp32 K = 10 rows are where fused_stream is the default
# run's variant (H200 88.9% of the floor at 6b3d093); 16-bit K <= 32 goes to fused_bound there.
set -uo pipefail
VARIANTS="base=;plain=-DFUSEBENCH_HIST_PLAIN=1" TAG=histplain \
  CASES="f32:50257:10:10 f32:50257:32:10 f32:151936:10:10 f32:50257:10:1 f32:50257:10:-1 bf16:50257:10:10 f16:50257:10:10 bf16:50257:32:10 bf16:151936:10:10 f32:50257:256:10" \
  bash kernels/softmax_topk/probes/knob_ab.sh
