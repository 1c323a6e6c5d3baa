// `fusebench table`: performance tables for publication, one per (suite, dtype), cases as rows and
// variants as columns; each cell holds median time, achieved GB/s, % of the device's measured
// ceiling and speedup over the suite's naive baseline. Several reports (GPUs or versions) sit in
// the same table, one row per case and report, next to each other. Failed results keep their row,
// marked FAIL/ERROR with the reason under the table. Cases verified but not timed (edge cases) are
// left out unless one of their results failed.
#pragma once

#include "reports/report_file.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fusebench::reports {

// One column group of a table: a device of a report (a merged report from several GPUs gives one
// source per device).
struct table_source {
    const loaded_report* report = nullptr;
    std::size_t device = 0;
    std::string label;
};

// Labels: the device label ("h200"); where two sources would share it, "label/<first 8 digits of the
// UUID>" (two boards) or else "label/file-stem" (one device, two files). `labels`
// (one per report, may be empty) replaces the device label.
std::vector<table_source> table_sources(const std::vector<loaded_report>& reports, const std::vector<std::string>& labels);

struct table_cell {
    bool present = false;
    std::string outcome;  // pass | fail | error | skipped | caught | missed
    std::string reason;
    bool timed = false;
    double median_us = 0;
    std::optional<double> gbps, pct_of_ceiling, speedup;
    std::optional<double> vs_random;  // derived.time_vs_random: a non-random input kind's time / its random twin's
};

struct perf_table {
    std::string suite, dtype;
    std::vector<std::string> variants;  // first-appearance order
    std::vector<std::string> cases;     // rows, first-appearance order
    // cells[case index][source index][variant index]
    std::vector<std::vector<std::vector<table_cell>>> cells;
};

// The tables of the results `filter` selects (report_file.hpp: suites, case substrings, dtypes, variants).
std::vector<perf_table> build_tables(const std::vector<table_source>& sources, const result_selection& filter);

// Markdown: a legend of the sources, then every table with its failure notes.
std::string tables_markdown(const std::vector<perf_table>& tables, const std::vector<table_source>& sources);
// CSV, one file per table: file name "<suite>_<dtype>.csv" -> contents. Columns: case, report,
// then per variant: outcome, median_us, gbps, pct_of_ceiling, speedup_vs_baseline.
std::map<std::string, std::string> tables_csv(const std::vector<perf_table>& tables, const std::vector<table_source>& sources);

}  // namespace fusebench::reports
