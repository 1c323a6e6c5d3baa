// Golden Markdown and CSV of `compare` and `table` on fixed synthetic reports, and the JUnit XML
// read back with a minimal XML parser. FUSEBENCH_UPDATE_GOLDEN=1 rewrites the golden files
// (review the diff before committing them).
#include "reports/compare_output.hpp"
#include "reports/gate.hpp"
#include "harness/report.hpp"
#include "reports/perf_table.hpp"
#include "reports/synthetic_report.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <map>

using namespace fusebench;
using namespace fusebench::reports;
using fusebench::test::make_report;
using fusebench::test::read_text;
using fusebench::test::samples_around;
using fusebench::test::synth_device;
using fusebench::test::synth_result;
using Catch::Matchers::ContainsSubstring;

namespace {

std::string golden_path(const std::string& name) { return std::string(FUSEBENCH_SOURCE_DIR) + "/tests/reports/golden/" + name; }

void check_golden(const std::string& name, const std::string& actual) {
    const std::string path = golden_path(name);
    if (const char* u = std::getenv("FUSEBENCH_UPDATE_GOLDEN"); u && std::string(u) == "1") {
        std::ofstream(path, std::ios::binary) << actual;
        WARN("rewrote " << path);
    }
    const std::string expected = read_text(path);
    REQUIRE_FALSE(expected.empty());
    CHECK(actual == expected);
}

synth_result res(std::string suite, std::string case_name, std::string dtype, std::string variant, double median_us) {
    synth_result r;
    r.suite = std::move(suite);
    r.case_name = std::move(case_name);
    r.dtype = std::move(dtype);
    r.variant = std::move(variant);
    r.role = r.variant == "naive" ? "baseline" : "fused";
    r.median_us = median_us;
    r.noise = 0.002;
    // rmsnorm 4096x4096 bf16: x, residual, gamma read, y and residual_out written [bytes]
    if (r.suite == "rmsnorm") r.model_bytes = 134217728;
    return r;
}

// BASE and NEW of one pull request: one of each verdict the gate gives on one device.
std::pair<nlohmann::json, nlohmann::json> pull_request_reports() {
    std::vector<synth_result> base, now;
    auto both = [&](synth_result b, synth_result n) {
        base.push_back(std::move(b));
        now.push_back(std::move(n));
    };
    auto sampled = [](synth_result r, double rel_sd, std::uint64_t seed) {
        r.samples = samples_around(r.median_us, rel_sd, 50, seed);
        return r;
    };
    both(sampled(res("glu", "swiglu:4096x14336", "bf16", "naive", 394.7), 0.004, 1),
         sampled(res("glu", "swiglu:4096x14336", "bf16", "naive", 395.1), 0.004, 2));
    both(sampled(res("glu", "swiglu:4096x14336", "bf16", "fused_scalar", 284.7), 0.004, 3),
         sampled(res("glu", "swiglu:4096x14336", "bf16", "fused_scalar", 240.2), 0.004, 4));
    both(sampled(res("glu", "swiglu:4096x14336", "bf16", "fused_vec", 80.34), 0.004, 5),
         sampled(res("glu", "swiglu:4096x14336", "bf16", "fused_vec", 88.61), 0.004, 6));
    synth_result noisy_b = res("glu", "swiglu:128x4096", "bf16", "fused_vec", 6.1);
    noisy_b.noise = 0.02;
    synth_result noisy_n = noisy_b;
    noisy_n.median_us = 6.5;
    both(noisy_b, noisy_n);
    synth_result broken = res("rmsnorm", "4096x4096", "bf16", "fused_block", 33.2);
    broken.outcome = "fail";
    broken.reason = "y: 12 of 16777216 elements out of tolerance";
    both(res("rmsnorm", "4096x4096", "bf16", "fused_block", 33.2), broken);
    synth_result edge = res("rmsnorm", "3x7", "bf16", "fused_block", 0);
    edge.timed = false;
    both(edge, edge);
    base.push_back(res("rmsnorm", "4096x4096", "bf16", "fused_vec4", 32.9));
    now.push_back(res("rmsnorm", "4096x4096", "bf16", "fused_vec8", 31.8));
    return {make_report(base), make_report(now)};
}

policy golden_policy() {
    policy p;
    p.source = "reports/policy.json";
    return p;
}

// ---- a minimal XML reader: enough to prove the JUnit file is well formed and to count elements.
struct xml_element {
    std::string name;
    std::map<std::string, std::string> attributes;
    std::string parent;
};

bool valid_text(const std::string& t) {
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '<') return false;
        if (t[i] == '&') {
            const auto semi = t.find(';', i);
            if (semi == std::string::npos) return false;
            const std::string ent = t.substr(i, semi - i + 1);
            if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;") return false;
        }
    }
    return true;
}

