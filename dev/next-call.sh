#!/bin/bash
# fused_radix experiments for issue 22 (branch topk5): one device call on one H100, about 4 minutes.
# Run from the main checkout's root with the worktree carried:
#   run kind=nvidia-h100-x1, carry=["scratch/wt-topk5"], command:
#   cd scratch/wt-topk5 && rm -f .git && export FUSEBENCH_BUILD_DIR=$PWD/build-gpu && bash dev/next-call.sh
# History: its first form ran once at b76d913 (base = 7e6ea99's kernel, new = the L2 prefetch now in
# dev/prefetch; kernels/softmax_topk/NOTES.md "v6 step 4"). This form is NOT RUN yet.
# base = the tree's kernels/softmax_topk/fused_radix.cu (the library kernel); alternates, each a
# fused_radix.cu that the probe and fusebench are rebuilt with:
#   prefetch: dev/prefetch/kernels/softmax_topk/fused_radix.cu (v6 step 4's L2 prefetch, measured);
#   occ5:     the tree's kernel with radix_blocks_per_sm = 5 (48 registers: 5 blocks per SM instead
#             of 4; local ptxas: fp32 152 / 216 bytes of spill stores / loads, bf16 166 / 328);
# NC_NEW (default occ5) names the alternate the suite A/B times against base.
#  1. builds the tree (fusebench, fusebench_tests) while the timeline probe is compiled for base and
#     each alternate; runs them on the same inputs: timelines and bit identity against base
#     (FUSEBENCH_RADIX_DUMP + cmp) on random, tie-heavy, all-equal, fp16, K = 1024, V = 151936 rows;
#  2. `fusebench_tests '[gpu][softmax_topk]'` of the tree, while fusebench is rebuilt with NC_NEW;
#  3. spill instructions by source line of both library objects (cuobjdump / nvdisasm);
#  4. suite A/B, base then new per run, one seed, fused_radix only, cold L2, CUPTI medians,
#     --time-budget 0.1 --no-counters: softmax_topk 4096x50257 K = 10 / 256 fp32 / bf16, then
#     softmax_topk_adversarial 4096x50257 K = 10 / 256 fp32; while time is left: both with counters
#     (DRAM bytes against the model), memcheck of the fused_radix tests, the bf16 adversarial A/B.
# Files back under $OUT: summary.txt (A/B table from dev/ab_compare.py), tl.txt, tests.txt, sass.txt,
# all.tgz (reports, logs).
set -u
: "${OUT:?OUT must name the output folder}"
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( ${NC_BUDGET:-240} - ($(date +%s) - T0) )); }
cd "$(dirname "$0")/.."
export FUSEBENCH_BUILD_DIR=${FUSEBENCH_BUILD_DIR:-$PWD/build-gpu}
B=$FUSEBENCH_BUILD_DIR
NEW=${NC_NEW:-occ5}
ALTS="prefetch occ5"
W=/tmp/nc; rm -rf $W; mkdir -p $W/dump
for v in $ALTS; do mkdir -p $W/src_$v/kernels/softmax_topk; done
cp kernels/softmax_topk/fused_radix.cu $W/fused_radix_base.cu
cp dev/prefetch/kernels/softmax_topk/fused_radix.cu $W/src_prefetch/kernels/softmax_topk/fused_radix.cu
sed 's/^constexpr int radix_blocks_per_sm = 4; /constexpr int radix_blocks_per_sm = 5; /' kernels/softmax_topk/fused_radix.cu \
  > $W/src_occ5/kernels/softmax_topk/fused_radix.cu
grep -q "radix_blocks_per_sm = 5;" $W/src_occ5/kernels/softmax_topk/fused_radix.cu || { echo "occ5: sed found no radix_blocks_per_sm = 4"; exit 1; }
[ -f .fusebench-commit ] && cp .fusebench-commit $W/stamp_base
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $OUT/summary.txt
echo "suite A/B: base = the tree, new = $NEW" | tee -a $OUT/summary.txt

# 1. Build (background) and the probes.
(FUSEBENCH_TARGETS="fusebench fusebench_tests" timeout 200 scripts/build.sh > $W/build.log 2>&1; echo $? > $W/build.rc) &
BP=$!
CUDA_BIN=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
NV="$CUDA_BIN/nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90"
declare -A PP
for v in base $ALTS; do
  inc=-I$W/src_$v; [ $v = base ] && inc=""
  $NV $inc -I. kernels/softmax_topk/probes/radix_timeline.cu -o $W/tl_$v > $W/probe_$v.log 2>&1 &
  PP[$v]=$!
