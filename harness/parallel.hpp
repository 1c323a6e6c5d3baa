// Host-side parallel loop for input generation, references and comparisons over large tensors.
// Results never depend on the thread count: each index range is independent.
#pragma once

#include <cstddef>
#include <functional>

namespace fusebench {

// Calls body(begin, end) over [0, n) split into contiguous chunks on up to hardware_concurrency
// threads; runs inline when n < min_per_thread. Exceptions from a chunk are rethrown.
void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body,
                  std::size_t min_per_thread = 1 << 16);

}  // namespace fusebench
