// Figures beside a verdict: agreement of two arrays, and how the report carries them.
#include "harness/check.hpp"
#include "harness/report.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace fusebench;

TEST_CASE("agreement figures: rel L2, max abs, cosine and correlation over finite pairs", "[check][figures]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> want{1, 2, 3, 4, nan};
    const std::vector<double> got{1, 2, 3, 5, 7};
    const auto f = agreement_figures(got, want, "quant_", "test");
    CHECK(f.at("quant_rel_l2").value == Catch::Approx(1.0 / std::sqrt(30.0)));
    CHECK(f.at("quant_max_abs").value == 1.0);
    CHECK(f.at("quant_cosine").value == Catch::Approx(34.0 / std::sqrt(30.0 * 39.0)));
    CHECK(f.at("quant_correlation").value > 0.98);
    CHECK(f.at("quant_correlation").value < 1.0);
    CHECK(f.at("quant_rel_l2").meaning.find("test") != std::string::npos);
    // Identical arrays: 0 error, cosine and correlation 1; a constant array has no correlation.
    const auto same = agreement_figures(want, want, "", "same");
    CHECK(same.at("rel_l2").value == 0.0);
    CHECK(same.at("cosine").value == Catch::Approx(1.0));
    const std::vector<double> flat{2, 2, 2};
    CHECK(std::isnan(agreement_figures(flat, flat, "", "flat").at("correlation").value));
    CHECK(std::isnan(agreement_figures({}, {}, "", "none").at("max_abs").value));
}

TEST_CASE("the report carries an output's figures, non-finite values as strings", "[report][figures]") {
    variant_result r;
    r.suite = "s";
    r.variant = "v";
    r.result = outcome::pass;
    correctness_block cb;
    output_check oc;
    oc.output = "d";
    oc.figures = {{"quant_rel_l2", {0.02, "quantization error"}}, {"quant_correlation", {std::nan(""), "undefined"}}};
    cb.outputs.push_back(oc);
    r.correctness = cb;
    const auto j = make_report(report_context{}, {r}, nlohmann::json::array());
    const auto& f = j["results"][0]["correctness"]["outputs"][0]["figures"];
    CHECK(f["quant_rel_l2"]["value"] == 0.02);
    CHECK(f["quant_rel_l2"]["meaning"] == "quantization error");
    CHECK(f["quant_correlation"]["value"] == "nan");
}
