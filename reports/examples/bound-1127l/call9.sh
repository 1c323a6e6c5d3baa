#!/usr/bin/env bash
# Session l, call 9 (either board; not run: the session's device time ended): call 8's script with the sample
# taken at the first network-merged step from step 16 on (FUSEBENCH_BOUND_SAMPLE_AFTER=16): bcb_s0 (the library),
# bcb_s4a16 / bcb_s2a16 (4 / 2 vectors a lane sampled from the rest of the row; built as in call 8 with
# -DFUSEBENCH_BOUND_SAMPLE=4 / 2 -DFUSEBENCH_BOUND_SAMPLE_AFTER=16).
SAMPLED="bcb_s4a16 bcb_s2a16" KS="10 32" exec bash "$(dirname "$0")/call8.sh"
