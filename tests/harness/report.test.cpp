#include "harness/ceilings.hpp"
#include "harness/json_schema.hpp"
#include "harness/report.hpp"
#include "harness/table.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <filesystem>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

using namespace fusebench;

namespace {

json_schema report_schema() {
    return load_json_schema(std::string(FUSEBENCH_SOURCE_DIR) + "/reports/schema/fusebench-report-v1.schema.json");
}

variant_result sample_result(outcome o) {
    variant_result r;
    r.suite = "glu";
    r.c.name = "swiglu:3x7";
    r.c.type = dtype::bf16;
    r.c.dims = {{"tokens", 3}, {"inter", 7}};
    r.c.params = {{"act", 0}};
    r.variant = "fused_vec";
    r.role = variant_role::fused;
    r.description = "test";
    r.result = o;
    r.model = {84, 42, 105};
    correctness_block cb;
    output_check c;
    c.output = "y";
    c.stats.checked = 21;
    c.stats.max_abs = 0.001;
    c.stats.max_rel = 0.002;
    c.stats.rel_l2 = 0.0005;
    c.stats.ulp_p50 = 0;
    c.stats.ulp_p99 = 1;
    c.stats.ulp_max = 1;
    if (o == outcome::fail) {
        c.pass = false;
        c.reason = "1 of 21 elements out of tolerance";
        c.stats.mismatches = 1;
        c.stats.first.push_back({3, std::nan(""), 1.5, "nan/inf position"});
    }
    if (o == outcome::pass) {
        relative_check rc;
        rc.multiple = 2;
        rc.abs_term = 1e-6;
        rc.rel_l2_term = 1e-6;
        rc.baseline_max_abs = 0.0008;
        rc.baseline_rel_l2 = 0.0004;
        rc.allowed_max_abs = 0.0016;
        rc.allowed_rel_l2 = 0.0008;
        rc.ratio_max_abs = 1.25;
        rc.ratio_rel_l2 = 1.25;
        rc.baseline = "naive_fp8";
        c.relative = rc;
        c.coverage = check_coverage{"(row)", 2, 3, "test sample", {{0}, {2}}};
    }
    cb.outputs.push_back(c);
    cb.deterministic = true;
    r.correctness = cb;
    if (o == outcome::pass) {
        timed_run t;
        t.method = "cuda_events";
        t.method_reason = "test";
        const std::vector<double> s{10, 11, 12};
        t.stats = summarize(s);
        t.e2e_stats = summarize(std::vector<double>{14, 15, 16});
        t.samples_us = s;
        t.stopped = stop_reason::noise_target_met;
        r.timing = t;
        r.achieved_gbps = 12.6;
        r.null_reasons["achieved_tflops"] = "x";
        r.null_reasons["pct_of_copy_ceiling"] = "copy bandwidth was not measured";
        r.null_reasons["pct_of_floor"] = "copy bandwidth was not measured";
        r.null_reasons["speedup_vs_baseline"] = "no baseline";
        r.null_reasons["arithmetic_intensity"] = "x";
        r.null_reasons["pct_of_ceiling"] = "ceilings were not measured";
        r.counters = counters_unavailable(memory_metric_set(), "no_device", "no CUDA device");
    } else {
        r.reason = "1 of 21 elements out of tolerance";
        r.timing_null_reason = "not timed: verification did not pass";
    }
    return r;
}

}  // namespace

