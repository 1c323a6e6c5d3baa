#!/usr/bin/env bash
# Session n, call 1 (either board; WANT=H100 / H200 refuses the other): A/B of FUSEBENCH_RESAMPLE_PARKED_ROUTE
# (kernels/softmax_topk/fused_stream.cu; prepared in session m, never run). The library is built as usual
# (build-gpu: the route off); beside it, fused_stream.cu alone is compiled with -DFUSEBENCH_RESAMPLE_PARKED_ROUTE=1
# by the build's own command line, swapped into a copy of the kernels archive and linked into
# build-gpu/fusebench-pr by the build's own link line: two binaries that differ in that one object. Then the
# adversarial selection's K = 256 cases (every kind, 4096 x {50257, 151936}; $CASES narrows them) for
# fused_stream_resample, fp32 and bf16, the binaries interleaved (base, pr, pr, base), a summary of
# time / base time and time / std1 time (CASES_fp32 / CASES_bf16 override CASES by dtype), and [gpu][softmax_topk] from the base build (the route off), and
# with EXTRA_TESTS the test selection it names.
source reports/examples/pr-1127n/begin.sh
# PR_DEFINES: the pr object's extra flags. Call 1 ran at 586845e, call 2 at ac94394, both with -DFUSEBENCH_RESAMPLE_PARKED_ROUTE=1
# (then the route on for every dtype; the library's default since 0695e20 is fp32 only); the default now is the
# early form of the route (prepared in session n, not measured).
PR_DEFINES=${PR_DEFINES:--DFUSEBENCH_RESAMPLE_PARKED_EARLY=1}
obj=CMakeFiles/fusebench_kernels.dir/kernels/softmax_topk/fused_stream.cu.o; pr=/tmp/pr; R=$PWD; mkdir -p $pr
rm -f $B/build.ninja
(  # the pr object, compiled beside the build (both are single nvcc processes; the device has 16 cores)
  for i in $(seq 300); do [ -f $B/build.ninja ] && break; sleep 1; done; sleep 3; cd $B
  cc=$(ninja -t commands fusebench | grep -- "-c $R/kernels/softmax_topk/fused_stream.cu" | head -1)
  [ -n "$cc" ] || { echo "no compile line for fused_stream.cu"; exit 1; }
  eval "$(echo "$cc" | sed -e "s# -x cu # $PR_DEFINES -x cu #" -e "s# -o $obj# -o $pr/fused_stream.cu.o#" -e "s# -MD -MT [^ ]* -MF [^ ]*##")"
) > /tmp/pr.log 2>&1 &
prjob=$!
build_lib
wait $prjob || { echo "pr compile failed"; cat /tmp/pr.log; exit 1; }
cd $B
cp libfusebench_kernels.a $pr/libk.a && ar r $pr/libk.a $pr/fused_stream.cu.o || exit 1
ln=$(ninja -t commands fusebench | tail -1)
eval "$(echo "$ln" | sed -e "s# libfusebench_kernels.a # $pr/libk.a #" -e "s# -o fusebench # -o fusebench-pr #")" || { echo "pr link failed"; exit 1; }
cd $R
cmp -s $B/fusebench $B/fusebench-pr && { echo "the two binaries are identical: the define did nothing"; exit 1; }
echo "pr build $(el) s"
CASES="${CASES:-4096x50257:K256:,4096x151936:K256:}"
for ty in ${DTYPES:-fp32 bf16}; do for bin in base pr pr base; do
  exe=$B/fusebench; [ $bin = pr ] && exe=$B/fusebench-pr
  cv=CASES_$ty; cases=${!cv:-$CASES}  # CASES_fp32 / CASES_bf16 name a dtype's own cases
  n=$(ls $O/ab-$ty-$bin-*.json 2>/dev/null | wc -l)
  timeout 240 $exe run --suite softmax_topk_adversarial --no-counters --dtype $ty --variant fused_stream_resample \
    --case "$cases" --json $O/ab-$ty-$bin-$n.json > /tmp/ab-$ty-$bin-$n.txt 2> /tmp/ab-$ty-$bin-$n.err
  echo "$ty $bin $n rc=$? $(el) s: $(grep -E 'passed,' /tmp/ab-$ty-$bin-$n.txt | tail -1)"
done; done
python3 reports/examples/pr-1127n/ab_summary.py $O | tee $O/ab-summary.txt
if [ "${TESTS:-1}" = 1 ]; then  # TESTS=0 (session o's calls) leaves them out: they run the base build, not the pr one
  timeout 200 $B/fusebench_tests "[gpu][softmax_topk]" > $O/tests-softmax_topk.txt 2>&1
  echo "tests rc=$? $(el) s: $(tail -3 $O/tests-softmax_topk.txt | tr '\n' ' ')"
fi
if [ -n "${EXTRA_TESTS:-}" ]; then
  left=$(( 585 - $(el) )); [ $left -gt 20 ] && timeout $left $B/fusebench_tests "$EXTRA_TESTS" > $O/tests-extra.txt 2>&1
  echo "extra tests rc=$? $(el) s: $(tail -3 $O/tests-extra.txt | tr '\n' ' ')"
fi
cat /tmp/ab-*.txt /tmp/ab-*.err > $O/ab-runs.txt 2>/dev/null
tar czf $O/ab-json.tgz -C $O $(cd $O && ls ab-*.json) && rm -f $O/ab-*.json; gzip -f $O/ab-runs.txt
