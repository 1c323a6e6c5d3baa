#!/usr/bin/env bash
# Whatever board comes: an H200 takes its baseline (callB.sh), an H100 runs callC.sh.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  WANT=H200 bash reports/examples/whole-sm-1127f/callB.sh
else
  bash scratch/callC.sh
fi
