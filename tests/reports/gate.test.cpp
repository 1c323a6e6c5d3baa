// The regression gate on synthetic reports whose true change is known.
#include "reports/compare_output.hpp"
#include "reports/gate.hpp"
#include "reports/synthetic_report.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace fusebench;
using namespace fusebench::reports;
using fusebench::test::make_report;
using fusebench::test::samples_around;
using fusebench::test::synth_device;
using fusebench::test::synth_result;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

policy test_policy() {
    policy p;
    p.source = "test policy";
    return p;
}

loaded_report as_report(const nlohmann::json& doc, const std::string& name) { return parse_report(doc, name); }

comparison compare_docs(const nlohmann::json& b, const nlohmann::json& n, const policy& p = test_policy()) {
    const auto base = as_report(b, "base.json");
    const auto now = as_report(n, "new.json");
    return compare_reports(base, now, p);
}

const pair_result& only_pair(const comparison& c) {
    REQUIRE(c.pairs.size() == 1);
    return c.pairs.front();
}

synth_result timed(double median_us, double noise) {
    synth_result r;
    r.median_us = median_us;
    r.noise = noise;
    return r;
}

synth_result sampled(double median_us, double rel_sd, std::size_t n, std::uint64_t seed) {
    synth_result r;
    r.samples = samples_around(median_us, rel_sd, n, seed);
    return r;
}

}  // namespace

TEST_CASE("a real 10% slowdown is SLOWER and fails the gate", "[reports][gate]") {
    const bool raw = GENERATE(true, false);
    CAPTURE(raw);
    const synth_result b = raw ? sampled(100, 0.01, 60, 1) : timed(100, 0.003);
    const synth_result n = raw ? sampled(110, 0.01, 60, 2) : timed(110, 0.003);
    const auto c = compare_docs(make_report({b}), make_report({n}));
    const auto& p = only_pair(c);
    CHECK(p.v == verdict::slower);
    CHECK(p.interval->method == (raw ? "bootstrap" : "noise"));
    CHECK_THAT(p.interval->ratio, WithinRel(1.10, 1e-9));
    CHECK(p.interval->lo > 1.0);
    CHECK(c.exit_code == 1);
    CHECK(c.regressions == 1);
}

TEST_CASE("2% jitter with 3% noise is SAME or INCONCLUSIVE, never SLOWER", "[reports][gate]") {
    SECTION("reported noise only") {
        const auto c = compare_docs(make_report({timed(100, 0.03)}), make_report({timed(102, 0.03)}));
        const auto& p = only_pair(c);
        CHECK((p.v == verdict::same || p.v == verdict::inconclusive));
        CHECK(c.exit_code == 0);
        CHECK_THAT(p.note, ContainsSubstring("samples would settle it"));
    }
    SECTION("raw samples, many independent draws") {
        // 20 samples with a 10.7% spread give a median noise of about 3%.
        int slower = 0, same_or_inconclusive = 0;
        for (std::uint64_t s = 0; s < 60; ++s) {
            const auto c = compare_docs(make_report({sampled(100, 0.107, 20, 1000 + s)}), make_report({sampled(102, 0.107, 20, 5000 + s)}));
            const auto& p = only_pair(c);
            slower += p.v == verdict::slower;
            same_or_inconclusive += p.v == verdict::same || p.v == verdict::inconclusive;
            CHECK(c.exit_code == 0);
        }
        CHECK(slower == 0);
        CHECK(same_or_inconclusive == 60);
    }
}

TEST_CASE("A/A: identical timings are SAME", "[reports][gate]") {
    const bool raw = GENERATE(true, false);
    const synth_result r = raw ? sampled(80, 0.005, 40, 7) : timed(80, 0.004);
    const auto c = compare_docs(make_report({r}), make_report({r}));
    CHECK(only_pair(c).v == verdict::same);
    CHECK(c.exit_code == 0);
}

TEST_CASE("an improvement is FASTER and passes", "[reports][gate]") {
    const bool raw = GENERATE(true, false);
    const synth_result b = raw ? sampled(100, 0.01, 60, 3) : timed(100, 0.003);
    const synth_result n = raw ? sampled(80, 0.01, 60, 4) : timed(80, 0.003);
    const auto c = compare_docs(make_report({b}), make_report({n}));
    CHECK(only_pair(c).v == verdict::faster);
    CHECK(c.exit_code == 0);
    CHECK(c.regressions == 0);
}

TEST_CASE("a slowdown inside the threshold is not SLOWER", "[reports][gate]") {
    // 3% slower, clearly beyond the noise, but under the 5% threshold.
    const auto c = compare_docs(make_report({timed(100, 0.001)}), make_report({timed(103, 0.001)}));
    CHECK(only_pair(c).v == verdict::same);
    CHECK(c.exit_code == 0);
    // The same change against a 2% threshold for this variant fails.
    policy p = test_policy();
    p.overrides["glu/fused_vec"] = 0.02;
    const auto strict = compare_docs(make_report({timed(100, 0.001)}), make_report({timed(103, 0.001)}), p);
    CHECK(only_pair(strict).v == verdict::slower);
    CHECK(only_pair(strict).threshold == 0.02);
    CHECK(strict.exit_code == 1);
}

