// Host-side parallel loop for input generation, references and comparisons over large tensors.
// Results never depend on the thread count: each index range is independent.
#pragma once

#include <cstddef>
#include <functional>

namespace fusebench {

// Calls body(begin, end) over [0, n) split into contiguous chunks on up to available_cpus()
// threads; runs inline when n < min_per_thread. Exceptions from a chunk are rethrown.
void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body,
                  std::size_t min_per_thread = 1 << 16);

// CPUs this process may run on: the affinity mask, capped by a cgroup v2 CPU quota (a container
// on a large host often sees every host CPU but may use a few: one thread per host CPU would then
// be throttled in bursts). What parallel_for uses by default.
std::size_t available_cpus() noexcept;

// The most threads parallel_for may use when called from this thread (0: available_cpus()).
// Threads started by parallel_for do not inherit it; only the calling thread's setting counts.
void set_thread_parallelism(std::size_t threads) noexcept;

}  // namespace fusebench
