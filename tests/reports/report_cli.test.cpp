// `fusebench compare | table | merge` as a user runs them: exit codes, one line per bad input,
// and no output file written or changed when the input is bad.
#include "reports/synthetic_report.hpp"
#include "support/shell.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>


using namespace fusebench::test;
using Catch::Matchers::ContainsSubstring;

namespace {

struct cli_result {
    int code = -1;
    std::string out, err;
};

cli_result run_fusebench(const temp_dir& dir, const std::string& args) {
    const std::string err_file = dir.file("stderr.txt");
    const shell_result sh = run_shell(std::string(FUSEBENCH_CLI) + " " + args + " 2>" + err_file);
    return {sh.code, sh.output, read_text(err_file)};
}

std::size_t lines(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

synth_result timed_result(const std::string& variant, double median_us) {
    synth_result r;
    r.variant = variant;
    r.median_us = median_us;
    r.noise = 0.002;
    return r;
}

}  // namespace

TEST_CASE("compare: exit 0 without a regression, 1 with one; every output written", "[reports][cli]") {
    temp_dir d;
    const auto base = d.write("base.json", make_report({timed_result("fused_vec", 80), timed_result("naive", 390)}));
    const auto same = d.write("same.json", make_report({timed_result("fused_vec", 80.2), timed_result("naive", 389)}));
    const auto slow = d.write("slow.json", make_report({timed_result("fused_vec", 89), timed_result("naive", 390)}));

    auto r = run_fusebench(d, "compare " + base + " " + same);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("no regression"));

    r = run_fusebench(d, "compare " + base + " " + slow + " --markdown " + d.file("c.md") + " --json " + d.file("c.json") +
                             " --junit " + d.file("c.xml"));
    CHECK(r.code == 1);
    CHECK_THAT(r.out, ContainsSubstring("SLOWER") && ContainsSubstring("fused_vec"));
    CHECK_THAT(read_text(d.file("c.md")), ContainsSubstring("### fusebench compare: 1 regression"));
    CHECK(nlohmann::json::parse(read_text(d.file("c.json")))["exit_code"] == 1);
    CHECK_THAT(read_text(d.file("c.xml")), ContainsSubstring("<failure type=\"SLOWER\""));

    // An improvement never fails, whichever side it is on.
    r = run_fusebench(d, "compare " + slow + " " + base);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("FASTER"));

    // --threshold loosens the global threshold.
    r = run_fusebench(d, "compare " + base + " " + slow + " --threshold 0.2");
    CHECK(r.code == 0);
}

// A gate for one family: `--suite` (and --case, --dtype, --variant, as run selects) leaves the other
// results out of the verdicts and the exit code, and says so.
TEST_CASE("compare with a selection judges only the selected results", "[reports][cli]") {
    temp_dir d;
    auto rms = [](double us) {
        synth_result r = timed_result("fused_vec", us);
        r.suite = "rmsnorm";
        r.case_name = "4096x4096";
        return r;
    };
    const auto base = d.write("base.json", make_report({timed_result("fused_vec", 80), rms(40)}));
    const auto now = d.write("new.json", make_report({timed_result("fused_vec", 80.1), rms(48)}));  // rmsnorm 20% slower

    auto r = run_fusebench(d, "compare " + base + " " + now);
    CHECK(r.code == 1);

    r = run_fusebench(d, "compare " + base + " " + now + " --suite glu --json " + d.file("c.json") + " --markdown " + d.file("c.md"));
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("selection: --suite glu: 1 of 2 results of BASE, 1 of 2 of NEW"));
    CHECK_THAT(r.out, !ContainsSubstring("rmsnorm"));
    const auto j = nlohmann::json::parse(read_text(d.file("c.json")));
    CHECK(j["selection"]["suites"] == nlohmann::json::array({"glu"}));
    CHECK(j["selection"]["base_results"] == 1);
    CHECK(j["results"].size() == 1);
    CHECK_THAT(read_text(d.file("c.md")), ContainsSubstring("**Selection:** --suite glu"));

    // The regression is still caught when it is selected, by case substring and variant.
    r = run_fusebench(d, "compare " + base + " " + now + " --case 4096x4096 --variant fused_vec");
    CHECK(r.code == 1);
    CHECK_THAT(r.out, ContainsSubstring("SLOWER") && ContainsSubstring("rmsnorm"));

    // Without a selection the JSON says null; a selection that matches nothing is bad input.
    r = run_fusebench(d, "compare " + base + " " + now + " --json " + d.file("all.json"));
    CHECK(nlohmann::json::parse(read_text(d.file("all.json")))["selection"].is_null());
    r = run_fusebench(d, "compare " + base + " " + now + " --dtype fp16");
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, ContainsSubstring("no result matches the selection (--dtype fp16)"));
}