TEST_CASE("correctness transitions", "[reports][gate]") {
    synth_result pass = timed(100, 0.003);
    synth_result fail = pass;
    fail.outcome = "fail";
    fail.reason = "3 of 58720256 elements out of tolerance";
    synth_result error = pass;
    error.outcome = "error";
    error.reason = "glu_vec_kernel: cudaErrorIllegalAddress";

    SECTION("pass -> fail and pass -> error are CORRECTNESS REGRESSION") {
        const auto& now = GENERATE_REF(as<synth_result>{}, fail, error);
        const auto c = compare_docs(make_report({pass}), make_report({now}));
        CHECK(only_pair(c).v == verdict::correctness_regression);
        CHECK_THAT(only_pair(c).note, ContainsSubstring(now.reason));
        CHECK(c.exit_code == 1);
    }
    SECTION("fail -> fail is STILL FAILING, fail -> pass is FIXED; neither fails the gate") {
        auto c = compare_docs(make_report({fail}), make_report({error}));
        CHECK(only_pair(c).v == verdict::still_failing);
        CHECK(c.exit_code == 0);
        c = compare_docs(make_report({fail}), make_report({pass}));
        CHECK(only_pair(c).v == verdict::fixed);
        CHECK(c.exit_code == 0);
    }
    SECTION("pass -> skipped is listed as SKIPPED, not a regression") {
        synth_result skipped = pass;
        skipped.outcome = "skipped";
        skipped.reason = "outside declared domain: hidden 4096 > 2048";
        const auto c = compare_docs(make_report({pass}), make_report({skipped}));
        CHECK(only_pair(c).v == verdict::skipped);
        CHECK_THAT(only_pair(c).note, ContainsSubstring("now skipped"));
        CHECK(notable(only_pair(c)));
        CHECK(c.exit_code == 0);
    }
}

TEST_CASE("missing and new results are listed", "[reports][gate]") {
    synth_result a = timed(100, 0.003);
    synth_result b = a;
    b.variant = "fused_scalar";
    synth_result n = a;
    n.variant = "fused_vec2";
    const auto c = compare_docs(make_report({a, b}), make_report({a, n}));
    REQUIRE(c.pairs.size() == 3);
    CHECK(c.pairs[0].v == verdict::same);
    CHECK(c.pairs[1].v == verdict::missing);
    CHECK(c.pairs[1].variant == "fused_scalar");
    CHECK(c.pairs[2].v == verdict::new_result);
    CHECK(c.pairs[2].variant == "fused_vec2");
    CHECK(c.exit_code == 0);
    const std::string text = format_compare_terminal(c, false);
    CHECK_THAT(text, ContainsSubstring("MISSING") && ContainsSubstring("fused_scalar") && ContainsSubstring("NEW"));

    policy strict = test_policy();
    strict.fail_on_missing = true;
    const auto c2 = compare_docs(make_report({a, b}), make_report({a, n}), strict);
    CHECK(c2.exit_code == 1);
}

TEST_CASE("untimed edge cases are NOT TIMED and stay quiet", "[reports][gate]") {
    synth_result r = timed(100, 0.003);
    r.timed = false;
    const auto c = compare_docs(make_report({r}), make_report({r}));
    CHECK(only_pair(c).v == verdict::not_timed);
    CHECK_FALSE(notable(only_pair(c)));
    CHECK_THAT(format_compare_terminal(c, false), ContainsSubstring("nothing changed"));
}

TEST_CASE("reports with nothing in common are bad input", "[reports][gate]") {
    synth_result a = timed(100, 0.003);
    synth_result b = a;
    b.suite = "rmsnorm";
    CHECK_THROWS_AS(compare_docs(make_report({a}), make_report({b})), bad_input);
}

TEST_CASE("different GPU models: efficiency side by side, never a regression", "[reports][gate]") {
    synth_device h100{"NVIDIA H100 80GB HBM3", "h100", "GPU-bbbbbbbb-0000-0000-0000-000000000002", 3000, 0.004};
    synth_device h200;  // 4200 GB/s
    SECTION("same efficiency, different times: SAME") {
        // 100 us at 3000 GB/s is the same fraction of the ceiling as 100*3000/4200 us at 4200 GB/s.
        const auto c = compare_docs(make_report({timed(100, 0.003)}, h100), make_report({timed(100 * 3000.0 / 4200, 0.003)}, h200));
        const auto& p = only_pair(c);
        CHECK(p.relation == device_relation::different_model);
        CHECK(p.basis == "efficiency");
        CHECK_THAT(p.interval->ratio, WithinRel(1.0, 1e-9));
        CHECK(p.v == verdict::same);
        CHECK_THAT(c.relation, ContainsSubstring("never fails"));
        const std::string md = format_compare_markdown(c);
        CHECK_THAT(md, ContainsSubstring("NVIDIA H100 80GB HBM3") && ContainsSubstring("NVIDIA H200"));
    }
    SECTION("the new GPU is less efficient: LOWER EFFICIENCY, exit 0") {
        const auto c = compare_docs(make_report({timed(100, 0.003)}, h100), make_report({timed(100, 0.003)}, h200));
        CHECK(only_pair(c).v == verdict::lower_efficiency);
        CHECK(c.exit_code == 0);
        const std::string text = format_compare_terminal(c, false);
        // Both absolute times are shown.
        CHECK_THAT(text, ContainsSubstring("100.0 us") && ContainsSubstring("LOWER EFFICIENCY"));
    }
    SECTION("a correctness regression still fails across GPUs") {
        synth_result f = timed(100, 0.003);
        f.outcome = "fail";
        f.reason = "mismatch";
        const auto c = compare_docs(make_report({timed(100, 0.003)}, h100), make_report({f}, h200));
        CHECK(only_pair(c).v == verdict::correctness_regression);
        CHECK(c.exit_code == 1);
    }
}

