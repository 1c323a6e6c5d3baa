#include "harness/runner.hpp"

#include <catch2/catch_test_macros.hpp>

#include <set>
#include <string>

using namespace fusebench;

TEST_CASE("the speed-of-light guard flags results faster than the measured floor", "[runner][sol]") {
    run_options o;
    o.copy_gbps = 4000;
    o.read_gbps = 4500;
    o.peak_tflops = 800;
    const std::size_t l2 = 50u << 20;
    const traffic_model m{2e9, 1e9, 0};  // 3 GB: floor 3e9 / 4.5e12 = 666.7 us
    CHECK_FALSE(speed_of_light_violation(700.0, m, cache_mode::cold, l2, o).has_value());
    CHECK_FALSE(speed_of_light_violation(640.0, m, cache_mode::cold, l2, o).has_value());  // within 5%
    const auto why = speed_of_light_violation(300.0, m, cache_mode::cold, l2, o);
    REQUIRE(why.has_value());
    CHECK(why->find("faster than physics") != std::string::npos);
    // Hot mode may legitimately run from L2; small footprints may be absorbed by L2 write-back.
    CHECK_FALSE(speed_of_light_violation(300.0, m, cache_mode::hot, l2, o).has_value());
    CHECK_FALSE(speed_of_light_violation(1.0, {1e6, 1e6, 0}, cache_mode::cold, l2, o).has_value());
    // Compute floor: 8e12 flops at 800 TFLOP/s take 10 ms.
    CHECK(speed_of_light_violation(5000.0, {0, 0, 8e12}, cache_mode::cold, l2, o).has_value());
    CHECK_FALSE(speed_of_light_violation(10000.0, {0, 0, 8e12}, cache_mode::cold, l2, o).has_value());
    // Unknown ceilings: nothing to judge against.
    CHECK_FALSE(speed_of_light_violation(1.0, m, cache_mode::cold, l2, run_options{}).has_value());
}

#include "suites/suites.hpp"

TEST_CASE("shards are disjoint and cover the selection", "[runner][shard]") {
    registry reg;
    register_glu(reg);
    selection_filter all;
    all.suites = {"glu"};
    const auto full = select_work(reg, all);
    std::size_t total = 0;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < 3; ++i) {
        selection_filter f = all;
        f.shard_index = i;
        f.shard_count = 3;
        for (const auto& item : select_work(reg, f)) {
            CHECK(seen.insert(item.c.name + "/" + std::string(dtype_name(item.c.type))).second);
            ++total;
        }
    }
    CHECK(total == full.size());
}

TEST_CASE("traffic reconciliation flags excess traffic and bytes below the model", "[runner][traffic]") {
    CHECK(classify_traffic(1.0) == "ok");
    CHECK(classify_traffic(1.15) == "ok");
    CHECK(classify_traffic(1.151) == "excess_traffic");
    CHECK(classify_traffic(2.45) == "excess_traffic");  // e.g. a softmax that re-reads its input
    CHECK(classify_traffic(0.9) == "ok");
    CHECK(classify_traffic(0.899) == "below_model");    // cache residency or skipped work
}
