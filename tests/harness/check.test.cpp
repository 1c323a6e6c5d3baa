#include "harness/check.hpp"
#include "harness/dtype.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace fusebench;

namespace {
std::vector<unsigned char> encode(dtype t, const std::vector<double>& v) {
    std::vector<unsigned char> out(v.size() * dtype_size(t));
    for (std::size_t i = 0; i < v.size(); ++i) store_element(t, out.data(), i, v[i]);
    return out;
}
const tolerance tol_bf16{1e-2, 1e-6, 1};
}  // namespace

TEST_CASE("a correct output within tolerance passes and reports its error", "[check]") {
    const auto t = GENERATE(dtype::f32, dtype::bf16, dtype::f16);
    std::vector<double> ref{1.0, -2.0, 0.5, 3.25, 1e-3};
    std::vector<double> got;
    for (double r : ref) got.push_back(round_to_dtype(r, t));
    const auto bytes = encode(t, got);
    const auto c = compare_elementwise("y", t, bytes.data(), ref, {1e-2, 1e-6, 1});
    CHECK(c.pass);
    CHECK(c.stats.mismatches == 0);
    REQUIRE(c.stats.ulp_max.has_value());
    CHECK(*c.stats.ulp_max == 0);
    REQUIRE(c.stats.rel_l2.has_value());
    CHECK(*c.stats.rel_l2 < 1e-2);
}

TEST_CASE("zeros where the true outputs are tiny fail", "[check]") {
    // Outputs span 6 orders of magnitude; a kernel that flushes the small ones to zero must fail
    // even though its error is tiny compared to the largest output.
    std::vector<double> ref, got;
    for (int i = 0; i < 100; ++i) {
        const double v = (i % 2 ? 1.0 : 1e-4) * (1 + i * 0.01);
        ref.push_back(v);
        got.push_back(v < 1e-3 ? 0.0 : round_to_dtype(v, dtype::bf16));
    }
    const auto bytes = encode(dtype::bf16, got);
    const auto c = compare_elementwise("y", dtype::bf16, bytes.data(), ref, tol_bf16);
    CHECK_FALSE(c.pass);
    CHECK(c.stats.mismatches == 50);
    CHECK(c.stats.first.size() == max_reported_mismatches);
    CHECK(c.stats.first[0].why == "tolerance");
}

TEST_CASE("NaN and Inf must sit where the reference has them", "[check]") {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    const std::vector<double> ref{1.0, inf, -inf, nan, 2.0};
    SECTION("matching positions pass") {
        const auto bytes = encode(dtype::f32, {1.0, inf, -inf, nan, 2.0});
        CHECK(compare_elementwise("y", dtype::f32, bytes.data(), ref, {1e-5, 1e-6, 1}).pass);
    }
    SECTION("NaN where the reference is finite fails (an unwritten, poisoned element)") {
        const auto bytes = encode(dtype::f32, {nan, inf, -inf, nan, 2.0});
        const auto c = compare_elementwise("y", dtype::f32, bytes.data(), ref, {1e-5, 1e-6, 1});
        CHECK_FALSE(c.pass);
        CHECK(c.stats.first.at(0).why == "nan/inf position");
    }
    SECTION("an infinity of the wrong sign fails") {
        const auto bytes = encode(dtype::f32, {1.0, -inf, -inf, nan, 2.0});
        CHECK_FALSE(compare_elementwise("y", dtype::f32, bytes.data(), ref, {1e-5, 1e-6, 1}).pass);
    }
    SECTION("a finite value where the reference is NaN fails") {
        const auto bytes = encode(dtype::f32, {1.0, inf, -inf, 0.0, 2.0});
        CHECK_FALSE(compare_elementwise("y", dtype::f32, bytes.data(), ref, {1e-5, 1e-6, 1}).pass);
    }
}

TEST_CASE("a finite reference beyond the format's range expects that infinity", "[check]") {
    const std::vector<double> ref{1e6, -1e6};  // beyond fp16's 65504
    const auto ok = encode(dtype::f16, {INFINITY, -INFINITY});
    CHECK(compare_elementwise("y", dtype::f16, ok.data(), ref, {2e-3, 1e-6, 1}).pass);
    const auto bad = encode(dtype::f16, {65504.0, -65504.0});
    CHECK_FALSE(compare_elementwise("y", dtype::f16, bad.data(), ref, {2e-3, 1e-6, 1}).pass);
}

TEST_CASE("the subnormal grain bounds the absolute error near zero", "[check]") {
    // fp16 outputs of ~1e-7 are subnormal: the rounding error can reach half the grain.
    const std::vector<double> ref{1.0e-7, 2.3e-7, 1.0};
    std::vector<double> got;
    for (double r : ref) got.push_back(round_to_dtype(r, dtype::f16));
    const auto bytes = encode(dtype::f16, got);
    CHECK(compare_elementwise("y", dtype::f16, bytes.data(), ref, {2e-3, 0.0, 1}).pass);
    const auto wrong = encode(dtype::f16, {1.0e-7 + 3 * dtype_min_subnormal(dtype::f16), 2.3e-7, 1.0});
    CHECK_FALSE(compare_elementwise("y", dtype::f16, wrong.data(), ref, {2e-3, 0.0, 1}).pass);
}

