#!/usr/bin/env bash
# Session m, call 5 (either board): call4.sh on fewer kinds (std1, plateau, ties, huge, stride_trap, all_equal at
# 4096 x {50257, 151936} K = 256), with the parked sample's test at 7/8 of the kept keys and a test on the group
# maxima in sample_by_maxima (the library at the commit sent).
CASES="4096x50257:K256:std1,4096x50257:K256:plateau,4096x50257:K256:ties,4096x50257:K256:huge,4096x50257:K256:stride_trap,4096x50257:K256:all_equal,4096x151936:K256:std1,4096x151936:K256:plateau,4096x151936:K256:ties,4096x151936:K256:huge,4096x151936:K256:stride_trap,4096x151936:K256:all_equal" exec bash "$(dirname "$0")/call4.sh"
