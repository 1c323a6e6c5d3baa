// Shapes from the command line (--shape, --shapes): parsing against each suite's declared axes and
// options, the cases they become, and one clear line with exit 2 for every bad shape.
#include "harness/runner.hpp"
#include "harness/shapes.hpp"
#include "suites/suites.hpp"
#include "support/shell.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace fusebench;

namespace {

std::vector<const suite*> all_of(const registry& reg) {
    std::vector<const suite*> out;
    for (const auto& s : reg.suites()) out.push_back(&s);
    return out;
}

fusebench::test::shell_result run_cli(const std::string& args) {
    return fusebench::test::run_shell(std::string(FUSEBENCH_CLI) + " " + args + " 2>&1");
}

}  // namespace

TEST_CASE("a shape names its suite's axes and options; left-out axes take their defaults", "[shapes]") {
    registry reg;
    register_all(reg);
    const auto all = all_of(reg);
    const user_shape g = parse_user_shape(reg, all, " glu : tokens = 8192 , inter=28672 ");
    CHECK(g.suite == "glu");
    CHECK(g.dims.at("tokens") == 8192);
    CHECK(g.dims.at("inter") == 28672);
    CHECK(g.options.at("act") == "swiglu");

    const user_shape a = parse_user_shape(reg, all, "attention:seq_kv=4096,heads_kv=8,causal=no");
    CHECK(a.dims.at("batch") == 1);
    CHECK(a.dims.at("heads_q") == 32);
    CHECK(a.dims.at("head_dim") == 128);
    CHECK(a.dims.count("seq_q") == 0);  // derived from seq_kv by the suite
    CHECK(a.options.at("causal") == "no");

    // Without a prefix the shape belongs to the one selected suite.
    const suite* rms = reg.find("rmsnorm");
    CHECK(parse_user_shape(reg, {rms}, "tokens=3,hidden=5,inplace=yes").suite == "rmsnorm");
}

TEST_CASE("every malformed shape is refused with the reason", "[shapes]") {
    registry reg;
    register_all(reg);
    const auto all = all_of(reg);
    const auto [text, needle] = GENERATE(table<std::string, std::string>({
        {"glu:tokens=0,inter=5", "tokens must be in [1, 2147483647], got 0"},
        {"glu:tokens=-3,inter=5", "tokens must be positive"},
        {"glu:tokens=99999999999999999999,inter=5", "overflows a 64-bit integer"},
        {"glu:tokens=1.5,inter=2", "must be a whole number"},
        {"glu:tokens=,inter=2", "must be a whole number"},
        {"glu:tok=1,inter=2", "has no dimension or option 'tok'"},
        {"glu:tokens=1", "missing inter"},
        {"glu:tokens=1,tokens=2,inter=3", "given twice"},
        {"glu:tokens=1,,inter=3", "empty item"},
        {"glu:tokens 1", "not name=value"},
        {"glu:", "no dimensions given"},
        {"glu:tokens=1,inter=2,act=relu", "act must be one of swiglu, geglu_tanh, geglu_erf"},
        {"nosuch:x=1", "unknown suite 'nosuch'"},
        {"tokens=1,inter=2", "name the suite"},
        {"softmax_topk:rows=1,V=5,K=6", "K must not exceed V"},
        {"attention:seq_kv=10,seq_q=20", "seq_q <= seq_kv"},
        {"attention:seq_kv=10,heads_kv=5", "multiple of heads_kv"},
        {"attention:seq_kv=1048576,seq_q=1048576,batch=65535,heads_q=65535,heads_kv=65535,head_dim=1024", "exceeds 2^62"},
    }));
    CAPTURE(text);
    try {
        (void)parse_user_shape(reg, all, text);
        FAIL("accepted");
    } catch (const usage_error& e) {
        CHECK(std::string(e.what()).find(needle) != std::string::npos);
        CHECK(std::string(e.what()).find(text) != std::string::npos);  // the message names the shape
    }
}