TEST_CASE("a per-element absolute bound judges each element by its own allowance", "[check]") {
    // Four elements of the same size with allowances 1e-6 .. 1e-3 each: the same error passes
    // where its element's allowance covers it and fails where it does not.
    const std::vector<double> ref{1.0, 1.0, 1.0, 1.0}, bound{1e-6, 1e-5, 1e-4, 1e-3};
    const double rtol = 1e-7;
    auto with_error = [&](double e) {
        std::vector<double> got(ref.size());
        for (std::size_t i = 0; i < ref.size(); ++i) got[i] = ref[i] + e;
        return encode(dtype::f32, got);
    };
    SECTION("within every element's bound passes, with the usual statistics") {
        const auto bytes = with_error(std::ldexp(1.0, -20));  // 9.5e-7, exact in fp32
        const auto c = compare_elementwise_bounded("y", dtype::f32, bytes.data(), ref, rtol, bound);
        CHECK(c.pass);
        CHECK(c.stats.mismatches == 0);
        CHECK(c.stats.max_abs.value() == std::ldexp(1.0, -20));
        CHECK(c.stats.ulp_max.value() == 8);
    }
    SECTION("an error between two elements' bounds fails exactly the elements it exceeds") {
        const auto bytes = with_error(std::ldexp(1.0, -15));  // 3.1e-5: above 1e-6 + 1e-7 and 1e-5 + 1e-7
        const auto c = compare_elementwise_bounded("y", dtype::f32, bytes.data(), ref, rtol, bound);
        // The bound as a function: the same verdict, statistics and text.
        const auto f = compare_elementwise_bounded("y", dtype::f32, bytes.data(), ref, rtol,
                                                   std::function<double(std::size_t)>([&](std::size_t i) { return bound[i]; }));
        CHECK(f.pass == c.pass);
        CHECK(f.stats.mismatches == c.stats.mismatches);
        CHECK(f.stats.max_abs == c.stats.max_abs);
        CHECK(f.reason == c.reason);
        CHECK_FALSE(c.pass);
        CHECK(c.stats.mismatches == 2);
        REQUIRE(c.stats.first.size() == 2);
        CHECK(c.stats.first[0].index == 0);
        CHECK(c.stats.first[1].index == 1);
        CHECK(c.stats.first[0].why == "tolerance");
        CHECK(c.reason.find("out of tolerance") != std::string::npos);
        CHECK(c.reason.find("per-element atol up to 0.001") != std::string::npos);
    }
    SECTION("the relative term still counts") {
        // An error of 2e-6 on element 0 (bound 1e-6) passes with rtol 2e-6 and fails with 5e-7.
        const auto bytes = encode(dtype::f32, {1.0 + std::ldexp(1.0, -19), 1.0, 1.0, 1.0});
        CHECK(compare_elementwise_bounded("y", dtype::f32, bytes.data(), ref, 2e-6, bound).pass);
        CHECK_FALSE(compare_elementwise_bounded("y", dtype::f32, bytes.data(), ref, 5e-7, bound).pass);
    }
    SECTION("zero bounds and rtol leave the subnormal grain: an exact output passes, one ulp off fails") {
        const std::vector<double> zero(4, 0.0);
        const auto exact = with_error(0);
        CHECK(compare_elementwise_bounded("y", dtype::f32, exact.data(), ref, 0, zero).pass);
        const auto off = with_error(std::ldexp(1.0, -23));
        CHECK_FALSE(compare_elementwise_bounded("y", dtype::f32, off.data(), ref, 0, zero).pass);
    }
    SECTION("NaN and Inf follow the reference, as in compare_elementwise") {
        const std::vector<double> r2{1.0, std::nan("")};
        const std::vector<double> b2{1.0, 1.0};
        const auto nan_ok = encode(dtype::f32, {1.0, std::nan("")});
        CHECK(compare_elementwise_bounded("y", dtype::f32, nan_ok.data(), r2, 0, b2).pass);
        const auto nan_bad = encode(dtype::f32, {std::nan(""), std::nan("")});
        const auto c = compare_elementwise_bounded("y", dtype::f32, nan_bad.data(), r2, 0, b2);
        CHECK_FALSE(c.pass);
        CHECK(c.stats.first.at(0).why == "nan/inf position");
    }
    SECTION("the bounds must match the elements") {
        const auto bytes = with_error(0);
        const std::vector<double> short_bound{1.0, 1.0};
        CHECK_THROWS_AS(compare_elementwise_bounded("y", dtype::f32, bytes.data(), ref, 0, short_bound), std::invalid_argument);
    }
}

