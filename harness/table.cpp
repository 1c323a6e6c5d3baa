#include "harness/table.hpp"

#include <algorithm>
#include <cstdio>

namespace fusebench {

namespace {
std::string fixed(const std::optional<double>& v, int decimals, const char* suffix = "") {
    if (!v) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%s", decimals, *v, suffix);
    return buf;
}
}  // namespace

std::string format_results_table(const std::vector<variant_result>& results) {
    const std::vector<std::string> header{"suite", "case", "dtype", "variant", "correctness",
                                          "median us", "GB/s", "% floor", "speedup"};
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : results) {
        std::string verdict = to_string(r.result);
        if (r.result == outcome::pass && r.correctness && r.correctness->deterministic == false) verdict += " (nondet)";
        std::optional<double> median;
        if (r.timing) median = r.timing->stats.median;
        rows.push_back({r.suite, r.c.name, std::string(dtype_name(r.c.type)), r.variant, verdict,
                        fixed(median, 2), fixed(r.achieved_gbps, 0), fixed(r.pct_of_floor, 1),
                        fixed(r.speedup_vs_baseline, 2, "x")});
    }
    std::vector<std::size_t> width(header.size());
    for (std::size_t k = 0; k < header.size(); ++k) {
        width[k] = header[k].size();
        for (const auto& row : rows) width[k] = std::max(width[k], row[k].size());
    }
    std::string out;
    auto line = [&](const std::vector<std::string>& cells) {
        for (std::size_t k = 0; k < cells.size(); ++k) {
            const bool numeric = k >= 5;
            std::string cell = cells[k];
            const std::string pad(width[k] - cell.size(), ' ');
            out += numeric ? pad + cell : cell + pad;
            out += k + 1 < cells.size() ? " | " : "\n";
        }
    };
    line(header);
    for (std::size_t k = 0; k < header.size(); ++k) {
        out += std::string(width[k], '-');
        out += k + 1 < header.size() ? "-|-" : "\n";
    }
    for (const auto& row : rows) line(row);
    return out;
}

}  // namespace fusebench
