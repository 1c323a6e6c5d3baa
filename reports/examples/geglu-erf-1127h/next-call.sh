#!/usr/bin/env bash
# Prepared for the next session (not run): on whichever board comes,
# 1. the GLU probe for the short silu / gelu_tanh candidates (erf as the reference pair, ~40 s);
# 2. the library build, then every timed dense conv1d case in bf16 and fp16 with wgmma_tma's two
#    configurations and implicit_gemm (38 timed cases), to choose wgmma_tma's default with the new
#    epilogue; SIGINT after 180 s leaves an interrupted report with what finished;
# 3. [gpu][seeds] (100 fresh seeds of the default suites), not run since the GLU change.
# ~45 + 200 + ~120 + ~155 s: one call of about 9 minutes; drop step 2 or 3 when time is short.
set -uo pipefail
O=$OUT; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $O/gpu.txt
if [ -n "${WANT:-}" ]; then grep -q "$WANT" $O/gpu.txt || { echo "not an $WANT: nothing run"; exit 3; }; fi
nvcc -O3 -std=c++20 -arch=sm_90 -I. kernels/glu/probes/gelu_ab.cu -o /tmp/gelu_ab && /tmp/gelu_ab erf tanh silu > $O/ab.txt 2>&1; echo "probe rc=$? ($(el) s)"
grep -v round $O/ab.txt; grep round $O/ab.txt | awk '{print $1, $2, $4, $8}'
export FUSEBENCH_BUILD_DIR=$PWD/build-gpu
FUSEBENCH_TARGETS="fusebench fusebench_tests" scripts/build.sh > $O/build.log 2>&1 || { tail -30 $O/build.log; echo BUILD FAILED; exit 1; }
echo "build $(el) s"
timeout -s INT 180 build-gpu/fusebench run --suite conv1d --case "dense:b" --dtype bf16,fp16 --variant wgmma_tma,implicit_gemm \
  --json $O/conv.json > $O/conv.txt 2>$O/conv.err; echo "conv rc=$? ($(el) s)"
grep -E "wgmma_tma|implicit_gemm" $O/conv.txt | head -60
timeout -s INT $(( 585 - $(el) )) build-gpu/fusebench_tests "[gpu][seeds]" > $O/seeds.txt 2>&1; echo "seeds rc=$? ($(el) s)"; tail -4 $O/seeds.txt
gzip -f $O/conv.json