TEST_CASE("ULP percentiles are exact", "[check][ulp]") {
    std::vector<double> ref(100, 1.0), got(100, 1.0);
    const double step = std::ldexp(1.0, -23);
    for (int i = 0; i < 10; ++i) got[i] = 1.0 + 2 * step;  // 10% at 2 ulp
    got[0] = 1.0 + 5000 * step;                              // one far outlier
    const auto bytes = encode(dtype::f32, got);
    const auto c = compare_elementwise("y", dtype::f32, bytes.data(), ref, {1.0, 0.0, 1});
    CHECK(c.pass);
    CHECK(*c.stats.ulp_p50 == 0);
    CHECK(*c.stats.ulp_p99 == 2);
    CHECK(*c.stats.ulp_max == 5000);
}

TEST_CASE("integer outputs compare exactly and have no ULP statistics", "[check]") {
    const std::vector<double> ref{3, 1, 4};
    const auto ok = encode(dtype::i32, {3, 1, 4});
    const auto c = compare_elementwise("idx", dtype::i32, ok.data(), ref, {0, 0, 0});
    CHECK(c.pass);
    CHECK_FALSE(c.stats.ulp_max.has_value());
    const auto bad = encode(dtype::i32, {3, 2, 4});
    CHECK_FALSE(compare_elementwise("idx", dtype::i32, bad.data(), ref, {0, 0, 0}).pass);
}

TEST_CASE("the baseline-relative tolerance allows a stated multiple of the baseline's error", "[check][relative]") {
    const std::vector<double> ref{1.0, -2.0, 0.5, 3.0};
    auto with_error = [&](double e) {
        std::vector<double> got;
        for (double r : ref) got.push_back(r + e);
        const auto bytes = encode(dtype::f32, got);
        return compare_elementwise("o", dtype::f32, bytes.data(), ref, {1.0, 0, 1});
    };
    const output_check base = with_error(1e-3);
    REQUIRE(base.pass);
    const double rms = finite_rms(ref);

    // 1.9x the baseline's error: within 2x.
    output_check ok = with_error(1.9e-3);
    apply_relative_tolerance(ok, &base, 2.0, 1e-6, rms);
    CHECK(ok.pass);
    REQUIRE(ok.relative);
    CHECK(ok.relative->pass);
    CHECK(ok.relative->ratio_max_abs.value() == Catch::Approx(1.9).epsilon(1e-3));
    CHECK(ok.relative->allowed_max_abs.value() == Catch::Approx(2e-3 + 1e-6 * rms).epsilon(1e-3));

    // 3x the baseline's error: out of tolerance, with the numbers in the reason.
    output_check bad = with_error(3e-3);
    apply_relative_tolerance(bad, &base, 2.0, 1e-6, rms);
    CHECK_FALSE(bad.pass);
    CHECK_FALSE(bad.relative->pass);
    CHECK(bad.reason.find("out of tolerance relative to the baseline") != std::string::npos);

    // The absolute term admits a kernel when the baseline happens to be exact.
    const output_check exact = with_error(0);
    output_check tiny = with_error(1e-7);
    apply_relative_tolerance(tiny, &exact, 2.0, 1e-6, rms);
    CHECK(tiny.pass);
    CHECK_FALSE(tiny.relative->ratio_max_abs);  // the baseline's error is 0: no ratio

    // No baseline, or a failed baseline: the check cannot be made, and that fails.
    output_check orphan = with_error(0);
    apply_relative_tolerance(orphan, nullptr, 2.0, 1e-6, rms);
    CHECK_FALSE(orphan.pass);
    CHECK(orphan.reason.find("could not be checked") != std::string::npos);
    output_check failed_base = with_error(1e-3);
    failed_base.pass = false;
    output_check judged = with_error(0);
    apply_relative_tolerance(judged, &failed_base, 2.0, 1e-6, rms);
    CHECK_FALSE(judged.pass);

    // A check that names the output's magnitude: both terms scale with it instead of rms(ref),
    // the rel L2 one as the same allowance on the error's RMS (atol_scale * m / rms(ref)).
    output_check scaled = with_error(3e-3);
    scaled.relative_magnitude = 2000.0;
    apply_relative_tolerance(scaled, &base, 2.0, 1e-6, rms);
    REQUIRE(scaled.relative);
    CHECK(scaled.relative->abs_term == Catch::Approx(2e-3));
    CHECK(scaled.relative->rel_l2_term == Catch::Approx(2e-3 / rms));
    CHECK(scaled.pass);  // 3e-3 <= 2 x 1e-3 + 2e-3
    output_check scaled_bad = with_error(4.5e-3);
    scaled_bad.relative_magnitude = 2000.0;
    apply_relative_tolerance(scaled_bad, &base, 2.0, 1e-6, rms);
    CHECK_FALSE(scaled_bad.pass);
    CHECK(ok.relative->rel_l2_term == 1e-6);  // the default: atol_scale itself
}
