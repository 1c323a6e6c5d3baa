// Host-side logic of the output guards: guard bands around each output buffer, two poison
// patterns, and the bitwise comparisons between the two verification runs. Kept apart from the
// runner so CPU tests exercise it on host buffers.
#pragma once

#include <cstddef>
#include <span>

namespace fusebench {

inline constexpr std::size_t guard_band_bytes = 256;  // before and after each output [bytes]
inline constexpr std::byte guard_fill{0xC3};
// Run 1 poison: all-ones, NaN in every float format and -1 as int32. Run 2 poison: 0x7B bytes, a
// large finite value in fp32/bf16/fp16 (1.3e36 / 1.3e36 / 61280) and an out-of-range int32.
inline constexpr std::byte poison_fill[2] = {std::byte{0xFF}, std::byte{0x7B}};

// Bytes of `region` that differ from `fill`.
std::size_t count_changed(std::span<const std::byte> region, std::byte fill) noexcept;

struct run_pair_diff {
    std::size_t differing = 0;  // elements whose bytes differ between the runs
    std::size_t unwritten = 0;  // elements that held poison 1 after run 1 and poison 2 after run 2
};

// Compares element by element two captures of the same output (run 1, run 2). An element still
// holding each run's poison was never written: a written value cannot equal both patterns.
// Parallel over contiguous ranges of elements (harness/parallel.hpp); the counts do not depend on
// the thread count.
run_pair_diff compare_runs(std::span<const std::byte> run1, std::span<const std::byte> run2,
                           std::size_t element_bytes, bool poisoned);

}  // namespace fusebench
