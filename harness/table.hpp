// The human results table printed on stdout after a run.
#pragma once

#include "harness/result.hpp"

#include <string>
#include <vector>

namespace fusebench {

// suite | case | dtype | variant | correctness | median us | GB/s | % floor | speedup vs baseline
std::string format_results_table(const std::vector<variant_result>& results);

}  // namespace fusebench
