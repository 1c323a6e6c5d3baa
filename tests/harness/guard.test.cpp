#include "harness/guard.hpp"
#include "harness/hash.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <vector>

using namespace fusebench;

TEST_CASE("guard bands detect every changed byte", "[guard]") {
    std::vector<std::byte> band(guard_band_bytes, guard_fill);
    CHECK(count_changed(band, guard_fill) == 0);
    band[0] = std::byte{0};
    band[guard_band_bytes - 1] = std::byte{1};
    CHECK(count_changed(band, guard_fill) == 2);
}

TEST_CASE("elements holding both poison patterns were never written", "[guard]") {
    const std::size_t el = GENERATE(2u, 4u);
    const std::size_t n = 8;
    std::vector<std::byte> run1(n * el, poison_fill[0]), run2(n * el, poison_fill[1]);
    // The kernel writes elements 0..5 with the same values in both runs; 6 and 7 stay poisoned.
    for (std::size_t i = 0; i < 6 * el; ++i) run1[i] = run2[i] = std::byte{static_cast<unsigned char>(i)};
    auto d = compare_runs(run1, run2, el, true);
    CHECK(d.unwritten == 2);
    CHECK(d.differing == 2);
    // A race: element 1 differs between runs but was written both times.
    run2[1 * el] = std::byte{0x42};
    d = compare_runs(run1, run2, el, true);
    CHECK(d.unwritten == 2);
    CHECK(d.differing == 3);
    // In-place outputs are not poisoned: differences are not counted as unwritten.
    CHECK(compare_runs(run1, run2, el, false).unwritten == 0);
}

TEST_CASE("input hashes change with any single bit and not with the thread count", "[hash]") {
    const std::size_t n = GENERATE(std::size_t{0}, std::size_t{7}, std::size_t{1} << 20, (std::size_t{3} << 20) + 5);
    std::vector<unsigned char> buf(n);
    for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<unsigned char>(i * 131 + 7);
    const auto h = hash_bytes(buf.data(), n);
    CHECK(hash_bytes(buf.data(), n) == h);
    if (n) {
        buf[n / 2] ^= 0x10;
        CHECK(hash_bytes(buf.data(), n) != h);
        buf[n / 2] ^= 0x10;
        buf[n - 1] ^= 0x01;
        CHECK(hash_bytes(buf.data(), n) != h);
    }
}