done
OK=""
for v in base $ALTS; do
  wait ${PP[$v]}; r=$?
  el "probe $v built rc=$r" | tee -a $OUT/summary.txt
  [ $r -eq 0 ] && OK="$OK $v"
done
if [[ " $OK " == *" base "* ]]; then
  export FUSEBENCH_RADIX_VERIFY_ROWS=64
  {
    for cfg in "f32 4096 50257 10 10" "f32 4096 50257 256 10" "bf16 4096 50257 10 10" "bf16 4096 50257 256 10" \
               "bf16 4096 50257 256 1" "f32 4096 50257 256 0" "bf16 4096 50257 10 0" "f16 4096 50257 256 1" \
               "f32 4096 50257 1024 10" "f32 4096 151936 10 10"; do
      tag=$(echo "$cfg" | tr ' ' _)
      if [ "$(left)" -lt 150 ]; then echo "SKIPPED $cfg: $(left) s left"; continue; fi
      for v in $OK; do
        echo "== $v $cfg"
        FUSEBENCH_RADIX_DUMP=$W/dump/${v}_$tag.bin timeout 30 $W/tl_$v $cfg
        echo "rc=$?"
      done
      for v in $OK; do
        [ $v = base ] && continue
        if cmp -s $W/dump/base_$tag.bin $W/dump/${v}_$tag.bin; then echo "IDENTICAL base/$v $cfg"; else echo "DIFFER base/$v $cfg  <-- outputs differ (or a dump is missing)"; fi
      done
      rm -f $W/dump/*_$tag.bin
    done
  } > $OUT/tl.txt 2>&1
  el "probes run" | tee -a $OUT/summary.txt
  grep -E "^(IDENTICAL|DIFFER|SKIPPED)|WRONG" $OUT/tl.txt | tee -a $OUT/summary.txt
  grep -E "^==|event median|stream\+reduce|L2 re-read|after the stream|no block streaming" $OUT/tl.txt >> $OUT/summary.txt
else
  tail -20 $W/probe_*.log | tee -a $OUT/summary.txt
fi

wait $BP; rc=$(cat $W/build.rc)
el "build rc=$rc" | tee -a $OUT/summary.txt
if [ "$rc" != 0 ]; then
  grep -B2 -A8 -iE "error" $W/build.log | head -60 | tee -a $OUT/summary.txt
  (cd $W && tar czf $OUT/all.tgz *.log 2>/dev/null)
  exit 1
fi
cp $B/fusebench $W/fb_base
OBJ=$B/CMakeFiles/fusebench_kernels.dir/kernels/softmax_topk/fused_radix.cu.o
cp $OBJ $W/radix_base.o

# 2. GPU tests of the tree while fusebench is rebuilt with the alternate (labelled dirty).
(timeout 150 $B/fusebench_tests '[gpu][softmax_topk]' > $OUT/tests.txt 2>&1; echo $? > $W/tests.rc) &
TP=$!
cp $W/src_$NEW/kernels/softmax_topk/fused_radix.cu kernels/softmax_topk/fused_radix.cu
[ -f .fusebench-commit ] && sed -i "2s/.*/true/" .fusebench-commit
(timeout 120 cmake --build $B --target fusebench > $W/build_new.log 2>&1); nrc=$?
el "$NEW build rc=$nrc" | tee -a $OUT/summary.txt
cp $B/fusebench $W/fb_new; cp $OBJ $W/radix_new.o
cp $W/fused_radix_base.cu kernels/softmax_topk/fused_radix.cu
[ -f $W/stamp_base ] && cp $W/stamp_base .fusebench-commit

# 3. Spill instructions by source line.
{
  for v in base new; do
    echo "== $v: STL / LDL per kernel and source line"
    [ -x $CUDA_BIN/nvdisasm ] || { echo "no nvdisasm in $CUDA_BIN"; break; }
    mkdir -p $W/sass_$v && (cd $W/sass_$v && $CUDA_BIN/cuobjdump -xelf all $W/radix_$v.o > /dev/null 2>&1)
    for c in $W/sass_$v/*.cubin; do
      $CUDA_BIN/nvdisasm -g -c "$c" 2>/dev/null | awk '
        /\.text\.[A-Za-z0-9_]+/ { fn = ($0 ~ /bfloat16/) ? "bf16" : ($0 ~ /6__half/) ? "f16" : "f32" }
        /\/\/## File/ { if (match($0, /File "[^"]*"/)) { fl = substr($0, RSTART + 6, RLENGTH - 7); sub(/.*\//, "", fl) }
                        if (match($0, /line [0-9]+/)) ln = substr($0, RSTART + 5, RLENGTH - 5) }
        /[ \t](STL|LDL)(\.[A-Z0-9]+)*[ \t]/ { op = ($0 ~ /STL/) ? "STL" : "LDL"; n[fn " " fl ":" ln " " op]++ }
        END { for (k in n) print n[k], k }' | sort -k2,2 -k3,3V
    done
  done
} > $OUT/sass.txt 2>&1
el "sass" | tee -a $OUT/summary.txt

wait $TP; trc=$(cat $W/tests.rc)
el "tests rc=$trc" | tee -a $OUT/summary.txt
tail -3 $OUT/tests.txt | tee -a $OUT/summary.txt
[ "$trc" != 0 ] && grep -B5 -A25 "FAILED" $OUT/tests.txt | head -60 | tee -a $OUT/summary.txt
if [ "$nrc" != 0 ]; then
  tail -30 $W/build_new.log | tee -a $OUT/summary.txt
  (cd $W && tar czf $OUT/all.tgz *.log 2>/dev/null)
  exit 1
fi

# 4. Suite A/B, base then new per run, same seed.
AB="--variant fused_radix --time-budget 0.1 --seed 20261126"
ab() {  # name, timeout per side, extra flag ("-" for none), fusebench arguments
  local name=$1 lim=$2 extra=$3; shift 3
  [ "$extra" = - ] && extra=""
  for v in base new; do
    if [ "$(left)" -lt $(( lim + 5 )) ]; then el "skip $name $v: $(left) s left" | tee -a $OUT/summary.txt; continue; fi
    timeout -s INT $lim $W/fb_$v run "$@" $AB $extra --json $W/${name}_$v.json > $W/${name}_$v.txt 2> $W/${name}_$v.err
    el "$name $v rc=$?" | tee -a $OUT/summary.txt
  done
}
ab rnd 30 --no-counters --suite softmax_topk --case 4096x50257:K10:,4096x50257:K256: --dtype fp32,bf16
ab adv32 50 --no-counters --suite softmax_topk_adversarial --case 4096x50257:K10:,4096x50257:K256: --dtype fp32
ab cnt 20 - --suite softmax_topk --case 4096x50257:K10:,4096x50257:K256: --dtype fp32,bf16
CS=$(command -v compute-sanitizer || echo $CUDA_BIN/compute-sanitizer)
if [ "$(left)" -gt 40 ] && [ -x "$CS" ]; then
  timeout $(( $(left) - 10 )) $CS --tool memcheck --error-exitcode 9 $B/fusebench_tests 'fused_radix*' > $W/memcheck.txt 2>&1
  el "memcheck of 'fused_radix*' tests rc=$?" | tee -a $OUT/summary.txt
  tail -4 $W/memcheck.txt >> $OUT/summary.txt
else
  el "memcheck skipped: $(left) s left" | tee -a $OUT/summary.txt
fi
ab adv16 50 --no-counters --suite softmax_topk_adversarial --case 4096x50257:K10:,4096x50257:K256: --dtype bf16
python3 dev/ab_compare.py $W/rnd_base.json $W/rnd_new.json $W/adv32_base.json $W/adv32_new.json \
  $W/adv16_base.json $W/adv16_new.json >> $OUT/summary.txt 2>&1
python3 - $W/cnt_base.json $W/cnt_new.json >> $OUT/summary.txt 2>&1 <<'PY'
import json, sys
for side, path in zip(("base", "new"), sys.argv[1:]):
    try:
        rep = json.load(open(path))
    except Exception as e:
        print("counters", side, "no report:", e); continue
    for r in rep.get("results", []):
        m = ((r.get("counters") or {}).get("metrics") or {})
        rd = (m.get("dram__bytes_read.sum") or {}).get("value")
        print("counters %-4s %-24s %-5s dram read %s MB" % (side, r.get("case"), r.get("dtype"), "%.1f" % (rd / 1e6) if rd else "-"))
PY
tail -n 2 $W/*.err >> $OUT/summary.txt 2>&1
(cd $W && tar czf $OUT/all.tgz *.json *.txt *.err *.log 2>/dev/null)
el "done" | tee -a $OUT/summary.txt
grep -E "IDENTICAL|DIFFER|WRONG|rc=|passed|failed|NOT PASS|new/base over|ERROR SUMMARY|^counters" $OUT/summary.txt | tail -50
sed -n '/^suite /,$p' $OUT/summary.txt | head -75