TEST_CASE("the same model on another board is compared by efficiency and gated", "[reports][gate]") {
    synth_device board_a;
    synth_device board_b = board_a;
    board_b.uuid = "GPU-cccccccc-0000-0000-0000-000000000003";
    board_b.copy_gbps = 4000;  // a board with 5% less bandwidth
    SECTION("slower only by the board's bandwidth: SAME") {
        const auto c = compare_docs(make_report({timed(100, 0.003)}, board_a), make_report({timed(105, 0.003)}, board_b));
        const auto& p = only_pair(c);
        CHECK(p.relation == device_relation::same_model);
        CHECK(p.basis == "efficiency");
        CHECK(p.v == verdict::same);
        CHECK(c.exit_code == 0);
    }
    SECTION("10% less efficient on top of the board: SLOWER") {
        const auto c = compare_docs(make_report({timed(100, 0.003)}, board_a), make_report({timed(105 * 1.10, 0.003)}, board_b));
        CHECK(only_pair(c).v == verdict::slower);
        CHECK(c.exit_code == 1);
    }
}

TEST_CASE("across boards a ceiling is uncertain by its median's standard error, not by its spread", "[reports][gate]") {
    // The case of the H200 baselines at ec2ed78 and 57a0087 (same kernels): one board's copy ceiling
    // read with a 1.5% spread over 20 samples. Its median is uncertain by sqrt(pi/2) 1.5% / sqrt(20)
    // = 0.42%, so a result 2% apart in efficiency with 0.3% noise is SAME; judged by the spread
    // (3 x 1.55% added to the interval) it would be INCONCLUSIVE, and so it stays where the ceiling
    // gives no sample count.
    synth_device board_a;
    synth_device board_b = board_a;
    board_b.uuid = "GPU-cccccccc-0000-0000-0000-000000000003";
    board_b.copy_noise = 0.015;
    const auto base = make_report({timed(100, 0.003)}, board_a);
    SECTION("20 samples: the median's standard error, SAME") {
        const auto c = compare_docs(base, make_report({timed(102, 0.003)}, board_b));
        const auto& p = only_pair(c);
        CHECK(p.basis == "efficiency");
        CHECK(p.v == verdict::same);
        // Time interval +-3 x 0.3% x sqrt(2) in log, widened by 3 x sqrt(pi/2) x sqrt(0.4%^2 + 1.5%^2) / sqrt(20).
        const double t = 3 * 0.003 * std::sqrt(2.0), e = 3 * std::sqrt(std::acos(-1.0) / 2) * std::hypot(0.004, 0.015) / std::sqrt(20.0);
        CHECK_THAT(std::log(p.interval->hi / p.interval->ratio), WithinRel(std::hypot(t, e), 0.05));
    }
    SECTION("the same reading without a sample count: the spread, INCONCLUSIVE") {
        board_b.copy_samples = 0;
        const auto c = compare_docs(base, make_report({timed(102, 0.003)}, board_b));
        CHECK(only_pair(c).v == verdict::inconclusive);
    }
    SECTION("10% less efficient is still SLOWER") {
        const auto c = compare_docs(base, make_report({timed(110, 0.003)}, board_b));
        CHECK(only_pair(c).v == verdict::slower);
        CHECK(c.exit_code == 1);
    }
}

