#!/usr/bin/env bash
# Session l, call 6 (H100): call 3's A/B of fused_stream's lane sum on an H100, on the cases below.
CASES="bf16:50257:10:10 f16:50257:256:10 bf16:50257:256:10 bf16:151936:256:10 f32:50257:256:10 bf16:50257:64:10" \
  exec bash "$(dirname "$0")/call3.sh"