TEST_CASE("reports validate against the schema and round-trip through a file", "[report][schema]") {
    report_context ctx;
    ctx.started_at = utc_now_iso8601();
    ctx.device = nullptr;
    ctx.settings = {{"seed", 42}, {"seed_source", "--seed"}, {"mode", "cold"}, {"sampling", nlohmann::json::object()}};
    ctx.ceilings = nullptr;
    ctx.status = "complete";
    const std::vector<variant_result> results{sample_result(outcome::pass), sample_result(outcome::fail)};
    const auto j = make_report(ctx, results);

    const auto errors = report_schema().validate(j);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());

    // Unknown values are null with a reason, never 0.
    const auto& failed = j["results"][1];
    CHECK(failed["timing"].is_null());
    CHECK(failed["null_reasons"]["timing"] == "not timed: verification did not pass");
    CHECK(failed["correctness"]["outputs"][0]["first_mismatches"][0]["got"] == "nan");
    CHECK(j["results"][0]["derived"]["achieved_tflops"].is_null());
    CHECK(j["summary"]["pass"] == 1);
    // Baseline-relative judgement, coverage and end-to-end time are in the report.
    const auto& out0 = j["results"][0]["correctness"]["outputs"][0];
    CHECK(out0["relative_to_baseline"]["ratio_max_abs"] == 1.25);
    CHECK(out0["relative_to_baseline"]["baseline"] == "naive_fp8");  // which variant's error set the budget
    CHECK(out0["coverage"]["checked"] == 2);
    CHECK(j["results"][0]["timing"]["e2e"]["median_us"] == 15);
    CHECK(failed["correctness"]["outputs"][0]["coverage"].is_null());
    CHECK(j["summary"]["fail"] == 1);
    // Counters that could not be read are null with a reason, never 0.
    const auto& counters = j["results"][0]["counters"];
    CHECK(counters["status"] == "unavailable");
    CHECK(counters["metrics"]["dram__bytes_read.sum"]["value"].is_null());
    CHECK(counters["metrics"]["dram__bytes_read.sum"]["reason"] == "no_device");
    CHECK(counters["reconciliation"]["measured_dram_bytes"].is_null());
    CHECK(counters["reconciliation"]["null_reasons"]["measured_dram_bytes"].get<std::string>().find("no_device") != std::string::npos);

    const auto dir = std::filesystem::temp_directory_path() / "fusebench_report_test";
    const auto path = (dir / "sub" / "report.json").string();
    write_json_atomic(path, j);
    std::ifstream in(path);
    const auto back = nlohmann::json::parse(in);
    CHECK(back == j);
    // No temporary file is left behind.
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir / "sub")) files += e.is_regular_file();
    CHECK(files == 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("the ceilings block follows the schema, measured or not", "[report][schema]") {
    device_ceilings c;
    c.copy_gbps = ceiling_from_times({1.0, 1.1, 0.9}, 3e9, 1e-9, "GB/s", "copy");
    c.copy_gbps.sm_clock_mhz = 1980.0;
    c.fp8_tflops = ceiling_from_times({0.8, 0.81}, 1.1e12, 1e-12, "TFLOP/s", "fp8, in bursts");
    c.bf16_tflops.unit = c.fp16_tflops.unit = c.fp32_tflops.unit = "TFLOP/s";
    c.read_gbps.unit = c.write_gbps.unit = c.copy_kernel_gbps.unit = "GB/s";
    c.bf16_tflops.reason = "error: cublasCreate failed";
    c.theoretical_dram_gbps = 3352.0;
    c.theoretical_reason = "max SM clock unknown";
    report_context ctx;
    ctx.started_at = "x";
    ctx.settings = {{"seed", 1}, {"seed_source", "fresh"}, {"mode", "cold"}, {"sampling", nlohmann::json::object()}};
    ctx.ceilings = to_json(c);
    auto j = make_report(ctx, {sample_result(outcome::pass)});
    const auto schema = report_schema();
    const auto errors = schema.validate(j);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());
    CHECK(j["ceilings"]["bf16_tflops"]["value"].is_null());
    CHECK(j["ceilings"]["bf16_tflops"]["reason"] == "error: cublasCreate failed");
    CHECK(j["ceilings"]["fp16_tflops"]["reason"] == "unknown");  // never an empty reason
    CHECK(j["ceilings"]["copy_gbps"]["sm_clock_mhz_after"] == 1980.0);
    // What the schema forbids in it: a unit it does not know, a ceiling without its value, a string for a
    // number, a negative count.
    auto bad = j;
    bad["ceilings"]["copy_gbps"]["unit"] = "MB/s";
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["ceilings"]["fp8_tflops"].erase("value");
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["ceilings"]["fp8_tflops"]["sm_clock_mhz_after"] = "1980";
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["ceilings"]["copy_gbps"]["samples"] = -1;
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["ceilings"]["theoretical"]["dram_gbps"] = "3352";
    CHECK_FALSE(schema.validate(bad).empty());
}

