// Counter-based random numbers: element i of a stream depends only on (seed, stream, i), so a
// run is replayable from its seed whatever the thread count, and large inputs fill in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fusebench {

std::uint64_t splitmix64(std::uint64_t x) noexcept;
std::uint64_t hash_string(std::string_view s) noexcept;  // FNV-1a, 64-bit

class rng {
public:
    explicit rng(std::uint64_t seed) noexcept : m_seed(seed) {}
    std::uint64_t seed() const noexcept { return m_seed; }
    // An independent generator for a named purpose ("gate", "adversarial:ties", ...).
    rng fork(std::string_view purpose) const noexcept;
    rng fork(std::uint64_t stream) const noexcept;

    std::uint64_t bits(std::uint64_t i) const noexcept;  // 64 random bits for counter i
    double uniform(std::uint64_t i) const noexcept;      // [0, 1)
    // N(0, 1) by Box-Muller: counters 2k and 2k+1 give the pair (r cos t, r sin t) for elements
    // 2k and 2k+1, so element i depends on counters only.
    double normal(std::uint64_t i) const noexcept;
    // out[j] = normal(first + j) for j < n, bit for bit, at one logarithm, root and sin/cos pair
    // per two elements (about half the cost of n calls to normal).
    void fill_normal(std::uint64_t first, std::size_t n, double* out) const noexcept;

private:
    std::uint64_t m_seed;
};

// A fresh seed from the OS entropy source and the clock.
std::uint64_t fresh_seed();

}  // namespace fusebench