TEST_CASE("bad input: one clear line, exit 2, nothing overwritten", "[reports][cli]") {
    temp_dir d;
    const nlohmann::json good_doc = make_report({timed_result("fused_vec", 80)});
    const auto good = d.write("good.json", good_doc);
    const std::string good_text = read_text(good);
    d.write("not_json.json", std::string("fusebench was here\n"));
    d.write("empty.json", std::string(""));
    d.write("truncated.json", good_text.substr(0, good_text.size() / 2));
    d.write("array.json", std::string("[1, 2, 3]"));
    nlohmann::json other = good_doc;
    other["schema"]["name"] = "nvbench-report";
    d.write("other_tool.json", other);
    nlohmann::json newer = good_doc;
    newer["schema"]["version"] = 2;
    d.write("newer.json", newer);
    nlohmann::json older = good_doc;
    older["schema"]["version"] = 0;
    d.write("older.json", older);
    nlohmann::json invalid = good_doc;
    invalid["results"][0]["outcome"] = "maybe";
    d.write("invalid.json", invalid);
    synth_result elsewhere = timed_result("fused_vec", 80);
    elsewhere.suite = "rmsnorm";
    d.write("disjoint.json", make_report({elsewhere}));
    d.write("bad_policy.json", std::string(R"({"fusebench_policy": 1, "threshold": "five"})"));

    const std::string keep = "previous contents\n";
    const auto md = d.write("out.md", keep);
    const auto [args, needle] = GENERATE(table<std::string, std::string>({
        {"compare good.json missing.json", "missing.json: cannot read"},
        {"compare good.json not_json.json", "not JSON"},
        {"compare good.json empty.json", "empty file"},
        {"compare good.json truncated.json", "truncated JSON"},
        {"compare good.json array.json", "not a fusebench report"},
        {"compare good.json other_tool.json", "not a fusebench report"},
        {"compare good.json newer.json", "schema version 2 is newer"},
        {"compare good.json older.json", "schema version 0 is not supported"},
        {"compare good.json invalid.json", "does not match report schema"},
        {"compare good.json disjoint.json", "no result in common"},
        {"compare good.json", "expected BASE.json NEW.json"},
        {"compare good.json good.json --policy bad_policy.json", "threshold"},
        {"compare good.json good.json --policy nope.json", "cannot read the policy"},
        {"compare good.json good.json --threshold lots", "--threshold"},
        {"compare good.json good.json --frobnicate", "unknown option '--frobnicate'"},
        {"compare good.json good.json --markdown good.json", "refusing to overwrite"},
        {"table truncated.json", "truncated JSON"},
        {"table good.json --labels a,b", "--labels"},
        {"merge merged.json good.json newer.json", "newer"},
        {"merge good.json good.json", "refusing to overwrite"},
    }));
    CAPTURE(args);
    std::string full;
    // File names are relative to the temp folder.
    std::string word;
    for (std::size_t i = 0; i <= args.size(); ++i) {
        if (i == args.size() || args[i] == ' ') {
            full += (full.empty() ? "" : " ") + (word.find(".json") != std::string::npos ? d.file(word) : word);
            word.clear();
        } else {
            word += args[i];
        }
    }
    // Every compare also asks for a Markdown file: it must stay as it was.
    if (args.rfind("compare", 0) == 0 && args.find("--markdown") == std::string::npos) full += " --markdown " + md;
    const auto r = run_fusebench(d, full);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, ContainsSubstring(needle));
    CHECK(r.out.empty());
    CHECK(read_text(md) == keep);
    CHECK(read_text(good) == good_text);
    CHECK_FALSE(std::filesystem::exists(d.file("merged.json")));
}