// The committed baselines are reports users read and compare against: they must follow the
// published schema (and a schema change must keep them valid or regenerate them).
TEST_CASE("the committed baseline reports validate against the schema", "[report][schema]") {
    const auto schema = report_schema();
    for (const char* name : {"h100.json", "h200.json"}) {
        const std::string path = std::string(FUSEBENCH_SOURCE_DIR) + "/reports/baselines/" + name;
        std::ifstream in(path);
        REQUIRE(in.good());
        const auto j = nlohmann::json::parse(in);
        const auto errors = schema.validate(j);
        CAPTURE(path, errors.size());
        for (std::size_t i = 0; i < errors.size() && i < 5; ++i) UNSCOPED_INFO(errors[i]);
        CHECK(errors.empty());
        CHECK(j["results"].size() > 1000);
    }
}

TEST_CASE("a report file holds one result per line and parses back to the report", "[report]") {
    const nlohmann::json j = {{"ceilings", {{"copy_gbps", {{"value", 3000.5}, {"reason", nullptr}}}}},
                              {"empty", nlohmann::json::array()},
                              {"results", {{{"case", "a"}, {"pass", true}}, {{"case", "b"}, {"v", {1, 2}}}}},
                              {"tool", "fusebench"}};
    const std::string text = json_file_text(j);
    CHECK(text ==
          "{\n"
          "  \"ceilings\": {\n"
          "    \"copy_gbps\": {\n"
          "      \"reason\": null,\n"
          "      \"value\": 3000.5\n"
          "    }\n"
          "  },\n"
          "  \"empty\": [],\n"
          "  \"results\": [\n"
          "    {\"case\":\"a\",\"pass\":true},\n"
          "    {\"case\":\"b\",\"v\":[1,2]}\n"
          "  ],\n"
          "  \"tool\": \"fusebench\"\n"
          "}");
    CHECK(nlohmann::json::parse(text) == j);
    // Not an object, or an array of non-objects: plain two-space indentation.
    CHECK(json_file_text(nlohmann::json::array({1, 2})) == nlohmann::json::array({1, 2}).dump(2));
    const nlohmann::json mixed = {{"xs", {1, {{"a", 1}}}}};
    CHECK(json_file_text(mixed) == mixed.dump(2));
    // A string holding a newline stays escaped on its line.
    const nlohmann::json nl = {{"results", {{{"note", "two\nlines"}}}}};
    CHECK(nlohmann::json::parse(json_file_text(nl)) == nl);
}

TEST_CASE("the schema validator rejects what the schema forbids", "[report][schema]") {
    const auto schema = report_schema();
    report_context ctx;
    ctx.started_at = "x";
    ctx.settings = {{"seed", 1}, {"seed_source", "fresh"}, {"mode", "cold"}, {"sampling", nlohmann::json::object()}};
    auto j = make_report(ctx, {sample_result(outcome::pass)});
    REQUIRE(schema.validate(j).empty());
    auto bad = j;
    bad["schema"]["version"] = 2;
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["results"][0]["outcome"] = "passed";
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["results"][0].erase("timing");
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["results"][0]["derived"]["achieved_gbps"] = "fast";
    CHECK_FALSE(schema.validate(bad).empty());
    CHECK_THROWS(json_schema(nlohmann::json{{"type", "object"}, {"patternProperties", nlohmann::json::object()}}));
}

TEST_CASE("CUPTI timing names the kind of kernel records it came from", "[report][schema]") {
    report_context ctx;
    ctx.started_at = "x";
    ctx.settings = {{"seed", 1}, {"seed_source", "fresh"}, {"mode", "cold"}, {"sampling", nlohmann::json::object()}};
    variant_result r = sample_result(outcome::pass);
    REQUIRE(r.timing);
    r.timing->method = "cupti_activity";
    r.timing->kernel_records = "serial";
    r.timing->sum_stats = r.timing->stats;
    r.timing->event_stats = r.timing->stats;
    r.timing->kernel_names = {"k"};
    r.timing->kernels_per_sample = 1;
    const auto j = make_report(ctx, {r});
    const auto schema = report_schema();
    const auto errors = schema.validate(j);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());
    CHECK(j["results"][0]["timing"]["cupti"]["kernel_records"] == "serial");
    auto bad = j;
    bad["results"][0]["timing"]["cupti"]["kernel_records"] = "sometimes";
    CHECK_FALSE(schema.validate(bad).empty());
}

