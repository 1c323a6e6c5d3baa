#!/bin/bash
# v6 step 4 (issue 22, branch topk5): the device call for fused_radix's L2 prefetch of later rows.
# One call on one H100, about 4 minutes. Run from the main checkout's root with the worktree carried:
#   run kind=nvidia-h100-x1, carry=["scratch/wt-topk5"], command:
#   cd scratch/wt-topk5 && rm -f .git && export FUSEBENCH_BUILD_DIR=$PWD/build-gpu && bash dev/next-call.sh
# base = fused_radix.cu at 7e6ea99 (dev/fused_radix_base.cu); new = this tree.
#  1. builds this tree (fusebench, fusebench_tests) while the timeline probe is compiled for base and
#     new; then runs them on the same inputs: timelines and a bit-identity check (FUSEBENCH_RADIX_DUMP:
#     indices and probabilities of every row, compared with cmp) on random, tie-heavy (bf16 std 1),
#     all-equal (std 0), fp16, K = 1024 and V = 151936 rows; then a sweep of the prefetch (distance,
#     moment, bytes: FUSEBENCH_RADIX_PF) at fp32 / bf16 K = 10 / 256;
#  2. `fusebench_tests '[gpu][softmax_topk]'` of the new build, while fusebench is rebuilt with the
#     base kernel (labelled 7e6ea99, dirty);
#  3. spill instructions by source line (cuobjdump / nvdisasm) of both library objects;
#  4. suite A/B, base then new per run, one seed: softmax_topk 4096x50257 K = 10 / 256 fp32 / bf16,
#     softmax_topk_adversarial 4096x50257 K = 10 / 256 fp32 (every input kind); fused_radix only,
#     cold L2, CUPTI medians, --time-budget 0.1 --no-counters; then, while time is left: the new
#     kernel with counters (DRAM bytes: does the prefetch thrash L2?), memcheck of the fused_radix
#     tests, and the bf16 adversarial A/B.
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
BASE_COMMIT=7e6ea991ef76af5d98d674666be07454ee3d6fc4
W=/tmp/nc; rm -rf $W; mkdir -p $W/dump $W/src_base/kernels/softmax_topk
cp dev/fused_radix_base.cu $W/src_base/kernels/softmax_topk/fused_radix.cu
cp kernels/softmax_topk/fused_radix.cu $W/fused_radix_new.cu
[ -f .fusebench-commit ] && cp .fusebench-commit $W/stamp_new
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $OUT/summary.txt

