#include "harness/rng.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace fusebench;

TEST_CASE("fill_normal gives normal(first + j) bit for bit from any start", "[rng]") {
    const rng g = rng(12345).fork("test");
    for (std::uint64_t first : {0ull, 1ull, 2ull, 7ull, 1000001ull}) {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{1000}}) {
            std::vector<double> out(n + 1, -999.0);
            g.fill_normal(first, n, out.data());
            for (std::size_t j = 0; j < n; ++j) {
                const double want = g.normal(first + j);
                INFO("first " << first << " j " << j);
                CHECK(std::memcmp(&out[j], &want, sizeof(double)) == 0);
            }
            CHECK(out[n] == -999.0);  // nothing written past n
        }
    }
}

TEST_CASE("normal has mean 0, variance 1 and uncorrelated pair halves", "[rng]") {
    const rng g(99);
    const std::size_t n = 1 << 20;
    std::vector<double> x(n);
    g.fill_normal(0, n, x.data());
    double sum = 0, sum2 = 0, cross = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sum += x[i];
        sum2 += x[i] * x[i];
        if (i % 2 == 0) cross += x[i] * x[i + 1];
    }
    const double mean = sum / n, var = sum2 / n - mean * mean, corr = cross / (n / 2);
    // Standard errors at n = 2^20: mean 0.001, variance 0.0014, pair product 0.0014.
    CHECK(std::fabs(mean) < 0.005);
    CHECK(std::fabs(var - 1.0) < 0.007);
    CHECK(std::fabs(corr) < 0.007);
    std::size_t beyond3 = 0;
    for (double v : x) beyond3 += std::fabs(v) > 3.0;
    // P(|z| > 3) = 0.0027: about 2831 of 2^20.
    CHECK(beyond3 > 2500);
    CHECK(beyond3 < 3200);
}
