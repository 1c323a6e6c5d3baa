#include "references/rmsnorm_reference.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using Catch::Matchers::WithinULP;
using fusebench::references::residual_rmsnorm_reference;

namespace {

const auto identity = [](double v) { return v; };

struct outputs {
    std::vector<double> y, r;
};

outputs run(const std::vector<double>& x, const std::vector<double>& res, const std::vector<double>& gamma,
            double eps, const std::function<double(double)>& round = identity) {
    outputs o{std::vector<double>(x.size()), std::vector<double>(x.size())};
    residual_rmsnorm_reference(x, res, gamma, gamma.size(), eps, round, o.y, o.r);
    return o;
}

std::vector<double> random_values(std::size_t n, unsigned seed, double mean, double stddev) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> d(mean, stddev);
    std::vector<double> v(n);
    for (auto& e : v) e = d(gen);
    return v;
}

}  // namespace

TEST_CASE("rmsnorm reference: hand-computed row", "[references][rmsnorm]") {
    // r = {1, 2, 3, 4}: mean of squares 30/4 = 7.5.
    const auto o = run({0.5, 2, 4, 1}, {0.5, 0, -1, 3}, {2, 0.5, -1, 3}, 0.0);
    const double s = 1.0 / std::sqrt(7.5);
    const std::vector<double> expected_y{2 * s, 1 * s, -3 * s, 12 * s};
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(o.r[i] == static_cast<double>(i + 1));
        CHECK_THAT(o.y[i], WithinULP(expected_y[i], 2));
    }
}

TEST_CASE("rmsnorm reference: normalizes the rounded residual_out", "[references][rmsnorm]") {
    // Rounding to integers turns r = {0.7, 1.4, 2.6} into {1, 1, 3}; mean of squares 11/3.
    const auto to_int = [](double v) { return std::nearbyint(v); };
    const auto o = run({0.5, 1.0, 2.0}, {0.2, 0.4, 0.6}, {1.5, -2.0, 0.25}, 0.0, to_int);
    CHECK(o.r == std::vector<double>{1, 1, 3});
    const double s = 1.0 / std::sqrt(11.0 / 3.0);
    CHECK_THAT(o.y[0], WithinULP(1.5 * s, 2));
    CHECK_THAT(o.y[1], WithinULP(-2.0 * s, 2));
    CHECK_THAT(o.y[2], WithinULP(0.75 * s, 2));
}

TEST_CASE("rmsnorm reference: matches a plain loop on random rows", "[references][rmsnorm]") {
    const std::size_t hidden = GENERATE(1u, 31u, 33u, 4097u);
    const std::size_t rows = 3;
    const double eps = GENERATE(0.0, 1e-6, 1e-2);
    const auto x = random_values(rows * hidden, 1, 0.0, 1.0);
    const auto res = random_values(rows * hidden, 2, 0.0, 3.0);
    const auto gamma = random_values(hidden, 3, 1.0, 0.5);
    // A coarse grid (1/64) so the rounding is visible in every element.
    const auto grid = [](double v) { return std::nearbyint(v * 64.0) / 64.0; };
    const auto o = run(x, res, gamma, eps, grid);
    for (std::size_t row = 0; row < rows; ++row) {
        double ss = 0;
        for (std::size_t j = 0; j < hidden; ++j) {
            const double r = grid(x[row * hidden + j] + res[row * hidden + j]);
            ss += r * r;
        }
        const double scale = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + eps);
        for (std::size_t j = 0; j < hidden; ++j) {
            const std::size_t i = row * hidden + j;
            const double r = grid(x[i] + res[i]);
            CHECK(o.r[i] == r);
            CHECK_THAT(o.y[i], WithinRel(r * scale * gamma[j], 1e-13) || WithinAbs(0.0, 1e-300));
        }
    }
}

TEST_CASE("rmsnorm reference: rows are independent", "[references][rmsnorm]") {
    const std::size_t hidden = 33, rows = 5;
    const auto x = random_values(rows * hidden, 4, 0.0, 1.0);
    const auto res = random_values(rows * hidden, 5, 0.0, 1.0);
    const auto gamma = random_values(hidden, 6, 1.0, 0.5);
    const auto all = run(x, res, gamma, 1e-6);
    const std::size_t row = 3;
    const std::vector<double> x1(x.begin() + row * hidden, x.begin() + (row + 1) * hidden);
    const std::vector<double> r1(res.begin() + row * hidden, res.begin() + (row + 1) * hidden);
    const auto one = run(x1, r1, gamma, 1e-6);
    for (std::size_t j = 0; j < hidden; ++j) {
        CHECK(one.y[j] == all.y[row * hidden + j]);
        CHECK(one.r[j] == all.r[row * hidden + j]);
    }
}

