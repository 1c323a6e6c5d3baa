#include "references/glu_reference.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <cmath>

using namespace fusebench::references;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("GLU activations match their closed forms", "[reference][glu]") {
    const double x = GENERATE(-30.0, -5.0, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0, 20.0);
    CAPTURE(x);
    const double sigmoid = 1.0 / (1.0 + std::exp(-x));
    CHECK_THAT(glu_activation_reference(glu_activation::silu, x), WithinRel(x * sigmoid, 1e-14) || WithinAbs(0.0, 1e-300));
    const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    // The textbook form loses digits to cancellation for negative x; compare relatively where it is safe.
    const double textbook_tanh = 0.5 * x * (1.0 + std::tanh(u));
    if (x > -3) CHECK_THAT(glu_activation_reference(glu_activation::gelu_tanh, x), WithinRel(textbook_tanh, 1e-12) || WithinAbs(0.0, 1e-300));
    const double textbook_erf = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    if (x > -3) CHECK_THAT(glu_activation_reference(glu_activation::gelu_erf, x), WithinRel(textbook_erf, 1e-12) || WithinAbs(0.0, 1e-300));
}

TEST_CASE("GLU activations at known points", "[reference][glu]") {
    CHECK_THAT(glu_activation_reference(glu_activation::gelu_erf, 1.0), WithinRel(0.8413447460685429, 1e-15));
    CHECK_THAT(glu_activation_reference(glu_activation::gelu_tanh, 1.0), WithinRel(0.8411919906082768, 1e-15));
    CHECK_THAT(glu_activation_reference(glu_activation::silu, 1.0), WithinRel(0.7310585786300049, 1e-15));
    // The stable forms keep full relative precision far in the negative tail.
    CHECK_THAT(glu_activation_reference(glu_activation::gelu_erf, -10.0), WithinRel(-7.619853024160593e-23, 1e-12));
    CHECK(std::isnan(glu_activation_reference(glu_activation::silu, -INFINITY)));
    CHECK(glu_activation_reference(glu_activation::silu, INFINITY) == INFINITY);
}

TEST_CASE("glu_reference multiplies by up and checks sizes", "[reference][glu]") {
    Eigen::ArrayXd gate(3), up(3), y(3);
    gate << -1.0, 0.0, 2.0;
    up << 2.0, 5.0, -0.5;
    glu_reference(glu_activation::silu, gate, up, y);
    for (int i = 0; i < 3; ++i) {
        CHECK_THAT(y[i], WithinRel(glu_activation_reference(glu_activation::silu, gate[i]) * up[i], 1e-15) || WithinAbs(0.0, 0.0));
    }
    Eigen::ArrayXd wrong(2);
    CHECK_THROWS_AS(glu_reference(glu_activation::silu, gate, up, wrong), std::invalid_argument);
}

TEST_CASE("glu_reference applies the intermediate rounding before the product", "[reference][glu]") {
    // silu(-128) = -3.3e-54 is below fp32's range: an fp32 intermediate is -0, and -0 * inf = NaN.
    Eigen::ArrayXd gate(1), up(1), y(1);
    gate << -128.0;
    up << INFINITY;
    glu_reference(glu_activation::silu, gate, up, y);
    CHECK(y[0] == -INFINITY);
    glu_reference(glu_activation::silu, gate, up, y, [](double v) { return static_cast<double>(static_cast<float>(v)); });
    CHECK(std::isnan(y[0]));
}
