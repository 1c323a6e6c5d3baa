#include "harness/registry.hpp"

#include <algorithm>

#include <functional>
#include <set>
#include <stdexcept>

namespace fusebench {

std::int64_t case_desc::dim(const std::string& key) const {
    const auto it = dims.find(key);
    if (it == dims.end()) throw std::out_of_range("case '" + name + "' has no dimension '" + key + "'");
    return it->second;
}

double case_desc::param(const std::string& key, double fallback) const {
    const auto it = params.find(key);
    return it == params.end() ? fallback : it->second;
}

tolerance tolerance_policy::for_type(dtype t) const {
    const auto it = per_dtype.find(t);
    if (it == per_dtype.end()) {
        throw std::invalid_argument("no tolerance declared for output dtype " + std::string(dtype_name(t)));
    }
    return it->second;
}

const variant* suite::baseline() const {
    for (const auto& v : variants) {
        if (v.role == variant_role::baseline) return &v;
    }
    return nullptr;
}

std::string suite::judging_baseline(const variant& v) const {
    if (!v.baseline_variant.empty()) return v.baseline_variant;
    const variant* b = baseline();
    return b ? b->name : std::string();
}

namespace {
void check_variant(const variant& v, const std::function<void(const std::string&)>& bad) {
    if (v.name.empty()) bad("a variant has no name");
    if (!v.launch) bad("variant '" + v.name + "' has no launch function");
    if (!v.model) bad("variant '" + v.name + "' has no traffic model");
}

// A named same-precision baseline must be another variant of the suite, without configurations
// (one result per case to judge against), which names no baseline of its own (no chains).
void check_baseline_variant(const suite& s, const variant& v, const std::function<void(const std::string&)>& bad) {
    if (v.baseline_variant.empty()) return;
    if (v.baseline_variant == v.name) bad("variant '" + v.name + "' names itself as its baseline");
    bool found = false;
    for (const auto& b : s.variants) {
        if (b.name != v.baseline_variant) continue;
        found = true;
        if (!b.config.empty()) bad("variant '" + v.name + "' names '" + b.name + "' as its baseline, which has configurations");
        if (!b.baseline_variant.empty()) {
            bad("variant '" + v.name + "' names '" + b.name + "' as its baseline, which names a baseline of its own");
        }
    }
    if (!found) bad("variant '" + v.name + "' names '" + v.baseline_variant + "' as its baseline: no such variant");
}

// One entry per declared tuning configuration (same name, `config` set, the launch handed it).
std::vector<variant> expand_configs(variant v, const std::function<void(const std::string&)>& bad) {
    std::vector<variant> out;
    if (v.configs.empty()) {
        out.push_back(std::move(v));
        return out;
    }
    if (v.role == variant_role::baseline) bad("the baseline '" + v.name + "' cannot have tuning configurations");
    std::set<std::string> names;
    for (const auto& cfg : v.configs) {
        if (cfg.name.empty() || !names.insert(cfg.name).second) {
            bad("variant '" + v.name + "' declares an unnamed or repeated configuration '" + cfg.name + "'");
        }
        variant e = v;
        e.configs.clear();
        e.config = cfg.name;
        if (cfg.supports) e.req.supports = cfg.supports;
        if (!cfg.domain.empty()) e.req.domain = cfg.domain;
        if (cfg.workspace_bytes) e.workspace_bytes = cfg.workspace_bytes;
        e.description = v.description + " [configuration " + cfg.name + ": " + cfg.description + "]";
        auto launch = v.launch;
        const std::string name = cfg.name;
        if (launch) {
            e.launch = [launch, name](const launch_args& a) {
                const launch_args b{a.c, a.in, a.out, a.workspace, a.workspace_bytes, a.stream, name};
                launch(b);
            };
        }
        out.push_back(std::move(e));
    }
    return out;
}
}  // namespace

suite& registry::add(suite s) {
    auto bad = [&](const std::string& why) {
        throw std::invalid_argument("suite '" + s.name + "': " + why);
    };
    {
        std::vector<variant> expanded;
        for (auto& v : s.variants)
            for (auto& e : expand_configs(std::move(v), bad)) expanded.push_back(std::move(e));
        s.variants = std::move(expanded);
    }
    if (s.name.empty()) bad("empty name");
    if (find(s.name)) bad("registered twice");
    if (!s.cases || !s.input_specs || !s.output_specs || !s.generate || !s.reference) {
        bad("cases, input_specs, output_specs, generate and reference are all required");
    }
    std::set<std::string> names;
    for (const auto& v : s.variants) {
        check_variant(v, bad);
        if (!names.insert(v.label()).second) bad("variant '" + v.label() + "' declared twice");
    }
    for (const auto& v : s.variants) check_baseline_variant(s, v, bad);
    m_suites.push_back(std::move(s));
    return m_suites.back();
}

variant& registry::add_variant(const std::string& suite_name, variant v) {
    auto it = std::find_if(m_suites.begin(), m_suites.end(), [&](const suite& s) { return s.name == suite_name; });
    auto bad = [&](const std::string& why) {
        throw std::invalid_argument("variant '" + v.name + "' for suite '" + suite_name + "': " + why);
    };
    if (it == m_suites.end()) bad("no such suite");
    check_variant(v, bad);
    for (const auto& other : it->variants)
        if (other.name == v.name) bad("the suite already has a variant of that name");
    if (v.role == variant_role::baseline) bad("a suite has one baseline, its own; add fused or peer variants");
    check_baseline_variant(*it, v, bad);
    auto expanded = expand_configs(std::move(v), bad);
    for (auto& e : expanded) it->variants.push_back(std::move(e));
    return it->variants.back();
}

const suite* registry::find(const std::string& name) const noexcept {
    for (const auto& s : m_suites) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

}  // namespace fusebench
