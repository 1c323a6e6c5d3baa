#include "references/softmax_topk_reference.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using fusebench::softmax_topk_row_reference;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

struct topk {
    std::vector<double> probs;
    std::vector<std::int64_t> indices;
};

topk run(const std::vector<double>& x, std::size_t K) {
    topk r{std::vector<double>(K), std::vector<std::int64_t>(K)};
    softmax_topk_row_reference(x, r.probs, r.indices);
    return r;
}

// Independent formulation: full stable sort by descending value, softmax by direct summation in
// long double.
topk brute_force(const std::vector<double>& x, std::size_t K) {
    std::vector<std::int64_t> order(x.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return x[a] > x[b]; });
    const double m = *std::max_element(x.begin(), x.end());
    long double s = 0;
    for (double v : x) s += std::exp(static_cast<long double>(v) - m);
    topk r;
    for (std::size_t k = 0; k < K; ++k) {
        r.indices.push_back(order[k]);
        r.probs.push_back(static_cast<double>(std::exp(static_cast<long double>(x[order[k]]) - m) / s));
    }
    return r;
}

}  // namespace

TEST_CASE("softmax_topk reference matches a brute-force sort on random rows", "[reference][softmax_topk]") {
    const std::size_t V = GENERATE(1, 2, 31, 33, 1000, 50257);
    const std::size_t K = std::min<std::size_t>(V, GENERATE(1, 10, 256));
    const double scale = GENERATE(1.0, 10.0);
    std::mt19937_64 gen(V * 7919 + K);
    std::normal_distribution<double> normal(0.0, scale);
    std::vector<double> x(V);
    for (auto& v : x) v = static_cast<float>(normal(gen));  // fp32-representable, like real inputs
    const topk got = run(x, K), want = brute_force(x, K);
    CHECK(got.indices == want.indices);
    for (std::size_t k = 0; k < K; ++k) CHECK_THAT(got.probs[k], WithinRel(want.probs[k], 1e-12));
    for (std::size_t k = 1; k < K; ++k) CHECK(got.probs[k] <= got.probs[k - 1]);
}

TEST_CASE("softmax_topk reference orders ties by lower index", "[reference][softmax_topk]") {
    const std::size_t V = GENERATE(1, 7, 300);
    const std::size_t K = std::min<std::size_t>(V, GENERATE(1, 5, 300));
    const std::vector<double> x(V, 3.25);
    const topk r = run(x, K);
    for (std::size_t k = 0; k < K; ++k) {
        CHECK(r.indices[k] == static_cast<std::int64_t>(k));
        CHECK_THAT(r.probs[k], WithinRel(1.0 / static_cast<double>(V), 1e-14));
    }
}

TEST_CASE("softmax_topk reference treats -0 and +0 as equal", "[reference][softmax_topk]") {
    const topk r = run({0.0, -0.0, -1.0, 0.0}, 3);
    CHECK(r.indices == std::vector<std::int64_t>{0, 1, 3});
}

TEST_CASE("softmax_topk reference: masked (-inf) entries have probability 0 and rank last", "[reference][softmax_topk]") {
    const std::vector<double> x{-inf, 2.0, -inf, 1.0, -inf};
    const topk r = run(x, 5);
    CHECK(r.indices == std::vector<std::int64_t>{1, 3, 0, 2, 4});
    const double e = std::exp(-1.0);
    CHECK_THAT(r.probs[0], WithinRel(1.0 / (1.0 + e), 1e-15));
    CHECK_THAT(r.probs[1], WithinRel(e / (1.0 + e), 1e-15));
    for (int k = 2; k < 5; ++k) CHECK(r.probs[k] == 0.0);
    CHECK(fusebench::softmax_row_is_finite(x));
}

TEST_CASE("softmax_topk reference: rows without a finite softmax give NaN and indices 0..K-1", "[reference][softmax_topk]") {
    const std::vector<double> x = GENERATE(std::vector<double>{1.0, nan_v, 2.0, 3.0},
                                           std::vector<double>{1.0, 2.0, inf, 3.0},
                                           std::vector<double>{-inf, -inf, -inf, -inf},
                                           std::vector<double>{-inf, inf, -inf, 0.0},
                                           std::vector<double>{nan_v, nan_v, nan_v, nan_v});
    CHECK_FALSE(fusebench::softmax_row_is_finite(x));
    const topk r = run(x, 3);
    CHECK(r.indices == std::vector<std::int64_t>{0, 1, 2});
    for (double p : r.probs) CHECK(std::isnan(p));
}

TEST_CASE("softmax_topk reference subtracts the max: magnitudes near 1e30 do not overflow", "[reference][softmax_topk]") {
    const topk r = run({-1e30, 1e30, 1e30, 0.0, 9.9e29}, 3);
    CHECK(r.indices == std::vector<std::int64_t>{1, 2, 4});
    CHECK_THAT(r.probs[0], WithinRel(0.5, 1e-15));
    CHECK_THAT(r.probs[1], WithinRel(0.5, 1e-15));
    CHECK_THAT(r.probs[2], WithinAbs(0.0, 1e-300));
}

TEST_CASE("softmax_topk reference: K = V sums to one, V = 1 gives probability 1", "[reference][softmax_topk]") {
    std::vector<double> x(97);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<double>(i)) * 5.0;
    const topk r = run(x, x.size());
    double sum = 0;
    for (double p : r.probs) sum += p;
    CHECK_THAT(sum, WithinRel(1.0, 1e-14));
    const topk one = run({-123.5}, 1);
    CHECK(one.indices[0] == 0);
    CHECK(one.probs[0] == 1.0);
}

TEST_CASE("softmax_topk reference rejects K > V, K = 0 and mismatched outputs", "[reference][softmax_topk]") {
    const std::vector<double> x{1.0, 2.0};
    std::vector<double> p3(3), p0;
    std::vector<std::int64_t> i3(3), i0, i2(2);
    CHECK_THROWS_AS(softmax_topk_row_reference(x, p3, i3), std::invalid_argument);
    CHECK_THROWS_AS(softmax_topk_row_reference(x, p0, i0), std::invalid_argument);
    std::vector<double> p1(1);
    CHECK_THROWS_AS(softmax_topk_row_reference(x, p1, i2), std::invalid_argument);
}