TEST_CASE("rmsnorm reference: eps decides zero and tiny rows", "[references][rmsnorm]") {
    const std::vector<double> gamma{0.5, -1.5, 2.0, 1.0};
    SECTION("all-zero row stays finite: y = 0") {
        const auto o = run({0, 0, 0, 0}, {0, 0, 0, 0}, gamma, 1e-6);
        for (double v : o.y) CHECK(v == 0.0);
    }
    SECTION("all-zero row without eps is 0/0") {
        const auto o = run({0, 0, 0, 0}, {0, 0, 0, 0}, gamma, 0.0);
        for (double v : o.y) CHECK(std::isnan(v));
    }
    SECTION("mean square equal to eps halves the variance term") {
        // |r| = 1e-3 everywhere: mean square 1e-6 = eps, so the scale is 1 / sqrt(2e-6).
        const auto o = run({1e-3, -1e-3, 5e-4, -2e-3}, {0, 0, 5e-4, 1e-3}, gamma, 1e-6);
        const std::vector<double> r{1e-3, -1e-3, 1e-3, -1e-3};
        for (std::size_t j = 0; j < 4; ++j) {
            CHECK_THAT(o.y[j], WithinRel(r[j] / std::sqrt(2e-6) * gamma[j], 1e-12));
        }
    }
}

TEST_CASE("rmsnorm reference: constant rows give +-gamma", "[references][rmsnorm]") {
    const double c = GENERATE(-3.0, 1e-2, 60000.0);
    const std::vector<double> gamma{0.5, -1.5, 2.0};
    const auto o = run({c, c, c}, {0, 0, 0}, gamma, 1e-6);
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK_THAT(o.y[j], WithinRel(c / std::sqrt(c * c + 1e-6) * gamma[j], 1e-14));
    }
}

TEST_CASE("rmsnorm reference: scale invariance without eps", "[references][rmsnorm]") {
    const std::size_t hidden = 31;
    const auto x = random_values(hidden, 7, 0.0, 1.0);
    const auto res = random_values(hidden, 8, 0.0, 1.0);
    const auto gamma = random_values(hidden, 9, 1.0, 0.5);
    auto big_x = x, big_r = res;
    for (auto& v : big_x) v *= 1024.0;
    for (auto& v : big_r) v *= 1024.0;
    const auto a = run(x, res, gamma, 0.0);
    const auto b = run(big_x, big_r, gamma, 0.0);
    for (std::size_t j = 0; j < hidden; ++j) CHECK_THAT(b.y[j], WithinULP(a.y[j], 4));
}

TEST_CASE("rmsnorm reference: an infinite residual_out gives NaN there and 0 elsewhere",
          "[references][rmsnorm]") {
    const double inf = std::numeric_limits<double>::infinity();
    const auto o = run({1.0, inf, -2.0}, {0.0, 1.0, 0.5}, {1.0, 2.0, 3.0}, 1e-6);
    CHECK(o.r[1] == inf);
    CHECK(o.y[0] == 0.0);
    CHECK(std::isnan(o.y[1]));
    CHECK(o.y[2] == 0.0);
}

TEST_CASE("rmsnorm reference: rejects sizes that do not fit", "[references][rmsnorm]") {
    std::vector<double> x(8), res(8), y(8), r(8), gamma(4), short_out(7);
    CHECK_NOTHROW(residual_rmsnorm_reference(x, res, gamma, 4, 1e-6, identity, y, r));
    CHECK_THROWS_AS(residual_rmsnorm_reference(x, res, gamma, 3, 1e-6, identity, y, r), std::invalid_argument);
    CHECK_THROWS_AS(residual_rmsnorm_reference(x, res, gamma, 0, 1e-6, identity, y, r), std::invalid_argument);
    CHECK_THROWS_AS(residual_rmsnorm_reference(x, res, gamma, 4, 1e-6, identity, short_out, r),
                    std::invalid_argument);
    CHECK_THROWS_AS(residual_rmsnorm_reference(x, res, gamma, 4, 1e-6, nullptr, y, r), std::invalid_argument);
}
