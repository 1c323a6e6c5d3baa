#!/usr/bin/env bash
# Session m, call 6 (either board): call4.sh on std1, plateau, ties and huge at 4096 x {50257, 151936} K = 256, with
# the parked sample's test as "at most 8 kept keys above the threshold's value" (the library at the commit sent).
CASES="4096x50257:K256:std1,4096x50257:K256:plateau,4096x50257:K256:ties,4096x50257:K256:huge,4096x151936:K256:std1,4096x151936:K256:plateau,4096x151936:K256:ties,4096x151936:K256:huge" exec bash "$(dirname "$0")/call4.sh"