TEST_CASE("across boards, FP8 results are judged against the FP8 ceiling, and not between ceilings timed differently",
          "[reports][gate]") {
    // An FP8 GEMM at the same time on two boards of one model, judged by its efficiency against each
    // run's fp8_tflops (traffic_model.compute_unit tensor_fp8). The back-to-back FP8 ceiling of the
    // H100 baseline at f8734bc read 1269 TFLOP/s (SM clock 1407 MHz after it); the burst schedule of
    // 1ea5da5 read 1389 on another H100: the same kernel would look 8.6% less efficient.
    synth_device board_a;
    synth_device board_b = board_a;
    board_b.uuid = "GPU-cccccccc-0000-0000-0000-000000000003";
    auto fp8_report = [](const synth_device& d, double us, double ceiling, const std::string& method, double ceiling_noise) {
        auto j = make_report({timed(us, 0.003)}, d);
        const double flops = 2.0 * 4096 * 576 * 7168;
        auto& r = j["results"][0];
        r["traffic_model"]["flops"] = flops;
        r["traffic_model"]["compute_unit"] = "tensor_fp8";
        r["derived"]["bound"] = "compute";
        r["derived"]["achieved_tflops"] = flops / (us * 1e-6) * 1e-12;
        r["derived"]["pct_of_ceiling"] = 100.0 * flops / (us * 1e-6) * 1e-12 / ceiling;
        j["ceilings"]["fp8_tflops"] = {{"value", ceiling}, {"unit", "TFLOP/s"}, {"method", method}, {"noise", ceiling_noise}, {"samples", 10}};
        return j;
    };
    const std::string bursts = "fp8 e4m3 x e4m3 -> bf16 cublasLtMatmul 8192^3 ..., 10 bursts of 5 launches each after a 200 ms idle gap";
    const std::string back_to_back = "fp8 e4m3 x e4m3 -> bf16 cublasLtMatmul 8192^3 (TN, ...), 2 n^3 / median time";
    SECTION("both ceilings in bursts: the FP8 ceiling's own uncertainty widens the interval, and 10% is LOWER") {
        // A noisy FP8 ceiling (3% over 10 samples) beside a quiet copy ceiling: the interval is widened
        // by the FP8 one, the ceiling the result was judged against.
        const auto c = compare_docs(fp8_report(board_a, 35.7, 1390, bursts, 0.03), fp8_report(board_b, 35.7, 1390, bursts, 0.03));
        const auto& p = only_pair(c);
        CHECK(p.basis == "efficiency");
        CHECK(p.v == verdict::inconclusive);  // +-5.1%: the FP8 ceilings' uncertainty, not the copy ceiling's 0.1%
        const double t = 3 * 0.003 * std::sqrt(2.0), e = 3 * std::sqrt(std::acos(-1.0) / 2) * std::hypot(0.03, 0.03) / std::sqrt(10.0);
        CHECK_THAT(std::log(p.interval->hi / p.interval->ratio), WithinRel(std::hypot(t, e), 0.05));
        const auto slower = compare_docs(fp8_report(board_a, 35.7, 1390, bursts, 0.002), fp8_report(board_b, 35.7 * 1.10, 1390, bursts, 0.002));
        CHECK(only_pair(slower).v == verdict::slower);
        CHECK(slower.warnings.empty());
    }
    SECTION("one back to back, one in bursts: not judged, said once") {
        const auto c = compare_docs(fp8_report(board_a, 35.7, 1269, back_to_back, 0.002), fp8_report(board_b, 35.7, 1389, bursts, 0.002));
        const auto& p = only_pair(c);
        CHECK(p.basis == "efficiency");
        CHECK(p.v == verdict::inconclusive);
        CHECK_THAT(p.note, ContainsSubstring("fp8_tflops ceilings were timed differently (BASE back to back, NEW bursts after idle gaps)"));
        CHECK(c.exit_code == 0);
        REQUIRE(c.warnings.size() == 1);
        CHECK_THAT(c.warnings.front(), ContainsSubstring("tensor-core ceilings were timed differently"));
        // The header shows what each side's efficiencies were judged against.
        CHECK(c.efficiency_compared);
        const std::string text = format_compare_terminal(c, false);
        CHECK_THAT(text, ContainsSubstring("ceilings: BASE copy 4200 GB/s, bf16 800 / fp16 - / fp8 1269 TFLOP/s (back to back) | "
                                           "NEW copy 4200 GB/s, bf16 800 / fp16 - / fp8 1389 TFLOP/s (bursts after idle gaps)"));
        CHECK_THAT(format_compare_markdown(c), ContainsSubstring("| ceilings | copy 4200 GB/s"));
        CHECK(compare_to_json(c, test_policy())["base"]["ceilings"][0] == "copy 4200 GB/s, bf16 800 / fp16 - / fp8 1269 TFLOP/s (back to back)");
    }
    SECTION("on one board the times are compared and the ceilings do not matter") {
        const auto c = compare_docs(fp8_report(board_a, 35.7, 1269, back_to_back, 0.002), fp8_report(board_a, 35.7 * 1.10, 1389, bursts, 0.002));
        CHECK(only_pair(c).basis == "time");
        CHECK(only_pair(c).v == verdict::slower);
        CHECK_FALSE(c.efficiency_compared);
        CHECK_THAT(format_compare_terminal(c, false), !ContainsSubstring("ceilings: BASE"));
    }
}

TEST_CASE("the bootstrap is reproducible and its interval behaves", "[reports][gate]") {
    const auto s = samples_around(50, 0.02, 40, 11);
    const auto a = bootstrap_median_ci(s, 4000, 0.997, 42);
    const auto b = bootstrap_median_ci(s, 4000, 0.997, 42);
    CHECK(a == b);
    CHECK(a.first < 50.0);
    CHECK(a.second > 50.0);
    const auto more = bootstrap_median_ci(samples_around(50, 0.02, 400, 11), 4000, 0.997, 42);
    CHECK(more.second - more.first < a.second - a.first);

    const test::synth_result base = sampled(100, 0.01, 60, 1), now = sampled(103, 0.01, 60, 2);
    timing_side tb{100, 0, base.samples}, tn{103, 0, now.samples};
    const policy p = test_policy();
    const auto i1 = time_ratio(tb, tn, p, "glu/x/bf16/v");
    const auto i2 = time_ratio(tb, tn, p, "glu/x/bf16/v");
    CHECK(i1.lo == i2.lo);
    CHECK(i1.hi == i2.hi);
    CHECK(i1.method == "bootstrap");
    CHECK(i1.lo <= i1.ratio);
    CHECK(i1.ratio <= i1.hi);
}

