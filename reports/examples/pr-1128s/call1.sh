#!/usr/bin/env bash
# Session r, PREPARED, NOT RUN (either board, ~450-500 s): call6.sh (ncu of the list kernel by phase) and call7.sh
# (the KEEP / SPREAD / PLAIN_HIST A/B) in one device call: one machine start instead of two. Comes back: gpu.txt,
# phases.txt (call 6's summary), probe.txt (call 7's runs), rest.tgz (both calls' other outputs and logs).
set -uo pipefail
O=$OUT
mkdir -p $O/c6 $O/c7
OUT=$O/c6 timeout 230 bash reports/examples/pr-1128r/call6.sh > $O/c6.log 2>&1; echo "call6 rc=$?"
OUT=$O/c7 timeout 340 bash reports/examples/pr-1128r/call7.sh > $O/c7.log 2>&1; echo "call7 rc=$?"
cp $O/c6/gpu.txt $O/gpu.txt 2>/dev/null || cp $O/c7/gpu.txt $O/gpu.txt
cp $O/c6/phases.txt $O/phases.txt 2>/dev/null; cp $O/c7/probe.txt $O/probe.txt 2>/dev/null
cat $O/gpu.txt
grep -E '^===|samples %|^(stream|compactions|max\+sum|end compaction|read K|kth|emit|sort\+write|row setup)' $O/phases.txt
grep -vE '^with stamps' $O/probe.txt | sed -E 's/\([0-9]+ rows checked, 0 index mismatches in 0 rows, first -1; p rel max [0-9.e-]+\)/ok/' | cut -c1-160
(cd $O && tar czf rest.tgz c6 c7 c6.log c7.log && rm -rf c6 c7 c6.log c7.log)
ls -la $O
