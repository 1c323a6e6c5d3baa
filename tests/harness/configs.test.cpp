// Tuning configurations: a variant declares them, registration expands them into results of their
// own, --config selects some, the launch receives its configuration, the report names it and the
// table shows the best configuration of each case.
#include "harness/report.hpp"
#include "harness/runner.hpp"
#include "harness/table.hpp"
#include "suites/suites.hpp"

#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

using namespace fusebench;

namespace {

variant tuned(std::vector<std::string>* launched) {
    variant v;
    v.name = "tuned";
    v.launch = [launched](const launch_args& a) { launched->emplace_back(a.config); };
    v.model = [](const case_desc&) { return traffic_model{}; };
    v.configs = {{"V0", "128 x 64 tiles"}, {"V1", "64 x 64 tiles"}, {"V2", "128 x 128 tiles"}};
    return v;
}

}  // namespace

TEST_CASE("a variant's configurations become entries of their own, each launched with its configuration", "[configs]") {
    registry reg;
    register_all(reg);
    std::vector<std::string> launched;
    reg.add_variant("glu", tuned(&launched));
    std::vector<const variant*> entries;
    for (const auto& v : reg.find("glu")->variants)
        if (v.name == "tuned") entries.push_back(&v);
    REQUIRE(entries.size() == 3);
    CHECK(entries[0]->config == "V0");
    CHECK(entries[2]->config == "V2");
    CHECK(entries[1]->description.find("configuration V1: 64 x 64 tiles") != std::string::npos);
    const case_desc c;
    for (const variant* v : entries) v->launch(launch_args{c, {}, {}, nullptr, 0, nullptr});
    CHECK(launched == std::vector<std::string>{"V0", "V1", "V2"});

    // --config keeps the named configurations (and every variant without configurations).
    selection_filter f;
    f.suites = {"glu"};
    f.quick = true;
    f.configs = {"V1"};
    const auto items = select_work(reg, f);
    std::size_t tuned_entries = 0, plain = 0;
    for (const variant* v : items.front().variants) {
        if (v->name == "tuned") {
            ++tuned_entries;
            CHECK(v->config == "V1");
        } else {
            ++plain;
        }
    }
    CHECK(tuned_entries == 1);
    CHECK(plain == 3);  // naive, fused_scalar, fused_vec
    f.configs = {"V9"};
    CHECK_THROWS_AS(select_work(reg, f), usage_error);

    // Bad declarations.
    variant dup = tuned(&launched);
    dup.name = "dup";
    dup.configs = {{"A", ""}, {"A", ""}};
    CHECK_THROWS_AS(reg.add_variant("glu", dup), std::invalid_argument);
}

TEST_CASE("a configuration's own domain and workspace replace the variant's for its entry only", "[configs]") {
    registry reg;
    register_all(reg);
    std::vector<std::string> launched;
    variant v = tuned(&launched);
    v.req.supports = [](const case_desc&) -> std::optional<std::string> { return std::nullopt; };
    v.req.domain = "every case";
    v.workspace_bytes = [](const case_desc&) { return std::size_t{16}; };
    // V1 narrows the domain; V2 needs more workspace; V0 keeps the variant's.
    v.configs[1].supports = [](const case_desc& c) -> std::optional<std::string> {
        if (c.name == "small") return std::nullopt;
        return std::string("V1 takes the small case only");
    };
    v.configs[1].domain = "the small case";
    v.configs[2].workspace_bytes = [](const case_desc&) { return std::size_t{4096}; };
    reg.add_variant("glu", v);
    std::vector<const variant*> e;
    for (const auto& x : reg.find("glu")->variants)
        if (x.name == "tuned") e.push_back(&x);
    REQUIRE(e.size() == 3);
    case_desc small, big;
    small.name = "small";
    big.name = "big";
    CHECK_FALSE(e[0]->req.supports(big).has_value());
    CHECK(e[0]->req.domain == "every case");
    CHECK(e[0]->workspace_bytes(big) == 16);
    CHECK_FALSE(e[1]->req.supports(small).has_value());
    REQUIRE(e[1]->req.supports(big).has_value());
    CHECK(*e[1]->req.supports(big) == "V1 takes the small case only");
    CHECK(e[1]->req.domain == "the small case");
    CHECK(e[1]->workspace_bytes(big) == 16);
    CHECK_FALSE(e[2]->req.supports(big).has_value());
    CHECK(e[2]->req.domain == "every case");
    CHECK(e[2]->workspace_bytes(big) == 4096);
}

TEST_CASE("the report names the configuration and the table keeps the fastest passing one", "[configs]") {
    std::vector<variant_result> rs(4);
    const double medians[] = {30.0, 20.0, 10.0, 5.0};
    const char* configs[] = {"V0", "V1", "V2", ""};
    for (std::size_t i = 0; i < rs.size(); ++i) {
        rs[i].suite = "glu";
        rs[i].c.name = "4x4";
        rs[i].variant = i < 3 ? "tuned" : "fused_vec";
        rs[i].config = configs[i];
        rs[i].result = outcome::pass;
        timed_run t;
        t.stats.median = medians[i];
        t.stats.n = 10;
        rs[i].timing = t;
    }
    rs[2].result = outcome::fail;  // the fastest configuration failed: not the best
    rs[2].timing.reset();
    const auto j = make_report(report_context{}, rs, nlohmann::json::array());
    CHECK(j["results"][0]["config"] == "V0");
    CHECK_FALSE(j["results"][3].contains("config"));
    const std::string table = format_results_table(j["results"]);
    CHECK(table.find("tuned [V1, best of 3]") != std::string::npos);
    CHECK(table.find("[V0") == std::string::npos);
    CHECK(table.find("[V2") == std::string::npos);
    CHECK(table.find("fused_vec") != std::string::npos);
}

TEST_CASE("the table shows the configuration that ran where the first one was skipped", "[configs]") {
    // attention's head_dim 256: the default tiling is skipped, another configuration verifies the
    // (untimed) case; a failing configuration is shown before a skipped one.
    std::vector<variant_result> rs(6);
    const char* configs[] = {"V0", "V1", "V2", "W0", "W1", "W2"};
    const outcome outcomes[] = {outcome::skipped, outcome::skipped, outcome::pass, outcome::skipped, outcome::fail, outcome::skipped};
    for (std::size_t i = 0; i < rs.size(); ++i) {
        rs[i].suite = "attention";
        rs[i].c.name = i < 3 ? "d256" : "d512";
        rs[i].variant = "tuned";
        rs[i].config = configs[i];
        rs[i].result = outcomes[i];
    }
    const auto j = make_report(report_context{}, rs, nlohmann::json::array());
    const std::string table = format_results_table(j["results"]);
    CHECK(table.find("tuned [V2, best of 3]") != std::string::npos);
    CHECK(table.find("tuned [W1, best of 3]") != std::string::npos);
    CHECK(table.find("[V0") == std::string::npos);
    CHECK(table.find("[W0") == std::string::npos);
}
