// The four renderings of a comparison: a terminal table, Markdown for a pull-request comment or a
// CI step summary, JSON for scripts, and JUnit XML (one testcase per result, a <failure> for each
// result that fails the gate) for CI test reporters.
#pragma once

#include "reports/gate.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fusebench::reports {

// A result worth a line by default: everything but SAME, NOT TIMED and "skipped on both sides".
bool notable(const pair_result& p);

// `all`: every pair, not only the notable ones.
std::string format_compare_terminal(const comparison& c, bool all);
// Header, verdict counts, the notable results, and every timed comparison in a <details> block.
std::string format_compare_markdown(const comparison& c);
nlohmann::json compare_to_json(const comparison& c, const policy& p);
std::string format_compare_junit(const comparison& c, const policy& p);

}  // namespace fusebench::reports