TEST_CASE("a gzip-compressed report reads as its JSON; corrupt or cut-off gzip is one clear line, exit 2", "[reports][cli]") {
    temp_dir d;
    const auto base = d.write("base.json", make_report({timed_result("fused_vec", 80), timed_result("naive", 390)}));
    const auto slow = d.write("slow.json", make_report({timed_result("fused_vec", 89), timed_result("naive", 390)}));
    // gzip -k keeps the plain file beside the compressed one.
    REQUIRE(run_shell("gzip -k " + slow + " && gzip -k " + base).code == 0);
    const std::string gz = read_text(slow + ".gz");
    REQUIRE(gz.size() > 20);
    d.write("cut.json.gz", gz.substr(0, gz.size() / 2));
    std::string flipped = gz;
    flipped[gz.size() / 2] = static_cast<char>(flipped[gz.size() / 2] ^ 0x5A);
    d.write("flipped.json.gz", flipped);

    const auto plain = run_fusebench(d, "compare " + base + " " + slow);
    const auto packed = run_fusebench(d, "compare " + base + ".gz " + slow + ".gz");
    const auto cut = run_fusebench(d, "compare " + base + " " + d.file("cut.json.gz"));
    const auto bad = run_fusebench(d, "table " + d.file("flipped.json.gz"));
#if FUSEBENCH_TEST_HAVE_ZLIB
    CHECK(plain.code == 1);
    CHECK(packed.code == plain.code);
    CHECK_THAT(packed.out, ContainsSubstring("SLOWER") && ContainsSubstring("fused_vec"));
    CHECK(lines(packed.out) == lines(plain.out));
    CHECK(cut.code == 2);
    CHECK(lines(cut.err) == 1);
    CHECK_THAT(cut.err, ContainsSubstring("cut.json.gz") && ContainsSubstring("gzip"));
    CHECK(bad.code == 2);
    CHECK(lines(bad.err) == 1);
    CHECK_THAT(bad.err, ContainsSubstring("flipped.json.gz") && ContainsSubstring("gzip"));
#else
    CHECK(plain.code == 1);
    CHECK(packed.code == 2);
    CHECK_THAT(packed.err, ContainsSubstring("has no zlib: gunzip it first"));
#endif
}

TEST_CASE("table writes Markdown and one CSV per suite and dtype", "[reports][cli]") {
    temp_dir d;
    synth_result fp32 = timed_result("fused_vec", 160);
    fp32.dtype = "fp32";
    const auto rep = d.write("h200.json", make_report({timed_result("naive", 390), timed_result("fused_vec", 80), fp32}));
    const auto r = run_fusebench(d, "table " + rep + " --markdown " + d.file("t.md") + " --csv " + d.file("csv"));
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("### glu · bf16") && ContainsSubstring("### glu · fp32"));
    CHECK(read_text(d.file("t.md")) == r.out);
    CHECK_THAT(read_text(d.file("csv/glu_bf16.csv")), ContainsSubstring("case,report,naive outcome,naive median_us"));
    CHECK(std::filesystem::exists(d.file("csv/glu_fp32.csv")));
}

TEST_CASE("merge pairs an input kind with its random-input twin from another shard (time_vs_random)", "[reports][cli][merge]") {
    temp_dir d;
    synth_result twin = timed_result("fused_vec", 100), kind = timed_result("fused_vec", 150);
    kind.case_name = "swiglu:4096x14336:odd";
    kind.input_kind = "odd";
    const auto s1 = d.write("twin.json", make_report({twin}, {}, "0.1.0", 11));
    const auto s2 = d.write("kind.json", make_report({kind}, {}, "0.1.0", 12));
    const auto r = run_fusebench(d, "merge " + d.file("all.json") + " " + s1 + " " + s2);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(read_text(d.file("all.json")));
    REQUIRE(j["results"].size() == 2);
    CHECK(j["results"][1]["derived"]["time_vs_random"] == 1.5);
    CHECK(j["results"][0]["derived"]["time_vs_random"].is_null());
    CHECK_THAT(j["results"][0]["derived"]["null_reasons"]["time_vs_random"].get<std::string>(), ContainsSubstring("random-input case"));
}

