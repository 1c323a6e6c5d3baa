#!/usr/bin/env bash
# Session s, PREPARED, NOT RUN (either board, ~3 min): FUSEBENCH_BOUND_LIST_APPROX (the list kernel's compactions in
# the stream without their second histogram pass when the first pass's head holds at most K + S entries) at S = 128
# and 256 against the library, with probes/list_ab.sh (every run checked against a double top K; the timeline builds
# show the compactions' us a row). Off in the library: textcmp identical; on, ptxas reports the library's spills
# (16 bytes stored, 32 loaded) at S = 256. Emulated (probes/approx_compaction_emulation.py): fp16 random rows 4 -> 2
# histogram passes a row, ascending rows 16 -> 8 (fp16) and 10 -> 8 (bf16), bf16 random unchanged.
set -uo pipefail
VARIANTS="lib=;a128=-DFUSEBENCH_BOUND_LIST_APPROX=128;a256=-DFUSEBENCH_BOUND_LIST_APPROX=256" \
  OUT=${OUT:-/tmp/out} bash kernels/softmax_topk/probes/list_ab.sh
