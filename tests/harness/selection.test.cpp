// The default selection and --full: cases and variants marked full_only run only with --full, or
// when --case / --variant names them; everything else is the same in both.
#include "harness/runner.hpp"
#include "suites/suites.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <set>
#include <string>

using namespace fusebench;

namespace {

std::set<std::string> case_keys(const std::vector<selection_item>& items) {
    std::set<std::string> out;
    for (const auto& it : items) out.insert(it.s->name + "/" + it.c.name + "/" + std::string(dtype_name(it.c.type)));
    return out;
}

bool has_variant(const std::vector<selection_item>& items, const std::string& name) {
    return std::any_of(items.begin(), items.end(), [&](const selection_item& it) {
        return std::any_of(it.variants.begin(), it.variants.end(), [&](const variant* v) { return v->name == name; });
    });
}

}  // namespace

TEST_CASE("the default run leaves out what is marked full_only; --full and naming bring it back", "[selection]") {
    registry reg;
    register_all(reg);
    selection_filter def;
    def.suites = {"softmax_topk"};
    selection_filter full = def;
    full.full = true;
    const auto d = select_work(reg, def), f = select_work(reg, full);
    const auto dk = case_keys(d), fk = case_keys(f);

    // Every default case is in the full sweep; the full sweep has more; the difference is exactly
    // the cases marked full_only, all of them timed (no verified-only edge case is left out).
    CHECK(std::includes(fk.begin(), fk.end(), dk.begin(), dk.end()));
    CHECK(fk.size() > dk.size());
    std::size_t full_only = 0;
    for (const auto& it : f) {
        const bool in_default = dk.count(it.s->name + "/" + it.c.name + "/" + std::string(dtype_name(it.c.type))) > 0;
        CHECK(in_default == !it.c.full_only);
        if (it.c.full_only) {
            ++full_only;
            CHECK(it.c.timed);
        }
    }
    CHECK(full_only == fk.size() - dk.size());
    CHECK(dk.count("softmax_topk/4096x50257:K10:std10/bf16") == 1);
    CHECK(dk.count("softmax_topk/4096x32000:K50:std1/fp32") == 0);
    CHECK(fk.count("softmax_topk/4096x32000:K50:std1/fp32") == 1);

    // Variants: fused_v1 only with --full or by name.
    CHECK_FALSE(has_variant(d, "fused_v1"));
    CHECK(has_variant(f, "fused_v1"));
    CHECK(has_variant(d, "fused_stream"));
    selection_filter named = def;
    named.variants = {"fused_v1"};
    CHECK(has_variant(select_work(reg, named), "fused_v1"));

    // --case naming a full-only case selects it without --full.
    selection_filter by_case = def;
    by_case.cases = {"4096x32000:K50"};
    const auto bc = case_keys(select_work(reg, by_case));
    CHECK(bc.count("softmax_topk/4096x32000:K50:std1/fp32") == 1);
}

TEST_CASE("every default suite keeps timed cases in the default run", "[selection]") {
    registry reg;
    register_all(reg);
    for (const auto& s : reg.suites()) {
        if (!s.default_run) continue;
        selection_filter f;
        f.suites = {s.name};
        std::size_t timed = 0;
        for (const auto& it : select_work(reg, f)) timed += it.c.timed;
        INFO(s.name);
        CHECK(timed >= 5);
    }
}
