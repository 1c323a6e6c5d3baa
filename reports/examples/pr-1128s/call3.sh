#!/usr/bin/env bash
# Session s, call 3 (either board): the library at this commit, then every [gpu] test case outside
# [softmax_topk] (those ran in call 2 on the same commit's build) except the 100-seed test, then the 100-seed test
# in the time left (it prints a line every 10 seeds; a cut run says how many seeds it finished).
source reports/examples/pr-1127n/begin.sh
build_lib
timeout $(( ${CUTOFF:-560} - $(el) )) $B/fusebench_tests "[gpu]~[softmax_topk]~[seeds]" > $O/tests-rest.txt 2>&1
echo "rest rc=$? $(el) s: $(tail -n 3 $O/tests-rest.txt | tr '\n' ' ')"
left=$(( ${CUTOFF:-560} - $(el) ))
[ $left -gt 20 ] && timeout $left $B/fusebench_tests "[seeds]" > $O/tests-seeds.txt 2>&1
echo "seeds rc=$? $(el) s: $(grep -E '^seeds:|seeds:' $O/tests-seeds.txt | tail -2 | tr '\n' ' ') $(tail -n 3 $O/tests-seeds.txt | tr '\n' ' ')"
grep -E "FAILED" -A6 $O/tests-*.txt | head -40
gzip -f $O/tests-rest.txt
