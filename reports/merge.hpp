// `fusebench merge OUT.json IN1.json IN2.json ...`: one report from the reports of several shards
// (`run --shard I/N`), GPUs (`--device N`) or machines.
//
// Decisions (README "Three uses"):
// - Inputs must come from the same tool: equal tool.tool_version, tool.git_commit and
//   tool.slowdown_variant, and the same timing mode; otherwise the merge is refused unless --force.
//   Reports of another schema version are never read (bad input), --force or not.
// - A result is identified by (suite, case, dtype, variant, device), the device by its UUID. The
//   same result twice on the same device (overlapping shards, a rerun) is refused unless --force,
//   which keeps the later input's.
// - All inputs on one device: the output is a plain report of that device (device and ceilings
//   from the first input; every input's seed, shard and ceilings stay in "merged_from").
// - Several devices: results are also keyed by device. The top-level "device" and "ceilings" are
//   null (with null_reasons), "devices" lists each device with its own measured ceilings, and every
//   result carries "device_index" into it, so efficiency stays relative to its own device.
// - status is "complete" only when every input is; started_at is the earliest, suites_completed
//   the union, summary recounted.
#pragma once

#include "reports/report_file.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fusebench::reports {

struct merge_options {
    bool force = false;
};

// Throws bad_input when the inputs may not be merged (see above); `notes` gets one line per
// thing the caller should know (results replaced under --force, differing tools forced).
nlohmann::json merge_reports(const std::vector<loaded_report>& inputs, const merge_options& options,
                             std::vector<std::string>& notes);

}  // namespace fusebench::reports
