// Counter-based random numbers: element i of a stream depends only on (seed, stream, i), so a
// run is replayable from its seed whatever the thread count, and large inputs fill in parallel.
#pragma once

#include "harness/parallel.hpp"

#include <algorithm>
#include <array>
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

// Calls f(i, z) for every i in [0, n), in parallel (parallel_for), with z[s] = streams[s].normal(i):
// the normals come a block at a time from fill_normal. f must be safe to call concurrently for
// different i.
template <std::size_t S, typename F>
void parallel_normals(std::size_t n, const std::array<rng, S>& streams, F&& f) {
    parallel_for(n, [&](std::size_t begin, std::size_t end) {
        constexpr std::size_t block = 4096;
        std::array<std::array<double, block>, S> z;
        std::array<double, S> at;
        for (std::size_t b0 = begin; b0 < end; b0 += block) {
            const std::size_t count = std::min(block, end - b0);
            for (std::size_t s = 0; s < S; ++s) streams[s].fill_normal(b0, count, z[s].data());
            for (std::size_t j = 0; j < count; ++j) {
                for (std::size_t s = 0; s < S; ++s) at[s] = z[s][j];
                f(b0 + j, at);
            }
        }
    });
}

// A fresh seed from the OS entropy source and the clock.
std::uint64_t fresh_seed();

}  // namespace fusebench
