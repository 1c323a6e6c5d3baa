#include "harness/guard.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "harness/parallel.hpp"

namespace fusebench {

std::size_t count_changed(std::span<const std::byte> region, std::byte fill) noexcept {
    return static_cast<std::size_t>(std::count_if(region.begin(), region.end(), [fill](std::byte b) { return b != fill; }));
}

run_pair_diff compare_runs(std::span<const std::byte> run1, std::span<const std::byte> run2,
                           std::size_t element_bytes, bool poisoned) {
    const std::size_t n = std::min(run1.size(), run2.size()) / element_bytes;
    std::mutex m;
    run_pair_diff total;
    parallel_for(n, [&](std::size_t begin, std::size_t end) {
        run_pair_diff d;
        const std::byte* a0 = run1.data() + begin * element_bytes;
        const std::byte* b0 = run2.data() + begin * element_bytes;
        const std::size_t bytes = (end - begin) * element_bytes;
        // Equal ranges (the common case) cost one memcmp.
        if (std::memcmp(a0, b0, bytes) != 0) {
            for (std::size_t i = begin; i < end; ++i) {
                const std::byte* a = run1.data() + i * element_bytes;
                const std::byte* b = run2.data() + i * element_bytes;
                if (std::memcmp(a, b, element_bytes) == 0) continue;
                ++d.differing;
                if (!poisoned) continue;
                bool pa = true, pb = true;
                for (std::size_t j = 0; j < element_bytes; ++j) {
                    pa = pa && a[j] == poison_fill[0];
                    pb = pb && b[j] == poison_fill[1];
                }
                d.unwritten += pa && pb;
            }
        }
        std::lock_guard lock(m);
        total.differing += d.differing;
        total.unwritten += d.unwritten;
    });
    return total;
}

}  // namespace fusebench