// Returns false on any malformation; fills `out` with every element in document order.
bool parse_xml(const std::string& x, std::vector<xml_element>& out) {
    std::size_t i = 0;
    if (x.rfind("<?xml", 0) == 0) {
        i = x.find("?>");
        if (i == std::string::npos) return false;
        i += 2;
    }
    std::vector<std::string> stack;
    int roots = 0;
    while (i < x.size()) {
        const auto lt = x.find('<', i);
        const std::string text = x.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
        if (!valid_text(text)) return false;
        if (stack.empty() && text.find_first_not_of(" \t\r\n") != std::string::npos) return false;
        if (lt == std::string::npos) break;
        const auto gt = x.find('>', lt);
        if (gt == std::string::npos) return false;
        std::string tag = x.substr(lt + 1, gt - lt - 1);
        i = gt + 1;
        if (!tag.empty() && tag[0] == '/') {
            if (stack.empty() || stack.back() != tag.substr(1)) return false;
            stack.pop_back();
            continue;
        }
        const bool self_closing = !tag.empty() && tag.back() == '/';
        if (self_closing) tag.pop_back();
        xml_element e;
        std::size_t k = 0;
        while (k < tag.size() && !std::isspace(static_cast<unsigned char>(tag[k]))) e.name += tag[k++];
        if (e.name.empty()) return false;
        while (true) {
            while (k < tag.size() && std::isspace(static_cast<unsigned char>(tag[k]))) ++k;
            if (k >= tag.size()) break;
            const auto eq = tag.find('=', k);
            if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') return false;
            const std::string attr = tag.substr(k, eq - k);
            const auto close = tag.find('"', eq + 2);
            if (close == std::string::npos) return false;
            const std::string value = tag.substr(eq + 2, close - eq - 2);
            if (!valid_text(value) || value.find('"') != std::string::npos) return false;
            if (!e.attributes.emplace(attr, value).second) return false;
            k = close + 1;
        }
        if (stack.empty()) ++roots;
        e.parent = stack.empty() ? "" : stack.back();
        out.push_back(e);
        if (!self_closing) stack.push_back(e.name);
    }
    return stack.empty() && roots == 1;
}

}  // namespace

TEST_CASE("compare Markdown matches the golden file", "[reports][golden]") {
    const auto [b, n] = pull_request_reports();
    const auto c = compare_reports(parse_report(b, "base.json"), parse_report(n, "new.json"), golden_policy());
    CHECK(c.exit_code == 1);
    check_golden("compare.md", format_compare_markdown(c));
    check_golden("compare.txt", format_compare_terminal(c, false));
}