TEST_CASE("shapes become cases named as the built-in ones, in the suite's default dtypes or --dtype", "[shapes]") {
    registry reg;
    register_all(reg);
    selection_filter f;
    f.shapes = {"glu:tokens=4096,inter=14336", "attention:seq_kv=8192,heads_kv=8", "softmax_topk:rows=4096,V=50257,K=10"};
    auto items = select_work(reg, f);
    REQUIRE(items.size() == 3);
    CHECK(items[0].s->name == "glu");
    CHECK(items[0].c.name == "swiglu:4096x14336");  // the built-in production case's key
    CHECK(items[0].c.type == dtype::bf16);
    CHECK(items[0].c.timed);
    CHECK(items[1].c.name == "b1h32kv8s8192d128:causal");
    CHECK(items[1].c.dim("seq_q") == 8192);
    CHECK(items[1].c.dim("heads_kv") == 8);
    CHECK(items[2].c.name == "4096x50257:K10:std10");
    CHECK(items[2].c.type == dtype::f32);
    // The built-in case of the same name has the same dims and params.
    bool matched = false;
    for (const auto& c : reg.find("glu")->cases()) {
        if (c.name == "swiglu:4096x14336" && c.type == dtype::bf16) {
            matched = c.dims == items[0].c.dims && c.params == items[0].c.params;
        }
    }
    CHECK(matched);

    f.dtypes = {dtype::bf16, dtype::f16};
    f.shapes = {"glu:tokens=7,inter=9,act=geglu_erf"};
    items = select_work(reg, f);
    REQUIRE(items.size() == 2);
    CHECK(items[0].c.name == "geglu_erf:7x9");
    CHECK(items[1].c.type == dtype::f16);

    f.dtypes = {dtype::f32};
    f.shapes = {"attention:seq_kv=64"};
    CHECK_THROWS_AS(select_work(reg, f), usage_error);  // attention takes bf16 and fp16 only

    f.dtypes = {};
    f.shapes = {"glu:tokens=1000000,inter=1000000"};
    CHECK_THROWS_AS(select_work(reg, f), usage_error);  // terabytes
}

TEST_CASE("a shapes file holds one shape per line, with comments", "[shapes]") {
    const auto path = std::filesystem::temp_directory_path() / "fusebench-shapes-test.txt";
    {
        std::ofstream out(path);
        out << "# Llama-3-70B MLP\nglu: tokens=8192, inter=28672   # decode batch\n\n  rmsnorm:tokens=8192,hidden=8192\n";
    }
    const auto lines = read_shapes_file(path.string());
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "glu: tokens=8192, inter=28672");
    CHECK(lines[1] == "rmsnorm:tokens=8192,hidden=8192");
    {
        std::ofstream out(path);
        out << "# nothing\n\n";
    }
    CHECK_THROWS_AS(read_shapes_file(path.string()), usage_error);
    std::filesystem::remove(path);
    CHECK_THROWS_AS(read_shapes_file(path.string()), usage_error);
}

TEST_CASE("the CLI refuses a bad shape with one line and exit 2, before looking for a GPU", "[shapes][cli]") {
    for (const char* args : {"run --shape glu:tokens=0,inter=5", "list --shape glu:tok=1,inter=2", "gbench --shape glu:tokens=1",
                             "run --shapes /nonexistent/shapes.txt", "run --suite glu --shape attention:seq_kv=4"}) {
        CAPTURE(args);
        const auto r = run_cli(args);
        CHECK(r.code == 2);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
        CHECK(r.output.find("--shape") != std::string::npos);
    }
    const auto ok = run_cli("list --shape glu:tokens=8192,inter=28672 --shape \"attention: seq_kv=4096\"");
    CHECK(ok.code == 0);
    CHECK(ok.output.find("case swiglu:8192x28672") != std::string::npos);
    CHECK(ok.output.find("case b1h32s4096d128:causal") != std::string::npos);
    CHECK(ok.output.find("--shape tokens (1..2147483647, required)") != std::string::npos);
}

TEST_CASE("a program of its own adds a variant to a built-in family, and bad additions are refused", "[registry]") {
    registry reg;
    register_all(reg);
    variant v;
    v.name = "mine";
    v.launch = [](const launch_args&) {};
    v.model = [](const case_desc&) { return traffic_model{}; };
    reg.add_variant("glu", v);
    const suite* glu = reg.find("glu");
    CHECK(glu->variants.back().name == "mine");
    CHECK(glu->baseline()->name == "naive");
    CHECK_THROWS_AS(reg.add_variant("glu", v), std::invalid_argument);       // same name twice
    CHECK_THROWS_AS(reg.add_variant("nosuch", v), std::invalid_argument);    // no such suite
    variant b = v;
    b.name = "other_baseline";
    b.role = variant_role::baseline;
    CHECK_THROWS_AS(reg.add_variant("glu", b), std::invalid_argument);       // one baseline per suite
    variant no_model = v;
    no_model.name = "no_model";
    no_model.model = nullptr;
    CHECK_THROWS_AS(reg.add_variant("glu", no_model), std::invalid_argument);
    // It runs on the family's cases.
    selection_filter f;
    f.suites = {"glu"};
    f.variants = {"mine"};
    f.quick = true;
    const auto items = select_work(reg, f);
    REQUIRE_FALSE(items.empty());
    bool has_mine = false;
    for (const variant* x : items.front().variants) has_mine = has_mine || x->name == "mine";
    CHECK(has_mine);
}
