// The JSON report: fusebench's primary artifact and a public format (schema
// reports/schema/fusebench-report-v1.schema.json). Convention: a value that is unknown is null,
// and the enclosing object's "null_reasons" names why; never a silent 0.
#pragma once

#include "harness/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fusebench {

inline constexpr const char* report_schema_name = "fusebench-report";
inline constexpr int report_schema_version = 1;

struct report_context {
    nlohmann::json device;    // to_json(device_info) or null
    nlohmann::json settings;  // run settings (filters, mode, policy, seed)
    nlohmann::json ceilings;  // measured ceilings or null
    std::string started_at;   // ISO 8601 UTC
    std::vector<std::string> suites_completed;
    std::string status = "running";  // running | complete | interrupted | context_lost
    std::string status_reason;
};

nlohmann::json build_info_json();
nlohmann::json to_json(const output_check& c);
nlohmann::json to_json(const variant_result& r);
// `prior` holds results (report JSON) finished by earlier worker processes of the same run; they
// come first.
nlohmann::json make_report(const report_context& ctx, const std::vector<variant_result>& results,
                           const nlohmann::json& prior = nlohmann::json::array());
// {"pass": n, "fail": n, "error": n, "skipped": n} over report results.
nlohmann::json count_outcomes(const nlohmann::json& results);
// derived.time_vs_random of every result with a derived object: its median over the median of its
// random-input twin, the result of the same suite, variant, config, dtype, case dims and params (and
// device, in a merged report of several) whose input kind is "random", in the same report (the
// softmax_topk_adversarial selection pairs each kind with one; issue 22 sets its target as a
// multiple of that time). Null with a reason in derived.null_reasons for random-input results,
// untimed ones, and results without exactly one timed twin. make_report and merge_reports call it,
// so a twin in another shard still counts.
void annotate_time_vs_random(nlohmann::json& results);

// The text of a JSON file as fusebench writes it: indented by two spaces, except that an array of
// objects directly under the top-level object is written one element per line (a report's results:
// one line per result, half the bytes of full indentation, and a diff of two reports shows the
// results that changed). Parses back to `j`.
std::string json_file_text(const nlohmann::json& j);

// Writes json_file_text(j) to `path` atomically: a temporary file in the same folder, flushed, then
// renamed over the target, so a reader or a crash never sees a half-written report. Throws
// std::runtime_error.
void write_json_atomic(const std::string& path, const nlohmann::json& j);

// Current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso8601();

}  // namespace fusebench
