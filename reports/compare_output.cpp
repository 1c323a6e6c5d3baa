#include "reports/compare_output.hpp"

#include "reports/format_util.hpp"

#include <map>

namespace fusebench::reports {

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

std::string headline(const comparison& c) {
    if (c.regressions == 0) return "no regression (exit 0)";
    return std::to_string(c.regressions) + (c.regressions == 1 ? " regression" : " regressions") + " (exit " +
           std::to_string(c.exit_code) + ")";
}

std::string counts_line(const comparison& c) {
    std::vector<std::string> parts;
    for (int i = 0; i < verdict_count; ++i) {
        const auto v = static_cast<verdict>(i);
        if (auto it = c.counts.find(v); it != c.counts.end() && it->second) parts.push_back(std::to_string(it->second) + " " + to_string(v));
    }
    return join(parts, ", ");
}

std::string side_cell(const side_summary& s, const std::string& basis) {
    if (!s.present) return "-";
    if (!s.timed) return s.outcome;
    std::string cell = format_us(s.median_us) + " us";
    if (basis == "efficiency") cell += " " + (s.pct_of_ceiling ? format_pct(*s.pct_of_ceiling) : std::string("?%"));
    cell += " ±" + format("%.1f", s.noise * 100) + "%";
    return cell;
}

std::string interval_cell(const pair_result& p) {
    if (!p.interval) return "";
    return "[" + format_pct_change(p.interval->lo) + ", " + format_pct_change(p.interval->hi) + "] " + p.interval->method;
}

std::string result_name(const pair_result& p) {
    std::string s = p.suite + " " + p.case_name + " " + p.dtype + " " + p.variant;
    if (!p.device.empty()) s += " @" + p.device;
    return s;
}

std::vector<std::string> row_of(const pair_result& p) {
    return {to_string(p.v),
            result_name(p),
            side_cell(p.base, p.basis),
            side_cell(p.now, p.basis),
            p.interval ? format_pct_change(p.interval->ratio) : "",
            interval_cell(p),
            p.note};
}

const std::vector<std::string> columns{"verdict", "result", "BASE", "NEW", "change", "interval", "note"};

// Regressions first, then by severity (the enum's order); stable within a verdict.
std::vector<const pair_result*> ordered(const comparison& c, bool (*keep)(const pair_result&)) {
    std::vector<const pair_result*> v;
    for (int i = 0; i < verdict_count; ++i) {
        for (const auto& p : c.pairs) {
            if (static_cast<int>(p.v) == i && keep(p)) v.push_back(&p);
        }
    }
    return v;
}

bool keep_all(const pair_result&) { return true; }
bool keep_notable(const pair_result& p) { return notable(p); }
bool keep_compared(const pair_result& p) { return p.interval.has_value(); }

}  // namespace

bool notable(const pair_result& p) {
    if (p.v == verdict::same || p.v == verdict::not_timed) return false;
    if (p.v == verdict::skipped && p.base.outcome == "skipped" && p.now.outcome == "skipped") return false;
    return true;
}

// "--suite glu: 78 of 2668 results of BASE, ..." or "" without a selection.
std::string selection_line(const comparison& c) {
    if (c.selection.empty()) return "";
    return c.selection.describe() + ": " + std::to_string(c.base_selected) + " of " + std::to_string(c.base_total) +
           " results of BASE, " + std::to_string(c.new_selected) + " of " + std::to_string(c.new_total) +
           " of NEW; the others are not compared and do not count";
}

std::string format_compare_terminal(const comparison& c, bool all) {
    std::string o = "fusebench compare: " + headline(c) + "\n";
    o += "BASE  " + c.base.path + ": " + join(c.base.devices, "; ") + " | " + c.base.tool + " | started " + c.base.started_at +
         " | " + c.base.status + "\n";
    o += "NEW   " + c.now.path + ": " + join(c.now.devices, "; ") + " | " + c.now.tool + " | started " + c.now.started_at + " | " +
         c.now.status + "\n";
    o += "devices: " + c.relation + "\n";
    if (c.efficiency_compared) o += "ceilings: BASE " + join(c.base.ceilings, "; ") + " | NEW " + join(c.now.ceilings, "; ") + "\n";
    o += "policy: " + c.policy_line + "\n";
    if (!c.selection.empty()) o += "selection: " + selection_line(c) + "\n";
    o += "verdicts: " + counts_line(c) + "\n";
    for (const auto& w : c.warnings) o += "warning: " + w + "\n";
    text_rows rows;
    for (const auto* p : ordered(c, all ? keep_all : keep_notable)) rows.push_back(row_of(*p));
    o += "\n";
    if (rows.empty()) {
        o += "nothing changed beyond the threshold and the noise (" + std::to_string(c.pairs.size()) +
             " results; --all lists them)\n";
    } else {
        o += aligned_table(columns, rows);
    }
    o += "change = NEW/BASE of the median time (same device) or of the time against each device's own ceiling (other "
         "devices); interval = the noise interval of that ratio\n";
    return o;
}

