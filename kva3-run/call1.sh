#!/usr/bin/env bash
# kva3 call 1: same-board suite A/B of the switches of NOTES.md runs 11-12 on kv_a (M 4096 / 8192,
# N 576, K 7168): base (the library's defaults), scales (N144_SCALES), er (EARLY_FILLS +
# STORE_WAIT_READ), all (the three). Base: scripts/build.sh in build-gpu; the others relinked from
# it with gemm_wgmma.cu recompiled with their defines (relink.py), each in its own folder.
set -uo pipefail
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu FUSEBENCH_TARGETS="fusebench fusebench_tests"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
head -2 .fusebench-commit
scripts/build.sh > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "base build $(el) s"
B=$FUSEBENCH_BUILD_DIR
D=-DFUSEBENCH_FP8_WGMMA_
python3 kva3-run/relink.py $B var-scales ${D}N144_SCALES=1 > $OUT/var-scales.log 2>&1 &
python3 kva3-run/relink.py $B var-er ${D}EARLY_FILLS=1 ${D}STORE_WAIT_READ=1 > $OUT/var-er.log 2>&1 &
python3 kva3-run/relink.py $B var-all ${D}N144_SCALES=1 ${D}EARLY_FILLS=1 ${D}STORE_WAIT_READ=1 > $OUT/var-all.log 2>&1 &
wait
for v in scales er all; do tail -1 $OUT/var-$v.log; done
echo "base: gemm_wgmma.cu.o md5 $(md5sum < $B/CMakeFiles/fusebench_kernels.dir/kernels/fp8/gemm_wgmma.cu.o | cut -c1-32)"
md5sum $B/fusebench var-*/fusebench | tee $OUT/md5.txt
# the 144-wide overlapped non-cluster kernel's resources in each build (smem grows with the staged scales)
for o in $B/CMakeFiles/fusebench_kernels.dir/kernels/fp8/gemm_wgmma.cu.o var-*/gemm_wgmma.cu.o; do
  echo "$o: $(cuobjdump -res-usage $o 2>/dev/null | grep -A1 'Li144ELi4ELi1ELb1ELb0ELi0ELi1ELb0E' | grep -o 'REG:[0-9]* STACK:[0-9]* SHARED:[0-9]*' | head -1)"
done | tee $OUT/res.txt
echo "variants built $(el) s"
bin() { [ $1 = base ] && echo $B/fusebench || echo var-$1/fusebench; }
for r in 1 2; do
  [ $r = 1 ] && order="base scales er all" || order="all er scales base"
  for v in $order; do
    timeout 120 $(bin $v) run --suite fp8_gemm --full --case kv_a --config c1_n144_overlap --no-counters --time-budget 0.25 \
      --json $OUT/$v-$r.json > $OUT/$v-$r.txt 2> $OUT/$v-$r.err
    echo "$v round $r rc=$? $(el) s: $(grep -E 'M4096|M8192' $OUT/$v-$r.txt | grep wgmma | awk -F'|' '{print $2,$7,$10}' | tr -s ' ' | tr '\n' ';')"
  done
done
for v in all; do
  timeout 60 var-$v/fusebench_tests "fp8_gemm wgmma: exact*" > $OUT/exact-$v.txt 2>&1; echo "exact $v rc=$? $(tail -2 $OUT/exact-$v.txt | tr '\n' ' ')"
done