TEST_CASE("the timer's empty-kernel reading and the floor with launch are reported, or null with a reason", "[report][schema]") {
    report_context ctx;
    ctx.started_at = "x";
    ctx.settings = {{"seed", 1}, {"seed_source", "fresh"}, {"mode", "cold"}, {"sampling", nlohmann::json::object()}};
    const auto schema = report_schema();

    variant_result measured = sample_result(outcome::pass);
    REQUIRE(measured.timing);
    measured.timing->empty_kernel_stats = summarize(std::vector<double>{2.5, 3.0, 3.5});
    measured.pct_of_floor = 80.0;
    measured.pct_of_floor_with_launch = 102.5;
    variant_result unmeasured = sample_result(outcome::pass);
    unmeasured.timing->empty_kernel_null_reason = "the empty kernel's samples held other kernels";
    unmeasured.null_reasons["pct_of_floor_with_launch"] = "the empty kernel was not timed: the empty kernel's samples held other kernels";
    const auto j = make_report(ctx, {measured, unmeasured});
    const auto errors = schema.validate(j);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());

    const auto& t0 = j["results"][0]["timing"];
    CHECK(t0["empty_kernel"]["median_us"] == 3.0);
    CHECK(t0["empty_kernel"]["samples"] == 3);
    CHECK(t0["empty_kernel"]["meaning"].get<std::string>().find("does nothing") != std::string::npos);
    CHECK(j["results"][0]["derived"]["pct_of_floor_with_launch"] == 102.5);

    const auto& r1 = j["results"][1];
    CHECK(r1["timing"]["empty_kernel"].is_null());
    CHECK(r1["timing"]["null_reasons"]["empty_kernel"] == "the empty kernel's samples held other kernels");
    CHECK(r1["derived"]["pct_of_floor_with_launch"].is_null());
    CHECK(r1["derived"]["null_reasons"]["pct_of_floor_with_launch"].get<std::string>().find("not timed") != std::string::npos);

    auto bad = j;
    bad["results"][0]["timing"]["empty_kernel"]["median_us"] = -1.0;
    CHECK_FALSE(schema.validate(bad).empty());
    bad = j;
    bad["results"][0]["timing"]["empty_kernel"].erase("meaning");
    CHECK_FALSE(schema.validate(bad).empty());
}

TEST_CASE("time_vs_random: a kind's time over its random-input twin's, or null with a reason", "[report]") {
    // Results as the report holds them: softmax_topk_adversarial's pairs (a kind beside random logits of
    // the same dims and params).
    auto result = [](const std::string& kind, const std::string& variant, std::optional<double> median, nlohmann::json params,
                     std::int64_t V = 50257) {
        nlohmann::json r;
        r["suite"] = "softmax_topk_adversarial";
        r["case"] = "4096x" + std::to_string(V) + ":K256:" + (kind == "random" ? std::string("std1") : kind);
        r["dtype"] = "fp32";
        r["variant"] = variant;
        r["case_info"] = {{"dims", {{"rows", 4096}, {"V", V}, {"K", 256}}}, {"params", params}, {"input_kind", kind}};
        r["timing"] = median ? nlohmann::json{{"median_us", *median}} : nlohmann::json(nullptr);
        r["derived"] = {{"speedup_vs_baseline", nullptr}};
        return r;
    };
    const nlohmann::json std1 = {{"std", 1.0}}, std10 = {{"std", 10.0}};
    nlohmann::json results = nlohmann::json::array({
        result("random", "fused_stream", 250.0, std1),                // 0: the twin of 1 and 2
        result("plateau", "fused_stream", 400.0, std1),               // 1: 1.6x
        result("ascending", "fused_stream", std::nullopt, std1),      // 2: not timed
        result("plateau", "fused_radix", 500.0, std1),                // 3: fused_radix has no random result
        result("plateau", "fused_stream", 300.0, std10),              // 4: other params: no twin
        result("random", "fused_smem", std::nullopt, std1),           // 5: an untimed twin
        result("ties", "fused_smem", 900.0, std1),                    // 6
        result("random", "fused_warp", 100.0, std1),                  // 7, 8: two twins
        result("random", "fused_warp", 110.0, std1),
        result("ties", "fused_warp", 150.0, std1),                    // 9
        result("plateau", "fused_stream", 700.0, std1, 151936),       // 10: other dims
    });
    results[8]["case"] = "4096x50257:K256:std1_again";
    annotate_time_vs_random(results);
    auto ratio = [&](int i) { return results[i]["derived"]["time_vs_random"]; };
    auto why = [&](int i) { return results[i]["derived"]["null_reasons"].value("time_vs_random", std::string()); };
    CHECK(ratio(1).get<double>() == 400.0 / 250.0);
    CHECK_FALSE(results[1]["derived"].contains("null_reasons"));
    CHECK(ratio(0).is_null());
    CHECK(why(0).find("random-input case") != std::string::npos);
    CHECK(ratio(2).is_null());
    CHECK(why(2) == "not timed");
    CHECK(ratio(3).is_null());
    CHECK(why(3).find("no random-input result") != std::string::npos);
    CHECK(ratio(4).is_null());
    CHECK(why(4).find("no random-input result") != std::string::npos);
    CHECK(ratio(6).is_null());
    CHECK(why(6).find("was not timed") != std::string::npos);
    CHECK(why(6).find("4096x50257:K256:std1") != std::string::npos);
    CHECK(ratio(9).is_null());
    CHECK(why(9).find("2 random-input results") != std::string::npos);
    CHECK(ratio(10).is_null());
    // Another config of the same variant is another twin; a device index (merged reports) too.
    results[1]["config"] = "c2";
    annotate_time_vs_random(results);
    CHECK(ratio(1).is_null());
    results[0]["config"] = "c2";
    results[0]["device_index"] = 1;
    annotate_time_vs_random(results);
    CHECK(ratio(1).is_null());
    results[1]["device_index"] = 1;
    annotate_time_vs_random(results);  // a second pass replaces the reason of the first
    CHECK(ratio(1).get<double>() == 400.0 / 250.0);
    CHECK_FALSE(results[1]["derived"]["null_reasons"].contains("time_vs_random"));
    // A result without a derived object (older writers) is left as it is.
    nlohmann::json bare = nlohmann::json::array({{{"suite", "x"}, {"case_info", {{"input_kind", "ties"}}}}});
    annotate_time_vs_random(bare);
    CHECK_FALSE(bare[0].contains("derived"));
}

