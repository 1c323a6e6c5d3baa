#include "harness/stats.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <cmath>
#include <vector>

using namespace fusebench;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("summarize computes order statistics and moments", "[stats]") {
    const std::vector<double> x{5, 1, 4, 2, 3};
    const auto s = summarize(x);
    CHECK(s.n == 5);
    CHECK(s.median == 3);
    CHECK(s.min == 1);
    CHECK(s.max == 5);
    CHECK(s.mean == 3);
    CHECK_THAT(s.stdev, WithinRel(1.5811388300841898, 1e-12));
    CHECK_THAT(s.p10, WithinAbs(1.4, 1e-12));
    CHECK_THAT(s.p90, WithinAbs(4.6, 1e-12));
    CHECK_THAT(s.iqr, WithinAbs(2.0, 1e-12));
    CHECK_THAT(s.noise, WithinRel(1.2533 * 1.5811388300841898 / (3 * std::sqrt(5.0)), 1e-12));
    CHECK_THROWS(summarize(std::vector<double>{}));
}

TEST_CASE("the stopping rule needs min samples, then noise or budget", "[stats]") {
    sampling_policy p;
    p.min_samples = 10;
    p.noise_target = 0.005;
    p.budget_s = 0.5;
    std::vector<double> quiet(5, 100.0);
    CHECK(should_stop(summarize(quiet), 10.0, p) == stop_reason::keep_going);  // too few, even past budget
    quiet.resize(10, 100.0);
    CHECK(should_stop(summarize(quiet), 0.01, p) == stop_reason::noise_target_met);
    std::vector<double> noisy;
    for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 80.0 : 120.0);
    CHECK(should_stop(summarize(noisy), 0.1, p) == stop_reason::keep_going);
    CHECK(should_stop(summarize(noisy), 0.6, p) == stop_reason::budget_exhausted);
    p.budget_s = 100;  // the hard cap wins over a larger budget
    CHECK(should_stop(summarize(noisy), 16.0, p) == stop_reason::budget_exhausted);
    p.max_samples = 20;
    CHECK(should_stop(summarize(noisy), 0.1, p) == stop_reason::max_samples);
}
