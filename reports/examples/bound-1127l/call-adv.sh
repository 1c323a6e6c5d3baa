#!/usr/bin/env bash
# Session l, adversarial call (after a call that built build-gpu on the same warm machine): the adversarial selection's
# 16-bit K <= 32 cases at 4096 x 50257 (bf16 K = 10 on every input kind, bf16 / fp16 K = 16 / 24 / 32 on
# random logits) for fused_bound, fused_stream and fused_stream_resample, one run.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
if [ ! -x build-gpu/fusebench ]; then echo "no build-gpu: the machine was not kept"; exit 4; fi
timeout 500 build-gpu/fusebench run --suite softmax_topk_adversarial --dtype bf16,fp16 \
  --variant fused_bound,fused_stream,fused_stream_resample \
  --case "4096x50257:K10:,4096x50257:K16:,4096x50257:K24:,4096x50257:K32:" \
  --json $O/adversarial-k32.json > $O/adversarial-k32.txt 2> $O/adversarial-k32.err
echo "run rc=$? $(el) s"; tail -3 $O/adversarial-k32.err; cat $O/adversarial-k32.txt | head -80
