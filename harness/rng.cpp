#include "harness/rng.hpp"

#include <chrono>
#include <cmath>
#include <numbers>
#include <random>

namespace fusebench {

std::uint64_t splitmix64(std::uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

std::uint64_t hash_string(std::string_view s) noexcept {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001B3ull;
    }
    return h;
}

rng rng::fork(std::string_view purpose) const noexcept {
    return rng(splitmix64(m_seed ^ splitmix64(hash_string(purpose))));
}

rng rng::fork(std::uint64_t stream) const noexcept {
    return rng(splitmix64(m_seed ^ splitmix64(stream + 0x632BE59BD9B4E019ull)));
}

std::uint64_t rng::bits(std::uint64_t i) const noexcept {
    return splitmix64(splitmix64(m_seed) + i * 0xD1B54A32D192ED03ull);
}

double rng::uniform(std::uint64_t i) const noexcept {
    return static_cast<double>(bits(i) >> 11) * 0x1.0p-53;
}

namespace {
// The pair of element 2k and 2k+1. One code path for both entry points, so they agree bitwise.
inline void normal_pair(const rng& g, std::uint64_t k, double& even, double& odd) noexcept {
    const double u1 = 1.0 - g.uniform(2 * k);  // (0, 1]: log is finite
    const double u2 = g.uniform(2 * k + 1);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double t = 2.0 * std::numbers::pi * u2;
    even = r * std::cos(t);
    odd = r * std::sin(t);
}
}  // namespace

double rng::normal(std::uint64_t i) const noexcept {
    double even, odd;
    normal_pair(*this, i >> 1, even, odd);
    return (i & 1) ? odd : even;
}

void rng::fill_normal(std::uint64_t first, std::size_t n, double* out) const noexcept {
    std::size_t j = 0;
    while (j < n) {
        const std::uint64_t i = first + j;
        double even, odd;
        normal_pair(*this, i >> 1, even, odd);
        if ((i & 1) == 0) {
            out[j++] = even;
            if (j < n) out[j++] = odd;
        } else {
            out[j++] = odd;
        }
    }
}

std::uint64_t fresh_seed() {
    std::random_device rd;
    const auto t = static_cast<std::uint64_t>(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
    // Kept to 53 bits so the seed survives a round trip through JSON readers that use doubles.
    return splitmix64((static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ t) & ((1ull << 53) - 1);
}

}  // namespace fusebench
