#include "reports/perf_table.hpp"

#include "reports/format_util.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

namespace fusebench::reports {

namespace {

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

table_cell cell_of(const nlohmann::json& r) {
    table_cell c;
    c.present = true;
    c.outcome = string_or(r, "outcome", "?");
    if (const auto m = r.find("mutant"); m != r.end() && m->is_object()) c.outcome = m->value("caught", false) ? "caught" : "missed";
    c.reason = string_or(r, "reason", "");
    const auto& t = r["timing"];
    if (string_or(r, "outcome", "") == "pass" && t.is_object()) {
        c.median_us = number_or_null(t, "median_us").value_or(0);
        c.timed = c.median_us > 0;
    }
    const auto& d = r["derived"];
    c.gbps = number_or_null(d, "achieved_gbps");
    c.pct_of_ceiling = number_or_null(d, "pct_of_ceiling");
    c.speedup = number_or_null(d, "speedup_vs_baseline");
    c.vs_random = number_or_null(d, "time_vs_random");
    return c;
}

// Whether any timed cell of the table carries time_vs_random (the adversarial selections): then the Markdown
// says what the cells' last figure is and the CSV gets a time_vs_random column per variant; other tables are
// unchanged.
bool has_vs_random(const perf_table& t) {
    for (const auto& row : t.cells)
        for (const auto& src : row)
            for (const auto& c : src)
                if (c.timed && c.vs_random) return true;
    return false;
}

bool is_failure(const table_cell& c) { return c.outcome == "fail" || c.outcome == "error" || c.outcome == "missed"; }

std::string upper(std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return s;
}

std::string cell_text(const table_cell& c) {
    if (!c.present) return "-";
    if (c.timed) {
        return format_us(c.median_us) + " us · " + format_optional(c.gbps, "%.0f", "?") + " GB/s · " +
               (c.pct_of_ceiling ? format_pct(*c.pct_of_ceiling) : std::string("?%")) + " · " + format_optional(c.speedup, "%.2fx", "?x") +
               (c.vs_random ? " · " + format("%.2fx", *c.vs_random) + " random" : std::string());
    }
    if (c.outcome == "pass") return "pass, not timed";
    return c.outcome;
}

}  // namespace

std::vector<table_source> table_sources(const std::vector<loaded_report>& reports, const std::vector<std::string>& labels) {
    std::vector<table_source> out;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const auto& r = reports[i];
        for (std::size_t d = 0; d < r.devices.size(); ++d) {
            std::string label = r.devices[d].label();
            if (i < labels.size() && !labels[i].empty()) label = r.devices.size() > 1 ? labels[i] + "/" + label : labels[i];
            out.push_back({&r, d, label});
        }
    }
    // Clashing labels: two boards of one model get their UUID's first digits, the same device in
    // two files gets the file's name.
    auto disambiguate = [&](auto suffix) {
        std::map<std::string, std::set<std::string>> suffixes;
        std::map<std::string, int> seen;
        for (const auto& s : out) {
            ++seen[s.label];
            suffixes[s.label].insert(suffix(s));
        }
        for (auto& s : out) {
            if (seen[s.label] > 1 && suffixes[s.label].size() > 1) s.label += "/" + suffix(s);
        }
    };
    disambiguate([](const table_source& s) {
        std::string u = s.report->devices[s.device].uuid();
        if (u.rfind("GPU-", 0) == 0) u = u.substr(4);
        return u.substr(0, 8);
    });
    disambiguate([](const table_source& s) { return stem(s.report->path); });
    // The same file given twice: number what is still equal.
    std::map<std::string, int> again, index;
    for (const auto& s : out) ++again[s.label];
    for (auto& s : out) {
        if (again[s.label] > 1) s.label += "#" + std::to_string(++index[s.label]);
    }
    return out;
}

std::vector<perf_table> build_tables(const std::vector<table_source>& sources, const result_selection& filter) {
    struct draft {
        std::string suite, dtype;
        std::vector<std::string> variants, cases;
        std::map<std::tuple<std::string, std::size_t, std::string>, table_cell> cells;  // (case, source, variant)
    };
    std::vector<draft> drafts;
    std::map<std::pair<std::string, std::string>, std::size_t> where;
    for (std::size_t s = 0; s < sources.size(); ++s) {
        const auto& rep = *sources[s].report;
        const auto& res = rep.results();
        for (std::size_t i = 0; i < res.size(); ++i) {
            if (rep.device_of[i] != sources[s].device) continue;
            const auto& r = res[i];
            const std::string suite = string_or(r, "suite", "?"), dtype = string_or(r, "dtype", "?");
            if (!filter.matches(r)) continue;
            auto [it, fresh] = where.emplace(std::make_pair(suite, dtype), drafts.size());
            if (fresh) drafts.push_back({suite, dtype, {}, {}, {}});
            auto& d = drafts[it->second];
            const std::string c = string_or(r, "case", "?"), v = variant_label(r);
            if (std::find(d.variants.begin(), d.variants.end(), v) == d.variants.end()) d.variants.push_back(v);
            if (std::find(d.cases.begin(), d.cases.end(), c) == d.cases.end()) d.cases.push_back(c);
            d.cells.emplace(std::make_tuple(c, s, v), cell_of(r));  // the first of duplicates stays
        }
    }
    std::vector<perf_table> out;
    for (auto& d : drafts) {
        perf_table t{d.suite, d.dtype, d.variants, {}, {}};
        for (const auto& c : d.cases) {
            std::vector<std::vector<table_cell>> row(sources.size(), std::vector<table_cell>(d.variants.size()));
            bool keep = false;
            for (std::size_t s = 0; s < sources.size(); ++s) {
                for (std::size_t v = 0; v < d.variants.size(); ++v) {
                    if (auto it = d.cells.find({c, s, d.variants[v]}); it != d.cells.end()) {
                        row[s][v] = it->second;
                        keep = keep || it->second.timed || is_failure(it->second);
                    }
                }
            }
            if (!keep) continue;
            t.cases.push_back(c);
            t.cells.push_back(std::move(row));
        }
        if (!t.cases.empty()) out.push_back(std::move(t));
    }
    return out;
}

