#!/usr/bin/env bash
# Session q, call 2 (either board): why the list kernel's stream is slow. Probe binaries built on the workstation
# (scratch/, -DBOUND_ONLY): u3 = the library's at call 1 (list of 1024 entries a warp: 160 KB of shared memory a
# block), c512 / c384 (512 / 384 entries: 96 / 80 KB; the end reads its vectors again from global memory), tl1024 /
# tl512 (the phase timeline, FUSEBENCH_BOUND_LIST_TL). The K <= 32 register kernel at K = 32 as the stream's reference.
set -uo pipefail
O=$OUT
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
P=scratch; gunzip -f $P/*.gz; chmod +x $P/*
{
for b in u3 c512 c384 u3 c512 c384; do
  for k in random descending; do timeout 60 $P/bound_check_$b lib bf16 4096 50257 256 $k; done
  timeout 60 $P/bound_check_$b lib bf16 4096 50257 64 random
done
timeout 60 $P/bound_check_u3 lib bf16 4096 50257 32 random
timeout 60 $P/bound_check_u3 lib bf16 4096 50257 32 descending
for b in tl1024 tl512; do
  for k in random descending ascending; do timeout 60 $P/bound_check_$b lib bf16 4096 50257 256 $k; done
  timeout 60 $P/bound_check_$b lib bf16 4096 50257 64 random
done
} > $O/probe.txt 2>&1
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\(586 rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-300