TEST_CASE("classify follows the documented rule", "[reports][gate]") {
    const double t = 0.05;
    auto iv = [](double r, double lo, double hi) { return ratio_interval{r, lo, hi, "noise"}; };
    CHECK(classify(iv(1.10, 1.01, 1.20), t) == verdict::slower);
    CHECK(classify(iv(1.10, 0.99, 1.20), t) == verdict::inconclusive);  // beyond t but within the noise
    CHECK(classify(iv(1.04, 1.02, 1.06), t) == verdict::inconclusive);  // a real change that may pass t
    CHECK(classify(iv(1.04, 1.02, 1.049), t) == verdict::same);
    CHECK(classify(iv(0.90, 0.85, 0.99), t) == verdict::faster);
    CHECK(classify(iv(0.90, 0.85, 1.01), t) == verdict::inconclusive);
    CHECK(classify(iv(1.0, 1.0 / 1.05, 1.05), t) == verdict::same);
}

TEST_CASE("policy files: precedence and bad policies", "[reports][gate]") {
    const auto p = parse_policy(nlohmann::json::parse(R"({"fusebench_policy": 1, "threshold": 0.04,
        "overrides": {"rmsnorm": 0.08, "rmsnorm/fused_warp": 0.12}, "noise_z": 2.5,
        "bootstrap": {"resamples": 1000, "confidence": 0.99, "seed": 5}, "fail_on_missing": true})"),
                                "p.json");
    CHECK(p.threshold_for("glu", "fused_vec") == 0.04);
    CHECK(p.threshold_for("rmsnorm", "naive") == 0.08);
    CHECK(p.threshold_for("rmsnorm", "fused_warp") == 0.12);
    CHECK(p.noise_z == 2.5);
    CHECK(p.bootstrap_resamples == 1000);
    CHECK(p.bootstrap_seed == 5);
    CHECK(p.fail_on_missing);

    const std::string bad = GENERATE(as<std::string>{}, R"({"threshold": 0.05})", R"({"fusebench_policy": 1, "treshold": 0.05})",
                                     R"({"fusebench_policy": 1, "threshold": -1})", R"({"fusebench_policy": 1, "threshold": "5%"})",
                                     R"({"fusebench_policy": 1, "overrides": {"a/b/c": 0.1}})",
                                     R"({"fusebench_policy": 1, "bootstrap": {"resamples": 5}})", R"([1, 2])",
                                     R"({"fusebench_policy": 1, "cross_board_gate_reference_rows": "yes"})");
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_policy(nlohmann::json::parse(bad), "p.json"), bad_input);
}

TEST_CASE("the project's policy file parses", "[reports][gate]") {
    const auto p = load_policy(std::string(FUSEBENCH_SOURCE_DIR) + "/reports/policy.json");
    CHECK(p.threshold == 0.05);
    CHECK(p.noise_z == 3.0);
    CHECK_FALSE(p.cross_board_gate_reference_rows);
    CHECK(parse_policy(nlohmann::json::parse(R"({"fusebench_policy": 1, "cross_board_gate_reference_rows": true})"), "p.json")
              .cross_board_gate_reference_rows);
}

TEST_CASE("across boards of one model, results far below their ceiling are not gated", "[reports][gate]") {
    synth_device board_a;
    synth_device board_b = board_a;
    board_b.uuid = "GPU-dddddddd-0000-0000-0000-000000000004";
    // A latency-bound kernel: 10 us for 4 MB, about 10% of the copy ceiling, 20% slower on board B.
    synth_result small_a = timed(10, 0.003), small_b = timed(12, 0.003);
    small_a.model_bytes = small_b.model_bytes = 4.2e6;
    SECTION("another board: INCONCLUSIVE with the reason, exit 0") {
        const auto c = compare_docs(make_report({small_a}, board_a), make_report({small_b}, board_b));
        const auto& p = only_pair(c);
        CHECK(p.relation == device_relation::same_model);
        CHECK(p.v == verdict::inconclusive);
        CHECK(p.note.find("not gated across boards") != std::string::npos);
        CHECK(c.exit_code == 0);
    }
    SECTION("the same board: still SLOWER") {
        const auto c = compare_docs(make_report({small_a}, board_a), make_report({small_b}, board_a));
        CHECK(only_pair(c).v == verdict::slower);
        CHECK(c.exit_code == 1);
    }
    SECTION("near the ceiling the cross-board gate stays active") {
        const auto c = compare_docs(make_report({timed(100, 0.003)}, board_a), make_report({timed(120, 0.003)}, board_b));
        CHECK(only_pair(c).v == verdict::slower);
    }
}