std::string tables_markdown(const std::vector<perf_table>& tables, const std::vector<table_source>& sources) {
    std::string o = "## fusebench performance tables\n\n";
    text_rows legend;
    for (const auto& s : sources) {
        const auto& d = s.report->devices[s.device];
        legend.push_back({s.label, std::filesystem::path(s.report->path).filename().string(), d.name(), d.driver(),
                          s.report->tool_line(), string_or(s.report->doc, "started_at", "?"), s.report->status(),
                          ceilings_summary(d.ceilings)});
    }
    o += markdown_table({"report", "file", "device", "driver", "tool", "started", "status", "measured ceilings"}, legend);
    o += "\nEach cell: median time · achieved GB/s (model bytes / time) · % of the device's measured ceiling · "
         "speedup over the suite's naive baseline. **FAIL** / **ERROR**: the result failed verification or errored "
         "(reason under the table); skipped: outside the variant's declared domain; -: not in that report. Cases "
         "that were only verified (not timed) are left out.\n";
    if (std::any_of(tables.begin(), tables.end(), has_vs_random))
        o += "Cells of a non-random input kind end with `x random`: their time over the same variant's time on the "
             "random-input case of the same shape (`derived.time_vs_random`).\n";
    const bool several = sources.size() > 1;
    for (const auto& t : tables) {
        o += "\n### " + t.suite + " · " + t.dtype + "\n\n";
        std::vector<std::string> header{"case"};
        if (several) header.push_back("report");
        for (const auto& v : t.variants) header.push_back(v);
        text_rows rows;
        std::vector<std::string> notes;
        for (std::size_t c = 0; c < t.cases.size(); ++c) {
            bool named = false;  // the case's name on its first row only: the rows below belong to it
            for (std::size_t s = 0; s < sources.size(); ++s) {
                std::vector<std::string> row{named ? "" : t.cases[c]};
                if (several) row.push_back(sources[s].label);
                bool any = false;
                for (std::size_t v = 0; v < t.variants.size(); ++v) {
                    const auto& cell = t.cells[c][s][v];
                    any = any || cell.present;
                    if (is_failure(cell)) {
                        notes.push_back(std::to_string(notes.size() + 1) + ". " + t.cases[c] + " " + t.variants[v] +
                                        (several ? " (" + sources[s].label + ")" : "") + ": " + upper(cell.outcome) +
                                        (cell.reason.empty() ? "" : ": " + cell.reason));
                        row.push_back("**" + upper(cell.outcome) + "** [" + std::to_string(notes.size()) + "]");
                    } else {
                        row.push_back(cell_text(cell));
                    }
                }
                if (any || !several) {
                    rows.push_back(row);
                    named = true;
                }
            }
        }
        o += markdown_table(header, rows);
        if (!notes.empty()) {
            o += "\n";
            for (const auto& n : notes) o += markdown_escape(n) + "  \n";
        }
    }
    if (tables.empty()) o += "\nNo timed or failed results in the selection.\n";
    return o;
}

std::map<std::string, std::string> tables_csv(const std::vector<perf_table>& tables, const std::vector<table_source>& sources) {
    std::map<std::string, std::string> files;
    auto num = [](const std::optional<double>& v) { return v ? format("%.6g", *v) : std::string(); };
    for (const auto& t : tables) {
        const bool vr = has_vs_random(t);
        std::string o = "case,report";
        for (const auto& v : t.variants) {
            for (const char* m : {"outcome", "median_us", "gbps", "pct_of_ceiling", "speedup_vs_baseline"}) {
                o += ',';
                o += csv_field(v + ' ' + m);
            }
            if (vr) o += ',' + csv_field(v + " time_vs_random");
        }
        o += "\n";
        for (std::size_t c = 0; c < t.cases.size(); ++c) {
            for (std::size_t s = 0; s < sources.size(); ++s) {
                bool any = false;
                std::string line = csv_field(t.cases[c]) + "," + csv_field(sources[s].label);
                for (std::size_t v = 0; v < t.variants.size(); ++v) {
                    const auto& cell = t.cells[c][s][v];
                    any = any || cell.present;
                    for (const std::string& f : {csv_field(cell.present ? cell.outcome : ""),
                                                 cell.timed ? format("%.6g", cell.median_us) : std::string(),
                                                 cell.timed ? num(cell.gbps) : std::string(),
                                                 cell.timed ? num(cell.pct_of_ceiling) : std::string(),
                                                 cell.timed ? num(cell.speedup) : std::string()}) {
                        line += ',';
                        line += f;
                    }
                    if (vr) line += "," + (cell.timed ? num(cell.vs_random) : std::string());
                }
                if (any) o += line + "\n";
            }
        }
        files[t.suite + "_" + t.dtype + ".csv"] = o;
    }
    return files;
}

}  // namespace fusebench::reports
