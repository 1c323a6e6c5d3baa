#!/usr/bin/env bash
# Session q, call 4 (either board): the list kernel with its selection rewritten (no __match_any_sync; distance
# windows; the end's histogram only over keys above the K-th vector key). Probe binaries built on the workstation,
# carried gzipped in scratch/: v2 = the library's fused_bound.cu at this commit, tl2 = the same with
# FUSEBENCH_BOUND_LIST_TL (phase timeline). Every kind at bf16 4096 x 50257 K = 256, other K / V / fp16 on random
# rows, each checked row by row against a double top K and timed (cold L2, events, median of 5).
set -uo pipefail
O=$OUT
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=scratch; gunzip -f $P/*.gz; chmod +x $P/*
{
for k in random ascending descending all_equal ties cluster256 masked nan posinf all_masked misaligned huge plateau; do
  timeout 60 $P/bound_check_v2 lib bf16 4096 50257 256 $k
done
for K in 32 33 64 128 200; do timeout 60 $P/bound_check_v2 lib bf16 4096 50257 $K random; done
for k in random ascending ties; do timeout 60 $P/bound_check_v2 lib f16 4096 50257 256 $k; done
for V in 32000 65536; do timeout 60 $P/bound_check_v2 lib bf16 4096 $V 256 random; done
timeout 60 $P/bound_check_v2 lib bf16 4096 50257 256 random
for k in random descending ascending all_equal ties; do timeout 60 $P/bound_check_tl2 lib bf16 4096 50257 256 $k; done
timeout 60 $P/bound_check_tl2 lib bf16 4096 50257 64 random
} > $O/probe.txt 2>&1
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\(586 rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-300