std::string format_compare_markdown(const comparison& c) {
    std::string o = "### fusebench compare: " + headline(c) + "\n\n";
    text_rows head{{"file", c.base.path, c.now.path},
                   {"device", join(c.base.devices, "; "), join(c.now.devices, "; ")},
                   {"tool", c.base.tool, c.now.tool},
                   {"started", c.base.started_at, c.now.started_at},
                   {"status", c.base.status, c.now.status},
                   {"mode", c.base.mode, c.now.mode}};
    if (c.efficiency_compared) head.push_back({"ceilings", join(c.base.ceilings, "; "), join(c.now.ceilings, "; ")});
    o += markdown_table({"", "BASE", "NEW"}, head);
    o += "\n**Devices:** " + markdown_escape(c.relation) + "  \n";
    o += "**Policy:** " + markdown_escape(c.policy_line) + "  \n";
    if (!c.selection.empty()) o += "**Selection:** " + markdown_escape(selection_line(c)) + "  \n";
    o += "**Verdicts:** " + counts_line(c) + "\n";
    for (const auto& w : c.warnings) o += "\n> **Warning:** " + markdown_escape(w) + "\n";
    o += "\n";
    text_rows rows;
    for (const auto* p : ordered(c, keep_notable)) rows.push_back(row_of(*p));
    if (rows.empty()) {
        o += "Nothing changed beyond the threshold and the noise.\n";
    } else {
        o += markdown_table(columns, rows);
    }
    text_rows compared;
    for (const auto* p : ordered(c, keep_compared)) compared.push_back(row_of(*p));
    if (!compared.empty()) {
        o += "\n<details><summary>All " + std::to_string(compared.size()) + " timed comparisons</summary>\n\n";
        o += markdown_table(columns, compared);
        o += "\n</details>\n";
    }
    o += "\n<sub>change = NEW/BASE of the median time (same device) or of the time against each device's own measured "
         "ceiling (other devices); interval = the noise interval of that ratio (bootstrap of raw samples, or the "
         "reported noise).</sub>\n";
    return o;
}

nlohmann::json compare_to_json(const comparison& c, const policy& pol) {
    auto id = [](const report_identity& r) {
        return nlohmann::json{{"path", r.path}, {"tool", r.tool},     {"status", r.status},
                              {"started_at", r.started_at}, {"mode", r.mode}, {"devices", r.devices}, {"ceilings", r.ceilings}};
    };
    auto side = [](const side_summary& s) -> nlohmann::json {
        if (!s.present) return nullptr;
        nlohmann::json j{{"outcome", s.outcome}, {"device", s.device_name}, {"timed", s.timed}};
        if (!s.reason.empty()) j["reason"] = s.reason;
        if (s.timed) {
            j["median_us"] = s.median_us;
            j["noise"] = s.noise;
            j["samples"] = s.samples;
            j["raw_samples"] = s.raw_samples;
        }
        j["pct_of_ceiling"] = s.pct_of_ceiling ? nlohmann::json(*s.pct_of_ceiling) : nlohmann::json(nullptr);
        j["achieved_gbps"] = s.gbps ? nlohmann::json(*s.gbps) : nlohmann::json(nullptr);
        j["speedup_vs_baseline"] = s.speedup ? nlohmann::json(*s.speedup) : nlohmann::json(nullptr);
        return j;
    };
    nlohmann::json j;
    j["schema"] = {{"name", "fusebench-compare"}, {"version", 1}};
    j["base"] = id(c.base);
    j["new"] = id(c.now);
    j["devices"] = c.relation;
    j["policy"] = {{"source", pol.source},
                   {"threshold", pol.threshold},
                   {"overrides", pol.overrides},
                   {"noise_z", pol.noise_z},
                   {"bootstrap", {{"resamples", pol.bootstrap_resamples}, {"confidence", pol.bootstrap_confidence}, {"seed", pol.bootstrap_seed}}},
                   {"fail_on_missing", pol.fail_on_missing}};
    j["warnings"] = c.warnings;
    const auto& sel = c.selection;
    j["selection"] = sel.empty() ? nlohmann::json(nullptr)
                                 : nlohmann::json{{"suites", sel.suites},          {"cases", sel.cases},
                                                  {"dtypes", sel.dtypes},          {"variants", sel.variants},
                                                  {"base_results", c.base_selected}, {"new_results", c.new_selected}};
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& [v, n] : c.counts) counts[to_string(v)] = n;
    j["counts"] = counts;
    j["regressions"] = c.regressions;
    j["exit_code"] = c.exit_code;
    j["results"] = nlohmann::json::array();
    for (const auto& p : c.pairs) {
        nlohmann::json r{{"suite", p.suite},   {"case", p.case_name}, {"dtype", p.dtype},
                         {"variant", p.variant}, {"verdict", to_string(p.v)}, {"fails_gate", fails_gate(p.v, pol)},
                         {"threshold", p.threshold}, {"note", p.note}};
        if (!p.device.empty()) r["device"] = p.device;
        if (p.base.present && p.now.present) r["device_relation"] = to_string(p.relation);
        if (p.interval) {
            r["basis"] = p.basis;
            r["ratio"] = p.interval->ratio;
            r["interval"] = {p.interval->lo, p.interval->hi};
            r["method"] = p.interval->method;
        }
        if (p.e2e_interval) {
            r["e2e_ratio"] = p.e2e_interval->ratio;
            r["e2e_interval"] = {p.e2e_interval->lo, p.e2e_interval->hi};
        }
        r["base"] = side(p.base);
        r["new"] = side(p.now);
        j["results"].push_back(r);
    }
    return j;
}