TEST_CASE("table Markdown and CSV match the golden files", "[reports][golden]") {
    synth_device h100{"NVIDIA H100 80GB HBM3", "h100", "GPU-bbbbbbbb-0000-0000-0000-000000000002", 3000, 0.004};
    synth_device h200;
    auto suite_results = [](double scale, bool break_vec) {
        std::vector<synth_result> v;
        for (const char* dt : {"bf16", "fp32"}) {
            const double bytes = std::string(dt) == "bf16" ? 352321536.0 : 704643072.0;
            for (const char* cs : {"swiglu:4096x14336", "geglu_tanh:4096x14336"}) {
                const double naive = 394.7 * scale * bytes / 352321536.0;
                for (auto [var, t] : {std::pair{"naive", naive}, {"fused_scalar", naive * 0.72}, {"fused_vec", naive * 0.2035}}) {
                    synth_result r = res("glu", cs, dt, var, t);
                    r.model_bytes = std::string(var) == "naive" ? bytes * 5 / 3 : bytes;
                    r.speedup = naive / t;
                    if (break_vec && std::string(var) == "fused_vec" && std::string(cs) == "geglu_tanh:4096x14336" && std::string(dt) == "bf16") {
                        r.outcome = "fail";
                        r.reason = "y: 7 of 58720256 elements out of tolerance";
                    }
                    v.push_back(r);
                }
            }
            synth_result edge = res("glu", "swiglu:3x7", dt, "fused_vec", 0);
            edge.timed = false;
            v.push_back(edge);
        }
        synth_result skipped = res("rmsnorm", "4096x4096", "bf16", "fused_warp", 0);
        skipped.outcome = "skipped";
        skipped.reason = "outside declared domain: hidden 4096 > 2048";
        v.push_back(skipped);
        synth_result rms = res("rmsnorm", "4096x4096", "bf16", "fused_vec", 33.1 * scale);
        rms.speedup = 9.6;
        v.push_back(rms);
        return v;
    };
    std::vector<loaded_report> reps;
    reps.push_back(parse_report(make_report(suite_results(1.4, false), h100), "runs/h100.json"));
    reps.push_back(parse_report(make_report(suite_results(1.0, true), h200), "runs/h200.json"));
    const auto sources = table_sources(reps, {});
    const auto tables = build_tables(sources, {});
    REQUIRE(tables.size() == 3);  // glu bf16, glu fp32, rmsnorm bf16
    for (const auto& t : tables) CHECK(std::find(t.cases.begin(), t.cases.end(), "swiglu:3x7") == t.cases.end());
    const std::string md = tables_markdown(tables, sources);
    CHECK_THAT(md, ContainsSubstring("**FAIL** [1]") && ContainsSubstring("7 of 58720256"));
    check_golden("table.md", md);
    const auto csv = tables_csv(tables, sources);
    REQUIRE(csv.count("glu_bf16.csv"));
    check_golden("table_glu_bf16.csv", csv.at("glu_bf16.csv"));

    SECTION("filters and a single report") {
        const std::vector<table_source> one(sources.begin() + 1, sources.end());
        result_selection sel;
        sel.suites = {"glu"};
        sel.dtypes = {"fp32"};
        const auto t = build_tables(one, sel);
        REQUIRE(t.size() == 1);
        CHECK(t[0].dtype == "fp32");
        const std::string single = tables_markdown(t, one);
        CHECK_THAT(single, ContainsSubstring("| case | naive | fused_scalar | fused_vec |"));
        // Variants and case substrings select as in run and compare.
        sel.variants = {"naive", "fused_vec"};
        const auto tv = build_tables(one, sel);
        REQUIRE(tv.size() == 1);
        CHECK(tv[0].variants == std::vector<std::string>{"naive", "fused_vec"});
        sel.cases = {"no such case"};
        CHECK(build_tables(one, sel).empty());
    }
}