TEST_CASE("across boards of one model, baseline and peer rows are not gated; fused rows are", "[reports][gate]") {
    synth_device board_a;
    synth_device board_b = board_a;
    board_b.uuid = "GPU-eeeeeeee-0000-0000-0000-000000000005";
    // Near the ceiling (100 us for the default traffic model), 10% slower on board B: above the
    // latency-bound rule, so only the role decides.
    auto row = [](double median_us, const std::string& role) {
        synth_result r = timed(median_us, 0.003);
        r.role = role;
        r.variant = role == "fused" ? "fused_vec" : role == "baseline" ? "naive" : "vendor";
        return r;
    };
    const std::string role = GENERATE(as<std::string>{}, "baseline", "peer");
    CAPTURE(role);
    SECTION("another board: the reference row is INCONCLUSIVE with the reason, exit 0") {
        const auto c = compare_docs(make_report({row(100, role)}, board_a), make_report({row(110, role)}, board_b));
        const auto& p = only_pair(c);
        CHECK(p.relation == device_relation::same_model);
        CHECK(p.v == verdict::inconclusive);
        CHECK(p.note.find("not gated across boards: a " + role + " row") != std::string::npos);
        CHECK(c.exit_code == 0);
        CHECK(c.relation.find("nor for baseline and peer rows") != std::string::npos);
    }
    SECTION("another board: a fused row is still SLOWER") {
        const auto c = compare_docs(make_report({row(100, "fused")}, board_a), make_report({row(110, "fused")}, board_b));
        CHECK(only_pair(c).v == verdict::slower);
        CHECK(c.exit_code == 1);
    }
    SECTION("the same board: the reference row is SLOWER") {
        const auto c = compare_docs(make_report({row(100, role)}, board_a), make_report({row(110, role)}, board_a));
        CHECK(only_pair(c).v == verdict::slower);
        CHECK(c.exit_code == 1);
    }
    SECTION("the policy can gate reference rows across boards too") {
        policy strict;
        strict.cross_board_gate_reference_rows = true;
        const auto c = compare_docs(make_report({row(100, role)}, board_a), make_report({row(110, role)}, board_b), strict);
        CHECK(only_pair(c).v == verdict::slower);
        CHECK(c.relation.find("nor for baseline") == std::string::npos);
    }
}

TEST_CASE("a launch of several kernels is not gated between gated and ungated timing", "[reports][gate]") {
    // BASE made before the launch gate (no settings.timing_launch_gate), NEW with it.
    auto multi = [](double median_us, std::optional<std::size_t> kernels) {
        synth_result r = timed(median_us, 0.003);
        r.variant = kernels ? "naive_" + std::to_string(*kernels) : "events";
        return r;
    };
    auto with_kernels = [](nlohmann::json doc, bool gated) {
        if (gated) doc["settings"]["timing_launch_gate"] = true;
        for (auto& r : doc["results"]) {
            const std::string v = r["variant"];
            if (v.rfind("naive_", 0) != 0) continue;
            const std::size_t k = std::stoul(v.substr(6));
            r["timing"]["cupti"] = {{"sum_of_durations", nullptr}, {"event_cross_check", nullptr},
                                    {"kernels_per_sample", k}, {"kernel_names", std::vector<std::string>(k, "kernel")},
                                    {"kernel_set_consistent", true}, {"inconsistency", nullptr}, {"dropped_records", 0}};
        }
        return doc;
    };
    SECTION("different gating: multi-kernel and unknown counts are INCONCLUSIVE, one kernel is still gated") {
        const auto b = with_kernels(make_report({multi(100, 3), multi(100, 1), multi(100, std::nullopt)}), false);
        const auto n = with_kernels(make_report({multi(89, 3), multi(112, 1), multi(112, std::nullopt)}), true);
        const auto c = compare_docs(b, n);
        REQUIRE(c.pairs.size() == 3);
        CHECK(c.pairs[0].v == verdict::inconclusive);
        CHECK_THAT(c.pairs[0].note, ContainsSubstring("3 kernels per launch"));
        CHECK_THAT(c.pairs[0].note, ContainsSubstring("faster by the interval, but not judged"));
        CHECK(c.pairs[1].v == verdict::slower);
        CHECK(c.pairs[2].v == verdict::inconclusive);
        CHECK_THAT(c.pairs[2].note, ContainsSubstring("kernels per launch unknown"));
        CHECK(c.exit_code == 1);  // the one-kernel slowdown still fails the gate
        bool warned = false;
        for (const auto& w : c.warnings) warned = warned || w.find("BASE was timed without the launch gate") != std::string::npos;
        CHECK(warned);
    }
    SECTION("the same gating on both sides: a multi-kernel slowdown is SLOWER") {
        const bool gated = GENERATE(true, false);
        CAPTURE(gated);
        const auto c = compare_docs(with_kernels(make_report({multi(100, 3)}), gated),
                                    with_kernels(make_report({multi(112, 3)}), gated));
        CHECK(only_pair(c).v == verdict::slower);
        CHECK(c.warnings.empty());
    }
    SECTION("a report of c9adc8d says it in its results' method_reason") {
        auto n = with_kernels(make_report({multi(112, 3)}), false);
        n["results"][0]["timing"]["method_reason"] = "CUPTI activity records (KIND_KERNEL): ...; each sample's launch call "
                                                     "queued behind a stream gate, so ...";
        const auto c = compare_docs(with_kernels(make_report({multi(100, 3)}), true), n);
        CHECK(only_pair(c).v == verdict::slower);
    }
}