TEST_CASE("make_report writes time_vs_random into every result, valid against the schema", "[report][schema]") {
    report_context ctx;
    ctx.started_at = utc_now_iso8601();
    ctx.settings = {{"seed", 1}, {"seed_source", "--seed"}, {"mode", "cold"}, {"sampling", nlohmann::json::object()}};
    ctx.status = "complete";
    variant_result twin = sample_result(outcome::pass), kind = sample_result(outcome::pass), failed = sample_result(outcome::fail);
    kind.c.name = "swiglu:3x7:odd";
    kind.c.input_kind = "odd";
    failed.c.name = "swiglu:3x7:even";
    failed.c.input_kind = "even";
    const auto j = make_report(ctx, {twin, kind, failed});
    const auto errors = report_schema().validate(j);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());
    REQUIRE(j["results"][0]["case_info"]["input_kind"] == "random");
    CHECK(j["results"][0]["derived"]["time_vs_random"].is_null());
    CHECK(j["results"][1]["derived"]["time_vs_random"] == 1.0);  // the same samples
    CHECK(j["results"][2]["derived"]["time_vs_random"].is_null());
    CHECK(j["results"][2]["derived"]["null_reasons"]["time_vs_random"] == "not timed");
}

TEST_CASE("the run's table has an 'x random' column only where a result has time_vs_random", "[report]") {
    report_context ctx;
    variant_result twin = sample_result(outcome::pass), kind = sample_result(outcome::pass);
    const auto plain = make_report(ctx, {twin});
    CHECK(format_results_table(plain["results"]).find("x random") == std::string::npos);
    kind.c.name = "swiglu:3x7:odd";
    kind.c.input_kind = "odd";
    kind.timing->stats.median = 16.5;  // the twin's median is 11
    const auto both = make_report(ctx, {twin, kind});
    const std::string table = format_results_table(both["results"]);
    CHECK(table.find("x random") != std::string::npos);
    CHECK(table.find("1.50x") != std::string::npos);
    // The summary: the largest ratio per suite, variant and dtype, with its case; nothing without one.
    CHECK(format_time_vs_random_summary(plain["results"]).empty());
    variant_result slower = kind;
    slower.c.name = "swiglu:3x7:slow";
    slower.c.input_kind = "slow";
    slower.timing->stats.median = 22.0;
    const auto three = make_report(ctx, {twin, kind, slower});
    const std::string summary = format_time_vs_random_summary(three["results"]);
    CHECK(summary.find("glu fused_vec bf16: 2.00x (swiglu:3x7:slow; 2 kind results)") != std::string::npos);
}
