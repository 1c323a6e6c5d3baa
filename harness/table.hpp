// The human results table printed on stdout after a run, from report results (JSON), so the
// parent of isolated worker processes can print what its workers measured.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace fusebench {

// suite | case | dtype | variant | correctness | median us | GB/s | % floor | speedup vs baseline
std::string format_results_table(const nlohmann::json& results);
// Where results carry derived.time_vs_random (an input kind's time over its random-input twin's): one
// line per suite, variant and dtype with the largest ratio, its case, and how many kinds were timed;
// empty when no result has one.
std::string format_time_vs_random_summary(const nlohmann::json& results);

}  // namespace fusebench