TEST_CASE("between GPU models, a launch of several kernels timed with and without the gate says so", "[reports][gate]") {
    synth_result r = timed(100, 0.003);
    r.variant = "naive";
    auto doc = [&](double median_us, bool gated, const synth_device& d) {
        r.median_us = median_us;
        auto j = make_report({r}, d);
        if (gated) j["settings"]["timing_launch_gate"] = true;
        j["results"][0]["timing"]["cupti"] = {{"sum_of_durations", nullptr}, {"event_cross_check", nullptr},
                                              {"kernels_per_sample", 2}, {"kernel_names", {"a", "b"}},
                                              {"kernel_set_consistent", true}, {"inconsistency", nullptr},
                                              {"dropped_records", 0}};
        return j;
    };
    synth_device h100;
    h100.name = "NVIDIA H100 80GB HBM3";
    h100.label = "h100";
    h100.uuid = "GPU-bbbbbbbb-0000-0000-0000-000000000002";
    h100.copy_gbps = 3000;
    const auto c = compare_docs(doc(100, true, h100), doc(100, false, synth_device{}));
    const auto& p = only_pair(c);
    CHECK(p.v == verdict::inconclusive);
    CHECK_THAT(p.note, ContainsSubstring("efficiency by the interval, but not judged: 2 kernels per launch"));
    CHECK(c.exit_code == 0);
}

namespace {

synth_result with_e2e(double kernel_us, double e2e_us, double e2e_noise = 0.005) {
    synth_result r = timed(kernel_us, 0.003);
    r.e2e_us = e2e_us;
    r.e2e_noise = e2e_noise;
    return r;
}

}  // namespace

TEST_CASE("host work added to the launcher is E2E SLOWER and fails the gate while the kernel time is SAME", "[reports][gate]") {
    // The H200 baseline at c94de34: a driver query in fused_stream's launcher, kernel 154 us both
    // times, e2e 160 -> 778 us.
    const auto c = compare_docs(make_report({with_e2e(154, 160.3)}), make_report({with_e2e(154, 778.5)}));
    const auto& p = only_pair(c);
    CHECK(p.v == verdict::e2e_slower);
    CHECK(fails_gate(p.v, test_policy()));
    CHECK(c.exit_code == 1);
    CHECK(c.regressions == 1);
    REQUIRE(p.e2e_interval);
    CHECK_THAT(p.e2e_interval->ratio, WithinRel(778.5 / 160.3, 1e-9));
    CHECK_THAT(p.note, ContainsSubstring("kernel time SAME") && ContainsSubstring("end-to-end") && ContainsSubstring("+618.2 us beyond"));
    const std::string text = format_compare_terminal(c, false);
    CHECK_THAT(text, ContainsSubstring("E2E SLOWER"));
    CHECK_THAT(format_compare_markdown(c), ContainsSubstring("E2E SLOWER"));
    const auto j = compare_to_json(c, test_policy());
    CHECK(j["results"][0]["verdict"] == "E2E SLOWER");
    CHECK(j["results"][0]["fails_gate"] == true);
    CHECK_THAT(j["results"][0]["e2e_ratio"].get<double>(), WithinRel(778.5 / 160.3, 1e-9));
    CHECK_THAT(format_compare_junit(c, test_policy()), ContainsSubstring("failures=\"1\""));
}

TEST_CASE("end-to-end changes under the policy's floor or threshold are not E2E SLOWER", "[reports][gate]") {
    SECTION("a tiny kernel's e2e 31% up by 3.6 us (host jitter across two hosts)") {
        const auto c = compare_docs(make_report({with_e2e(8, 11.5, 0.03)}), make_report({with_e2e(8, 15.1, 0.03)}));
        CHECK(only_pair(c).v == verdict::same);
        CHECK(c.exit_code == 0);
    }
    SECTION("+200 us on 1 ms is 20%, under the 25% threshold") {
        const auto c = compare_docs(make_report({with_e2e(900, 1000)}), make_report({with_e2e(900, 1200)}));
        CHECK(only_pair(c).v == verdict::same);
    }
    SECTION("+300 us on 1 ms is 30% and 300 us: E2E SLOWER") {
        const auto c = compare_docs(make_report({with_e2e(900, 1000)}), make_report({with_e2e(900, 1300)}));
        CHECK(only_pair(c).v == verdict::e2e_slower);
    }
    SECTION("+100 us beyond 25% but inside the noise: not decided") {
        const auto c = compare_docs(make_report({with_e2e(100, 200, 0.2)}), make_report({with_e2e(100, 300, 0.2)}));
        CHECK(only_pair(c).v == verdict::same);
    }
    SECTION("no e2e on one side: the kernel verdict alone") {
        const auto c = compare_docs(make_report({timed(154, 0.003)}), make_report({with_e2e(154, 778.5)}));
        const auto& p = only_pair(c);
        CHECK(p.v == verdict::same);
        CHECK_FALSE(p.e2e_interval);
    }
    SECTION("e2e grown with the kernel time (a baseline row not gated across boards) is the kernel rule's") {
        synth_device other;
        other.uuid = "GPU-cccccccc-0000-0000-0000-000000000003";
        synth_result b = with_e2e(74.1, 81.6), n = with_e2e(138.9, 149.1);
        b.role = n.role = "baseline";
        b.variant = n.variant = "naive";
        const auto c = compare_docs(make_report({b}), make_report({n}, other));
        const auto& p = only_pair(c);
        CHECK(p.relation == device_relation::same_model);
        CHECK(p.v != verdict::e2e_slower);
        CHECK(c.exit_code == 0);
    }
    SECTION("a policy with a higher floor lets it pass") {
        policy pol = test_policy();
        pol.e2e_min_delta_us = 1000;
        const auto c = compare_docs(make_report({with_e2e(154, 160.3)}), make_report({with_e2e(154, 778.5)}), pol);
        CHECK(only_pair(c).v == verdict::same);
    }
}