TEST_CASE("table cells of an adversarial kind carry time_vs_random; other tables are unchanged", "[reports][table]") {
    synth_device h100{"NVIDIA H100 80GB HBM3", "h100", "GPU-bbbbbbbb-0000-0000-0000-000000000002", 3000, 0.004};
    std::vector<synth_result> v;
    for (auto [cs, kind, t] : {std::tuple{"4096x50257:K256:std1", "random", 340.0}, {"4096x50257:K256:plateau", "plateau", 474.0}}) {
        synth_result r = res("softmax_topk_adversarial", cs, "fp32", "fused_stream_resample", t);
        r.input_kind = kind;
        v.push_back(r);
    }
    v.push_back(res("glu", "swiglu:4096x14336", "bf16", "fused_vec", 80.0));
    auto doc = make_report(v, h100);
    annotate_time_vs_random(doc["results"]);
    std::vector<loaded_report> reps;
    reps.push_back(parse_report(doc, "runs/adv.json"));
    const auto sources = table_sources(reps, {});
    const auto tables = build_tables(sources, {});
    REQUIRE(tables.size() == 2);
    const std::string md = tables_markdown(tables, sources);
    // The kind's cell ends with its ratio (474 / 340); the random case's and the glu table's cells do not.
    CHECK_THAT(md, ContainsSubstring(" · 1.39x random |"));
    CHECK_THAT(md, ContainsSubstring("Cells of a non-random input kind end with `x random`"));
    const auto std1_row = md.substr(md.find("| 4096x50257:K256:std1 |"));
    CHECK(std1_row.substr(0, std1_row.find('\n')).find("random") == std::string::npos);
    const auto glu_row = md.substr(md.find("| swiglu:4096x14336 |"));
    CHECK(glu_row.substr(0, glu_row.find('\n')).find("random") == std::string::npos);
    const auto csv = tables_csv(tables, sources);
    const std::string& adv = csv.at("softmax_topk_adversarial_fp32.csv");
    CHECK(adv.substr(0, adv.find('\n')) ==
          "case,report,fused_stream_resample outcome,fused_stream_resample median_us,fused_stream_resample gbps,"
          "fused_stream_resample pct_of_ceiling,fused_stream_resample speedup_vs_baseline,fused_stream_resample time_vs_random");
    CHECK_THAT(adv, ContainsSubstring(",1.39412\n"));  // 474 / 340 in %.6g
    CHECK(csv.at("glu_bf16.csv").find("time_vs_random") == std::string::npos);
    // Without any ratio (the glu table alone) the Markdown has no such sentence.
    result_selection sel;
    sel.suites = {"glu"};
    CHECK(tables_markdown(build_tables(sources, sel), sources).find("x random") == std::string::npos);
}

TEST_CASE("JUnit XML is well formed: one testcase per result, a failure per regression", "[reports][junit]") {
    const auto [b, n] = pull_request_reports();
    const policy p = golden_policy();
    const auto c = compare_reports(parse_report(b, "base.json"), parse_report(n, "new.json"), p);
    const std::string xml = format_compare_junit(c, p);
    std::vector<xml_element> elements;
    REQUIRE(parse_xml(xml, elements));
    REQUIRE_FALSE(elements.empty());
    CHECK(elements.front().name == "testsuites");
    int testcases = 0, failures = 0, skipped = 0;
    for (const auto& e : elements) {
        testcases += e.name == "testcase";
        if (e.name == "failure") {
            ++failures;
            CHECK(e.parent == "testcase");
            CHECK((e.attributes.at("type") == "SLOWER" || e.attributes.at("type") == "CORRECTNESS REGRESSION"));
        }
        skipped += e.name == "skipped";
    }
    CHECK(testcases == static_cast<int>(c.pairs.size()));
    CHECK(failures == c.regressions);
    CHECK(failures == 2);
    CHECK(skipped == 1);  // the MISSING result
    CHECK(elements.front().attributes.at("tests") == std::to_string(c.pairs.size()));
    CHECK(elements.front().attributes.at("failures") == "2");

    // The reader itself rejects what it must.
    std::vector<xml_element> scratch;
    CHECK_FALSE(parse_xml("<a><b></a></b>", scratch));
    CHECK_FALSE(parse_xml("<a x=\"1 & 2\"/>", scratch));
    CHECK_FALSE(parse_xml("<a/><b/>", scratch));
}

TEST_CASE("compare JSON carries every verdict and the exit code", "[reports][json]") {
    const auto [b, n] = pull_request_reports();
    const policy p = golden_policy();
    const auto c = compare_reports(parse_report(b, "base.json"), parse_report(n, "new.json"), p);
    const auto j = compare_to_json(c, p);
    CHECK(j["schema"]["name"] == "fusebench-compare");
    CHECK(j["exit_code"] == 1);
    CHECK(j["results"].size() == c.pairs.size());
    int failing = 0;
    for (const auto& r : j["results"]) failing += r["fails_gate"].get<bool>();
    CHECK(failing == 2);
    CHECK(j["counts"]["SLOWER"] == 1);
    CHECK(j["counts"]["CORRECTNESS REGRESSION"] == 1);
}
