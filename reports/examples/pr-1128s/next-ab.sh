#!/usr/bin/env bash
# Session s, PREPARED, NOT RUN (either board, ~8-9 min, one device call): next-approx.sh (the list kernel's APPROX
# knob, list_ab.sh) then next-histplain.sh (fused_stream's HIST_PLAIN knob, knob_ab.sh), each under its own time
# limit. Comes back: gpu.txt, approx-summary.txt, histplain-summary.txt, rest.tgz (both runs' outputs and builds).
set -uo pipefail
O=$OUT; mkdir -p $O/approx $O/histplain
OUT=$O/approx timeout 240 bash reports/examples/pr-1128s/next-approx.sh > $O/approx.log 2>&1; echo "approx rc=$?"
OUT=$O/histplain timeout 300 bash reports/examples/pr-1128s/next-histplain.sh > $O/histplain.log 2>&1; echo "histplain rc=$?"
cp $O/approx/gpu.txt $O/gpu.txt 2>/dev/null || cp $O/histplain/gpu.txt $O/gpu.txt 2>/dev/null
cp $O/approx/summary.txt $O/approx-summary.txt 2>/dev/null; tail -n 40 $O/histplain.log > $O/histplain-summary.txt
cat $O/gpu.txt $O/approx-summary.txt $O/histplain-summary.txt 2>/dev/null
(cd $O && tar czf rest.tgz approx histplain approx.log histplain.log && rm -rf approx histplain approx.log histplain.log)
ls -la $O
