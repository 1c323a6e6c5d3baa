#!/usr/bin/env bash
# Session o, calls 1 and 3 (either board; WANT=H100 / H200 refuses the other): pr-1127n/call1.sh (see there: two
# binaries from one build that differ in fused_stream.cu's object, built with PR_DEFINES; the adversarial cases
# interleaved base / pr / pr / base), with PR_DEFINES required (the n script's default is the library's form
# since 5f076c7) and [gpu][softmax_topk] only with TESTS=1 (the tests run the base build, not the pr one).
: "${PR_DEFINES:?set PR_DEFINES to the pr object flags}"
TESTS=${TESTS:-0} exec bash reports/examples/pr-1127n/call1.sh