# 1. Build (background) and the two probes.
(FUSEBENCH_TARGETS="fusebench fusebench_tests" timeout 200 scripts/build.sh > $W/build.log 2>&1; echo $? > $W/build.rc) &
BP=$!
CUDA_BIN=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
NV="$CUDA_BIN/nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90"
$NV -I$W/src_base -I. kernels/softmax_topk/probes/radix_timeline.cu -o $W/tl_base > $W/probe_base.log 2>&1 &
P1=$!
$NV -I. kernels/softmax_topk/probes/radix_timeline.cu -o $W/tl_new > $W/probe_new.log 2>&1 &
P2=$!
wait $P1; r1=$?; wait $P2; r2=$?
el "probes built rc=$r1 $r2" | tee -a $OUT/summary.txt
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ]; then
  export FUSEBENCH_RADIX_VERIFY_ROWS=64
  {
    for cfg in "f32 4096 50257 10 10" "f32 4096 50257 256 10" "bf16 4096 50257 10 10" "bf16 4096 50257 256 10" \
               "bf16 4096 50257 256 1" "f32 4096 50257 256 0" "bf16 4096 50257 10 0" "f16 4096 50257 256 1" \
               "f32 4096 50257 1024 10" "f32 4096 151936 10 10"; do
      tag=$(echo "$cfg" | tr ' ' _)
      if [ "$(left)" -lt 150 ]; then echo "SKIPPED $cfg: $(left) s left"; continue; fi
      for v in base new; do
        echo "== $v $cfg"
        FUSEBENCH_RADIX_DUMP=$W/dump/${v}_$tag.bin timeout 30 $W/tl_$v $cfg
        echo "rc=$?"
      done
      if cmp -s $W/dump/base_$tag.bin $W/dump/new_$tag.bin; then echo "IDENTICAL base/new $cfg"; else echo "DIFFER base/new $cfg  <-- outputs differ (or a dump is missing)"; fi
      rm -f $W/dump/*_$tag.bin
    done
    # The prefetch sweep: pct of the resident clusters rows ahead, at (0 read's end, 1 block start), KB.
    for cfg in "f32 4096 50257 10 10" "bf16 4096 50257 256 10" "f32 4096 50257 256 10" "bf16 4096 50257 10 10"; do
      for pf in 0,0,0 100,1,96 100,0,32 200,0,96 50,0,96; do
        if [ "$(left)" -lt 140 ]; then echo "SKIPPED sweep $cfg $pf: $(left) s left"; continue; fi
        echo "== sweep pf=$pf $cfg"
        FUSEBENCH_RADIX_PF=$pf timeout 30 $W/tl_new $cfg
        echo "rc=$?"
      done
    done
  } > $OUT/tl.txt 2>&1
  el "probes run" | tee -a $OUT/summary.txt
  grep -E "^(IDENTICAL|DIFFER|SKIPPED)|WRONG" $OUT/tl.txt | tee -a $OUT/summary.txt
  grep -E "^==|^prefetch:|event median|stream\+reduce|L2 re-read|after the stream|no block streaming" $OUT/tl.txt >> $OUT/summary.txt
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
grep -iE "warning" $W/build.log | grep -E "softmax_topk" | head -20 > $W/new_warnings.txt
echo "warnings in softmax_topk files (new build): $(wc -l < $W/new_warnings.txt)" | tee -a $OUT/summary.txt
cp $B/fusebench $W/fb_new
OBJ=$B/CMakeFiles/fusebench_kernels.dir/kernels/softmax_topk/fused_radix.cu.o
cp $OBJ $W/radix_new.o

# 2. GPU tests of the new build while fusebench is rebuilt with the base kernel.
(timeout 150 $B/fusebench_tests '[gpu][softmax_topk]' > $OUT/tests.txt 2>&1; echo $? > $W/tests.rc) &
TP=$!
cp $W/src_base/kernels/softmax_topk/fused_radix.cu kernels/softmax_topk/fused_radix.cu
[ -f .fusebench-commit ] && sed -i "1s/.*/$BASE_COMMIT/;2s/.*/true/" .fusebench-commit
(timeout 120 cmake --build $B --target fusebench > $W/build_base.log 2>&1); brc=$?
el "base build rc=$brc" | tee -a $OUT/summary.txt
cp $B/fusebench $W/fb_base; cp $OBJ $W/radix_base.o
cp $W/fused_radix_new.cu kernels/softmax_topk/fused_radix.cu
[ -f $W/stamp_new ] && cp $W/stamp_new .fusebench-commit

# 3. Spill instructions by source line (the CPU is free while the tests run on the GPU).
{
  for v in base new; do
    echo "== $v: STL / LDL per kernel and source line (line numbers of the fused_radix.cu it was built from)"
    [ -x $CUDA_BIN/nvdisasm ] || { echo "no nvdisasm in $CUDA_BIN"; break; }
    mkdir -p $W/sass_$v && (cd $W/sass_$v && $CUDA_BIN/cuobjdump -xelf all $W/radix_$v.o > /dev/null 2>&1)
    for c in $W/sass_$v/*.cubin; do
      $CUDA_BIN/nvdisasm -g -c "$c" 2>/dev/null | awk '
        /\.text\.[A-Za-z0-9_]+/ { fn = ($0 ~ /bfloat16/) ? "bf16" : ($0 ~ /6__half/) ? "f16" : "f32" }
        /\/\/## File/ { if (match($0, /File "[^"]*"/)) { fl = substr($0, RSTART + 6, RLENGTH - 7); sub(/.*\//, "", fl) }
                        if (match($0, /line [0-9]+/)) ln = substr($0, RSTART + 5, RLENGTH - 5) }
        /[ \t](STL|LDL)(\.[A-Z0-9]+)*[ \t]/ { op = ($0 ~ /STL/) ? "STL" : "LDL"; n[fn " " fl ":" ln " " op]++ }
        /UBLKPF|CCTL/ { pf[fn " " $0]++ }
        END { for (k in n) print n[k], k; for (k in pf) print "prefetch instr:", k }' | sort -k2,2 -k3,3V
    done
  done
} > $OUT/sass.txt 2>&1
el "sass" | tee -a $OUT/summary.txt

wait $TP; trc=$(cat $W/tests.rc)
el "tests rc=$trc" | tee -a $OUT/summary.txt
tail -3 $OUT/tests.txt | tee -a $OUT/summary.txt
[ "$trc" != 0 ] && grep -B5 -A25 "FAILED" $OUT/tests.txt | head -60 | tee -a $OUT/summary.txt
if [ "$brc" != 0 ]; then
  tail -30 $W/build_base.log | tee -a $OUT/summary.txt
  (cd $W && tar czf $OUT/all.tgz *.log 2>/dev/null)
  exit 1
fi

# 4. Suite A/B, base then new per run, same seed.
AB="--variant fused_radix --time-budget 0.1 --seed 20261126"
ab() {  # name, timeout per side, fusebench arguments
  local name=$1 lim=$2; shift 2
  for v in base new; do
    if [ "$(left)" -lt $(( lim + 5 )) ]; then el "skip $name $v: $(left) s left" | tee -a $OUT/summary.txt; continue; fi
    timeout -s INT $lim $W/fb_$v run "$@" $AB --no-counters --json $W/${name}_$v.json > $W/${name}_$v.txt 2> $W/${name}_$v.err
    el "$name $v rc=$?" | tee -a $OUT/summary.txt
  done
}
ab rnd 30 --suite softmax_topk --case 4096x50257:K10:,4096x50257:K256: --dtype fp32,bf16
ab adv32 50 --suite softmax_topk_adversarial --case 4096x50257:K10:,4096x50257:K256: --dtype fp32
# The new kernel with counters (measured DRAM bytes against the model): prefetched lines evicted
# before their row reads them would show as extra DRAM bytes.
if [ "$(left)" -gt 45 ]; then
  timeout -s INT 35 $W/fb_new run --suite softmax_topk --case 4096x50257:K10:,4096x50257:K256: --dtype fp32,bf16 $AB \
    --json $W/cnt_new.json > $W/cnt_new.txt 2> $W/cnt_new.err
  el "counters new rc=$?" | tee -a $OUT/summary.txt
  grep -iE "dram|bytes" $W/cnt_new.txt | head -12 >> $OUT/summary.txt
fi
CS=$(command -v compute-sanitizer || echo $CUDA_BIN/compute-sanitizer)
if [ "$(left)" -gt 40 ] && [ -x "$CS" ]; then
  timeout $(( $(left) - 10 )) $CS --tool memcheck --error-exitcode 9 $B/fusebench_tests 'fused_radix*' > $W/memcheck.txt 2>&1
  el "memcheck of 'fused_radix*' tests rc=$?" | tee -a $OUT/summary.txt
  tail -4 $W/memcheck.txt >> $OUT/summary.txt
else
  el "memcheck skipped: $(left) s left" | tee -a $OUT/summary.txt
fi
ab adv16 50 --suite softmax_topk_adversarial --case 4096x50257:K10:,4096x50257:K256: --dtype bf16
python3 dev/ab_compare.py $W/rnd_base.json $W/rnd_new.json $W/adv32_base.json $W/adv32_new.json \
  $W/adv16_base.json $W/adv16_new.json >> $OUT/summary.txt 2>&1
tail -n 2 $W/*.err >> $OUT/summary.txt 2>&1
(cd $W && tar czf $OUT/all.tgz *.json *.txt *.err *.log 2>/dev/null)
el "done" | tee -a $OUT/summary.txt
grep -E "IDENTICAL|DIFFER|WRONG|rc=|warnings|passed|failed|NOT PASS|new/base over|ERROR SUMMARY" $OUT/summary.txt | tail -40
sed -n '/^suite /,$p' $OUT/summary.txt | head -75
