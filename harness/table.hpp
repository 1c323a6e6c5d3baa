// The human results table printed on stdout after a run, from report results (JSON), so the
// parent of isolated worker processes can print what its workers measured.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace fusebench {

// suite | case | dtype | variant | correctness | median us | GB/s | % floor | speedup vs baseline
std::string format_results_table(const nlohmann::json& results);

}  // namespace fusebench
