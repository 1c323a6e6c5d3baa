#include "harness/guard.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device.hpp"
#include "harness/device_compare.hpp"
#include "support/gpu.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <utility>
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

TEST_CASE("device_bytes_differ finds a single changed bit anywhere, at any alignment", "[gpu][guard]") {
    FUSEBENCH_REQUIRE_GPU();
    const std::size_t cap = (std::size_t{3} << 20) + 64;
    std::vector<unsigned char> host(cap);
    for (std::size_t i = 0; i < cap; ++i) host[i] = static_cast<unsigned char>(i * 131 + 7);
    device_buffer a(cap), b(cap);
    CUDA_CHECK(cudaMemcpy(a.get(), host.data(), cap, cudaMemcpyHostToDevice));
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{3} << 20}) {
        // Same offset in both (the word path with byte head and tail), and different offsets (bytes only).
        for (const auto [off_a, off_b] : {std::pair<std::size_t, std::size_t>{0, 0}, {3, 3}, {5, 2}}) {
            CUDA_CHECK(cudaMemset(b.get(), 0, cap));
            CUDA_CHECK(cudaMemcpy(b.bytes_ptr() + off_b, host.data() + off_a, n, cudaMemcpyHostToDevice));
            INFO("n " << n << " offsets " << off_a << " " << off_b);
            CHECK_FALSE(device_bytes_differ(a.bytes_ptr() + off_a, b.bytes_ptr() + off_b, n, nullptr));
            for (const std::size_t at : {std::size_t{0}, n / 2, n ? n - 1 : 0}) {
                if (!n) break;
                const unsigned char flipped = static_cast<unsigned char>(host[off_a + at] ^ 0x10);
                CUDA_CHECK(cudaMemcpy(b.bytes_ptr() + off_b + at, &flipped, 1, cudaMemcpyHostToDevice));
                CHECK(device_bytes_differ(a.bytes_ptr() + off_a, b.bytes_ptr() + off_b, n, nullptr));
                CUDA_CHECK(cudaMemcpy(b.bytes_ptr() + off_b + at, host.data() + off_a + at, 1, cudaMemcpyHostToDevice));
            }
        }
    }
}
