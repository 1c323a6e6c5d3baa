#include "harness/runner.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

using namespace fusebench;

namespace {

guard_rates h100_like() {
    guard_rates r;
    r.read_gbps = rate_with_source{3200, "measured: read_gbps"};
    r.write_gbps = rate_with_source{3000, "measured: write_gbps"};
    r.l2_bytes = 50u << 20;
    r.compute_tflops[compute_unit::tensor_bf16] = {1070, "theoretical"};
    r.compute_tflops[compute_unit::fp32] = {67, "theoretical"};
    r.compute_tflops[compute_unit::any] = {1070, "theoretical"};
    return r;
}

}  // namespace

TEST_CASE("the guard's floor adds the read and write terms, less one L2 of writes", "[runner][sol]") {
    const guard_rates r = h100_like();
    // SwiGLU 4096 x 14336 bf16: 234.9 MB read, 117.4 MB written.
    const double in = 2 * 4096.0 * 14336 * 2, out = 4096.0 * 14336 * 2;
    const traffic_model m{in, out, 4096.0 * 14336 * 4};
    const physical_floor f = compute_physical_floor(m, in, out, r);
    REQUIRE(f.floor_us.has_value());
    CHECK(f.bound == "memory");
    CHECK(f.read_bytes == in);
    CHECK(f.write_bytes == out);
    CHECK(f.l2_write_allowance == static_cast<double>(50u << 20));
    CHECK_THAT(*f.read_term_us, Catch::Matchers::WithinRel(in / 3200e9 * 1e6, 1e-12));
    CHECK_THAT(*f.write_term_us, Catch::Matchers::WithinRel((out - (50u << 20)) / 3000e9 * 1e6, 1e-12));
    CHECK_THAT(*f.floor_us, Catch::Matchers::WithinRel(*f.read_term_us + *f.write_term_us, 1e-12));
    // The false failure of issue 16: fused_vec at 112.42 us on an H100 was flagged against the
    // copy floor (118.55 us). Against the physical floor (about 95.7 us) it is well clear, while
    // the unreset-queue mutant (8.4 us) still fails.
    CHECK_FALSE(speed_of_light_violation(112.42, f, cache_mode::cold).has_value());
    const auto why = speed_of_light_violation(8.38, f, cache_mode::cold);
    REQUIRE(why.has_value());
    CHECK(why->find("faster than physics") != std::string::npos);
    CHECK(why->find("memory bound") != std::string::npos);
    // Just above and below slack x floor.
    CHECK_FALSE(speed_of_light_violation(speed_of_light_slack * *f.floor_us * 1.001, f, cache_mode::cold).has_value());
    CHECK(speed_of_light_violation(speed_of_light_slack * *f.floor_us * 0.999, f, cache_mode::cold).has_value());
    // Hot timing may run from L2: never judged.
    CHECK_FALSE(speed_of_light_violation(1.0, f, cache_mode::hot).has_value());
}

TEST_CASE("the guard counts reads up to the inputs' size and writes up to the outputs' size", "[runner][sol]") {
    const guard_rates r = h100_like();
    // An unfused baseline whose model counts its intermediate's round trip: 3 reads, 2 writes of
    // 100 MB tensors, of which 2 are inputs and 1 the output. The intermediate may stay in L2.
    const traffic_model naive{3e8, 2e8, 0};
    const physical_floor f = compute_physical_floor(naive, 2e8, 1e8, r);
    CHECK(f.read_bytes == 2e8);
    CHECK(f.write_bytes == 1e8);
    // A model below the tensors' size (a variant that legitimately skips an input) counts its own.
    const physical_floor g = compute_physical_floor({1e8, 1e8, 0}, 2e8, 1e8, r);
    CHECK(g.read_bytes == 1e8);
    // Writes within one L2 leave no write term.
    const physical_floor h = compute_physical_floor({1e8, 1e7, 0}, 1e8, 1e7, r);
    CHECK(h.l2_write_allowance == 1e7);
    CHECK(*h.write_term_us == 0);
    CHECK_THAT(*h.floor_us, Catch::Matchers::WithinRel(1e8 / 3200e9 * 1e6, 1e-12));
}