TEST_CASE("merge joins shards and GPUs, refuses mixed tools and repeats without --force", "[reports][cli][merge]") {
    temp_dir d;
    synth_device h100{"NVIDIA H100 80GB HBM3", "h100", "GPU-bbbbbbbb-0000-0000-0000-000000000002", 3000, 0.004};
    const auto s1 = d.write("shard1.json", make_report({timed_result("naive", 390)}, {}, "0.1.0", 11));
    const auto s2 = d.write("shard2.json", make_report({timed_result("fused_vec", 80)}, {}, "0.1.0", 12));
    const auto other_gpu = d.write("h100.json", make_report({timed_result("naive", 550), timed_result("fused_vec", 112)}, h100));
    const auto newer_tool = d.write("tool2.json", make_report({timed_result("fused_scalar", 284)}, {}, "0.2.0"));

    SECTION("two shards on one device: a plain report of that device") {
        const auto r = run_fusebench(d, "merge " + d.file("all.json") + " " + s1 + " " + s2);
        REQUIRE(r.code == 0);
        const auto j = nlohmann::json::parse(read_text(d.file("all.json")));
        CHECK(j["results"].size() == 2);
        CHECK(j["device"]["uuid"] == "GPU-aaaaaaaa-0000-0000-0000-000000000001");
        CHECK_FALSE(j.contains("devices"));
        CHECK(j["merged_from"].size() == 2);
        CHECK(j["merged_from"][1]["seed"] == 12);
        CHECK(j["summary"]["pass"] == 2);
        // The merged report is a report: compare reads it.
        const auto c = run_fusebench(d, "compare " + s2 + " " + d.file("all.json"));
        CHECK(c.code == 0);
        // An existing output is never replaced without --overwrite.
        const std::string before = read_text(d.file("all.json"));
        auto again = run_fusebench(d, "merge " + d.file("all.json") + " " + s1 + " " + s2);
        CHECK(again.code == 2);
        CHECK_THAT(again.err, ContainsSubstring("--overwrite"));
        CHECK(read_text(d.file("all.json")) == before);
        again = run_fusebench(d, "merge " + d.file("all.json") + " " + s1 + " " + s2 + " --overwrite");
        CHECK(again.code == 0);
    }
    SECTION("two GPUs: results keyed by device, each with its own ceilings") {
        const auto r = run_fusebench(d, "merge " + d.file("gpus.json") + " " + s1 + " " + s2 + " " + other_gpu);
        REQUIRE(r.code == 0);
        const auto j = nlohmann::json::parse(read_text(d.file("gpus.json")));
        CHECK(j["device"].is_null());
        REQUIRE(j["devices"].size() == 2);
        CHECK(j["devices"][1]["ceilings"]["copy_gbps"]["value"] == 3000.0);
        CHECK(j["results"].size() == 4);
        CHECK(j["results"][3]["device_index"] == 1);
        // The same naive result on two devices is not a repeat; the table shows both devices.
        const auto t = run_fusebench(d, "table " + d.file("gpus.json"));
        CHECK(t.code == 0);
        CHECK_THAT(t.out, ContainsSubstring("| h200 |") && ContainsSubstring("| h100 |"));
        // Compared with itself, every result is matched by device too.
        const auto c = run_fusebench(d, "compare " + d.file("gpus.json") + " " + d.file("gpus.json"));
        CHECK(c.code == 0);
        CHECK_THAT(c.out, ContainsSubstring("4 SAME"));
    }
    SECTION("different tool versions and repeated results need --force") {
        auto r = run_fusebench(d, "merge " + d.file("m.json") + " " + s1 + " " + newer_tool);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, ContainsSubstring("tool.tool_version differs"));
        CHECK_FALSE(std::filesystem::exists(d.file("m.json")));
        r = run_fusebench(d, "merge " + d.file("m.json") + " " + s1 + " " + newer_tool + " --force");
        CHECK(r.code == 0);
        CHECK_THAT(r.err, ContainsSubstring("forced"));

        const auto rerun = d.write("rerun.json", make_report({timed_result("naive", 391)}, {}, "0.1.0", 13));
        r = run_fusebench(d, "merge " + d.file("m2.json") + " " + s1 + " " + rerun);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, ContainsSubstring("is in both"));
        r = run_fusebench(d, "merge " + d.file("m2.json") + " " + s1 + " " + rerun + " --force");
        CHECK(r.code == 0);
        const auto j = nlohmann::json::parse(read_text(d.file("m2.json")));
        REQUIRE(j["results"].size() == 1);
        CHECK(j["results"][0]["timing"]["median_us"] == 391.0);
    }
}
