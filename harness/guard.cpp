#include "harness/guard.hpp"

#include <algorithm>
#include <cstring>

namespace fusebench {

std::size_t count_changed(std::span<const std::byte> region, std::byte fill) noexcept {
    return static_cast<std::size_t>(std::count_if(region.begin(), region.end(), [fill](std::byte b) { return b != fill; }));
}

run_pair_diff compare_runs(std::span<const std::byte> run1, std::span<const std::byte> run2,
                           std::size_t element_bytes, bool poisoned) noexcept {
    run_pair_diff d;
    const std::size_t n = std::min(run1.size(), run2.size()) / element_bytes;
    for (std::size_t i = 0; i < n; ++i) {
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
    return d;
}

}  // namespace fusebench