TEST_CASE("the guard's compute term divides by the peak of the model's unit", "[runner][sol]") {
    const guard_rates r = h100_like();
    traffic_model m{1e6, 1e6, 8e12};
    m.unit = compute_unit::tensor_bf16;
    const physical_floor f = compute_physical_floor(m, 1e6, 1e6, r);
    CHECK(f.bound == "compute");
    CHECK_THAT(*f.compute_us, Catch::Matchers::WithinRel(8e12 / 1070e12 * 1e6, 1e-12));
    CHECK(speed_of_light_violation(5000.0, f, cache_mode::cold).has_value());
    CHECK_FALSE(speed_of_light_violation(7500.0, f, cache_mode::cold).has_value());
    // The same flops on FP32 lanes take 16x longer.
    m.unit = compute_unit::fp32;
    CHECK(speed_of_light_violation(7500.0, compute_physical_floor(m, 1e6, 1e6, r), cache_mode::cold).has_value());
    // A unit without a known rate gives no compute term.
    m.unit = compute_unit::tensor_fp8;
    CHECK_FALSE(compute_physical_floor(m, 1e6, 1e6, r).compute_us.has_value());
}

TEST_CASE("without measured rates there is no floor and nothing to judge", "[runner][sol]") {
    const physical_floor f = compute_physical_floor({3e9, 1e9, 0}, 3e9, 1e9, guard_rates{});
    CHECK_FALSE(f.floor_us.has_value());
    CHECK_FALSE(f.null_reason.empty());
    CHECK_FALSE(speed_of_light_violation(1.0, f, cache_mode::cold).has_value());
}

TEST_CASE("guard rates come from the run's ceilings, theoretical peaks first for compute", "[runner][sol]") {
    const nlohmann::json ceilings = {
        {"copy_gbps", {{"value", 3000.0}}},
        {"read_gbps", {{"value", 3250.0}}},
        {"write_gbps", {{"value", 3100.0}}},
        {"bf16_tflops", {{"value", 700.0}}},
        {"fp16_tflops", {{"value", nullptr}}},
        {"fp32_tflops", {{"value", 50.0}}},
        {"theoretical", {{"tensor_16bit_tflops", 1070.5}, {"fp32_tflops", nullptr}, {"tensor_fp8_tflops", nullptr}}}};
    const guard_rates r = guard_rates_from_ceilings(ceilings, 50u << 20);
    REQUIRE(r.read_gbps.has_value());
    CHECK(r.read_gbps->value == 3250.0);
    CHECK(r.write_gbps->value == 3100.0);
    CHECK(r.compute_tflops.at(compute_unit::tensor_bf16).value == 1070.5);
    CHECK(r.compute_tflops.at(compute_unit::tensor_bf16).source.find("theoretical") == 0);
    CHECK(r.compute_tflops.at(compute_unit::fp32).value == 50.0);  // measured: no theoretical value
    CHECK(r.compute_tflops.at(compute_unit::any).value == 1070.5);
    CHECK(r.compute_tflops.count(compute_unit::tensor_fp8) == 0);
    // TF32 from the theoretical 16-bit peak only: half of it; never in the measured ceilings.
    CHECK(r.compute_tflops.at(compute_unit::tensor_tf32).value == 1070.5 / 2);
    CHECK(r.compute_tflops.at(compute_unit::tensor_tf32).source.find("theoretical") == 0);
    run_options o;
    apply_ceilings(o, ceilings, 50u << 20);
    CHECK(o.copy_gbps == 3000.0);
    CHECK(o.peak_tflops == 700.0);
    CHECK(o.measured_tflops.at(compute_unit::fp32) == 50.0);
    CHECK(o.measured_tflops.count(compute_unit::tensor_fp16) == 0);
    CHECK(o.measured_tflops.count(compute_unit::tensor_tf32) == 0);
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
