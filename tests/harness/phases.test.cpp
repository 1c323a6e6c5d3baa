// Where the time goes: per-result phase times and the report's totals.
#include "harness/report.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

using namespace fusebench;

TEST_CASE("the report sums the results' phase times and adds the ceilings'", "[report][phases]") {
    report_context ctx;
    ctx.settings = {{"ceilings_seconds", 4.0}};
    std::vector<variant_result> rs(3);
    for (auto& r : rs) {
        r.suite = "glu";
        r.variant = "v";
        r.c.name = "1x1";
    }
    rs[0].phase_seconds = {{"generate_inputs", 1.5}, {"reference", 2.0}, {"verify", 0.25}, {"timing", 0.5}};
    rs[1].phase_seconds = {{"verify", 0.75}, {"timing", 1.5}, {"counters", 3.0}};
    // rs[2]: not run, no phases
    const auto j = make_report(ctx, rs, nlohmann::json::array());
    CHECK(j["results"][0]["phase_seconds"]["reference"].get<double>() == Catch::Approx(2.0));
    CHECK_FALSE(j["results"][2].contains("phase_seconds"));
    const auto& p = j["phase_seconds"];
    CHECK(p["verify"].get<double>() == Catch::Approx(1.0));
    CHECK(p["timing"].get<double>() == Catch::Approx(2.0));
    CHECK(p["counters"].get<double>() == Catch::Approx(3.0));
    CHECK(p["generate_inputs"].get<double>() == Catch::Approx(1.5));
    CHECK(p["ceilings"].get<double>() == Catch::Approx(4.0));
}
