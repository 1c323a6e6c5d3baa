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

double rng::normal(std::uint64_t i) const noexcept {
    const double u1 = 1.0 - uniform(2 * i);  // (0, 1]: log is finite
    const double u2 = uniform(2 * i + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::uint64_t fresh_seed() {
    std::random_device rd;
    const auto t = static_cast<std::uint64_t>(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
    // Kept to 53 bits so the seed survives a round trip through JSON readers that use doubles.
    return splitmix64((static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ t) & ((1ull << 53) - 1);
}

}  // namespace fusebench