TEST_CASE("an end-to-end growth in samples spread by host interference is INCONCLUSIVE, not E2E SLOWER", "[reports][gate]") {
    // H100 GPU-74021969 against the baseline of GPU-c07c8e30 (29162c0 vs 1ea5da5, no code change in the
    // launchers): the naive softmax row's kernel time SAME, e2e 85.9 -> 172.3 us with an IQR of 57.8 us.
    synth_device other;
    other.uuid = "GPU-cccccccc-0000-0000-0000-000000000003";
    synth_result b = with_e2e(74.98, 85.94, 0.0094), n = with_e2e(74.98, 172.35, 0.0964);
    SECTION("spread NEW: not judged") {
        b.e2e_iqr_us = 1.24;
        n.e2e_iqr_us = 57.8;
        const auto c = compare_docs(make_report({b}), make_report({n}, other));
        const auto& p = only_pair(c);
        CHECK(p.v == verdict::inconclusive);
        CHECK_THAT(p.note, ContainsSubstring("not judged: the e2e samples are spread (IQR 1% of the median in BASE, 34% in NEW"));
        CHECK_THAT(p.note, ContainsSubstring("kernel time SAME; end-to-end (launcher call to stream completion) 85.94 -> 172.3 us"));
        REQUIRE(p.e2e_interval);
        CHECK(p.e2e_interval->lo > 1.25);  // the interval alone would have failed it
        CHECK(c.exit_code == 0);
    }
    SECTION("spread BASE: not judged either") {
        b.e2e_iqr_us = 30.0;
        n.e2e_iqr_us = 2.0;
        CHECK(only_pair(compare_docs(make_report({b}), make_report({n}, other))).v == verdict::inconclusive);
    }
    SECTION("tight on both sides: the launcher grew, E2E SLOWER") {
        b.e2e_iqr_us = 1.24;
        n.e2e_iqr_us = 3.0;
        const auto c = compare_docs(make_report({b}), make_report({n}, other));
        CHECK(only_pair(c).v == verdict::e2e_slower);
        CHECK(c.exit_code == 1);
    }
    SECTION("a wider policy judges it") {
        b.e2e_iqr_us = 1.24;
        n.e2e_iqr_us = 57.8;
        policy pol = test_policy();
        pol.e2e_max_spread = 0.5;
        CHECK(only_pair(compare_docs(make_report({b}), make_report({n}, other), pol)).v == verdict::e2e_slower);
    }
}

TEST_CASE("a slower kernel stays SLOWER; between GPU models there is no e2e verdict", "[reports][gate]") {
    SECTION("SLOWER wins over E2E SLOWER") {
        const auto c = compare_docs(make_report({with_e2e(100, 200)}), make_report({with_e2e(110, 900)}));
        CHECK(only_pair(c).v == verdict::slower);
    }
    SECTION("different models") {
        synth_device h100{"NVIDIA H100 80GB HBM3", "h100", "GPU-bbbbbbbb-0000-0000-0000-000000000002", 3000, 0.004};
        const auto c = compare_docs(make_report({with_e2e(100, 110)}, h100), make_report({with_e2e(100 * 3000.0 / 4200, 900)}));
        const auto& p = only_pair(c);
        CHECK(p.v == verdict::same);
        CHECK(p.e2e_interval);  // measured and shown, not judged
        CHECK(c.exit_code == 0);
    }
}

TEST_CASE("policy files: the end-to-end keys", "[reports][gate]") {
    const auto p = parse_policy(nlohmann::json::parse(R"({"fusebench_policy": 1, "e2e_threshold": 0.5, "e2e_min_delta_us": 200})"),
                                "p.json");
    CHECK(p.e2e_threshold == 0.5);
    CHECK(p.e2e_min_delta_us == 200);
    const auto proj = load_policy(std::string(FUSEBENCH_SOURCE_DIR) + "/reports/policy.json");
    CHECK(proj.e2e_threshold == 0.25);
    CHECK(proj.e2e_min_delta_us == 50);
    CHECK(proj.e2e_max_spread == 0.25);
    CHECK(parse_policy(nlohmann::json::parse(R"({"fusebench_policy": 1, "e2e_max_spread": 0.4})"), "p.json").e2e_max_spread == 0.4);
    const std::string bad = GENERATE(as<std::string>{}, R"({"fusebench_policy": 1, "e2e_threshold": -0.1})",
                                     R"({"fusebench_policy": 1, "e2e_min_delta_us": -5})",
                                     R"({"fusebench_policy": 1, "e2e_min_delta_us": "50us"})",
                                     R"({"fusebench_policy": 1, "e2e_max_spread": -0.25})");
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_policy(nlohmann::json::parse(bad), "p.json"), bad_input);
}