std::string format_compare_junit(const comparison& c, const policy& pol) {
    // One <testsuite> per fusebench suite, in order of first appearance.
    std::vector<std::string> suites;
    std::map<std::string, std::vector<const pair_result*>> by_suite;
    for (const auto& p : c.pairs) {
        if (!by_suite.count(p.suite)) suites.push_back(p.suite);
        by_suite[p.suite].push_back(&p);
    }
    auto is_skipped = [&](const pair_result& p) {
        return !fails_gate(p.v, pol) && (p.v == verdict::missing || p.v == verdict::skipped);
    };
    int failures = 0, skipped = 0;
    for (const auto& p : c.pairs) {
        failures += fails_gate(p.v, pol);
        skipped += is_skipped(p);
    }
    std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    o += "<testsuites name=\"fusebench compare\" tests=\"" + std::to_string(c.pairs.size()) + "\" failures=\"" +
         std::to_string(failures) + "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\">\n";
    for (const auto& s : suites) {
        const auto& ps = by_suite[s];
        int f = 0, k = 0;
        for (const auto* p : ps) {
            f += fails_gate(p->v, pol);
            k += is_skipped(*p);
        }
        o += "  <testsuite name=\"" + xml_escape(s) + "\" tests=\"" + std::to_string(ps.size()) + "\" failures=\"" +
             std::to_string(f) + "\" errors=\"0\" skipped=\"" + std::to_string(k) + "\">\n";
        for (const auto* p : ps) {
            const double secs = p->now.timed ? p->now.median_us * 1e-6 : 0.0;
            std::string name = p->case_name + "/" + p->variant;
            if (!p->device.empty()) name += "@" + p->device;
            o += "    <testcase classname=\"" + xml_escape("fusebench." + p->suite + "." + p->dtype) + "\" name=\"" +
                 xml_escape(name) + "\" time=\"" + format("%.9f", secs) + "\">\n";
            std::string detail = std::string(to_string(p->v));
            if (p->interval) detail += " " + format_pct_change(p->interval->ratio) + " " + interval_cell(*p);
            if (!p->note.empty()) detail += ": " + p->note;
            detail += " | BASE " + side_cell(p->base, p->basis) + " | NEW " + side_cell(p->now, p->basis);
            if (fails_gate(p->v, pol)) {
                o += "      <failure type=\"" + xml_escape(to_string(p->v)) + "\" message=\"" + xml_escape(detail) + "\">" +
                     xml_escape(detail) + "</failure>\n";
            } else if (is_skipped(*p)) {
                o += "      <skipped message=\"" + xml_escape(detail) + "\"/>\n";
            } else {
                o += "      <system-out>" + xml_escape(detail) + "</system-out>\n";
            }
            o += "    </testcase>\n";
        }
        o += "  </testsuite>\n";
    }
    o += "</testsuites>\n";
    return o;
}

}  // namespace fusebench::reports
