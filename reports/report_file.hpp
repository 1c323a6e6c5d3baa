// Reading fusebench reports for the report tools (compare, table, merge): every way a file can be
// unusable becomes one `bad_input` line, and a valid report is seen as a list of results, each
// with the device (and that device's measured ceilings) it ran on. A plain `fusebench run` report
// has one device; a report written by `fusebench merge` from several GPUs has a top-level
// "devices" array and a "device_index" in each result (see merge.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusebench::reports {

// Unusable input (file, report, policy or arguments): the report tools print what() as one line
// and exit 2. Messages never contain a newline.
class bad_input : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Where the report schema is read from: $FUSEBENCH_SCHEMA when set, else the path compiled in
// (FUSEBENCH_SCHEMA_PATH, the source tree's reports/schema/fusebench-report-v1.schema.json).
std::string schema_path();

struct device_ctx {
    nlohmann::json device;    // the report's device object (name, label, uuid, driver_version...) or null
    nlohmann::json ceilings;  // measured ceilings of this device in this run, or null
    std::string name() const;   // "NVIDIA H200", or "unknown device"
    std::string label() const;  // "h200", else derived from the name
    std::string uuid() const;   // "" when unknown
    std::string driver() const; // "driver API 13.0, runtime 13.0"
};

struct loaded_report {
    std::string path;
    nlohmann::json doc;
    std::vector<device_ctx> devices;         // at least one
    std::vector<std::size_t> device_of;      // per result: index into devices
    bool merged_devices = false;             // the report carries "devices" (merged from several GPUs)

    const nlohmann::json& results() const { return doc.at("results"); }
    const device_ctx& device_for(std::size_t result) const { return devices.at(device_of.at(result)); }
    std::string tool_line() const;  // "fusebench 0.1.0 (abc1234)"
    std::string status() const;     // complete | running | interrupted | context_lost
};

// Reads, parses, checks the schema name and version, validates against the schema and resolves
// each result's device. Throws bad_input with one line naming `path`: missing or unreadable file,
// empty file, truncated JSON, not JSON, not a fusebench report, a newer or unknown schema version,
// a schema violation, a device_index out of range.
loaded_report load_report(const std::string& path);

// The same checks on a document already in memory (`path` names it in messages).
loaded_report parse_report(nlohmann::json doc, const std::string& path);

// Helpers shared by the tools: a JSON number or null/"nan"/missing as an optional double.
std::optional<double> number_or_null(const nlohmann::json& obj, const char* key);
std::string string_or(const nlohmann::json& obj, const char* key, const std::string& fallback);

// The measured ceiling that derived.pct_of_ceiling of a result was taken against, as the harness's
// runner picks it (harness/runner.cpp apply_ceilings): bound memory -> copy_gbps; bound compute ->
// the ceiling of the model's compute unit (traffic_model.compute_unit: tensor_bf16 -> bf16_tflops,
// tensor_fp16 -> fp16_tflops, tensor_fp8 -> fp8_tflops, fp32 -> fp32_tflops), and for `any` or a
// report that names no unit the largest of bf16_tflops, fp16_tflops and fp32_tflops. `key` is the
// ceiling's name in the report's ceilings block; `ceiling` its object (value, noise, samples,
// method, ...), null when that ceiling has no value (tensor_tf32 never has one).
struct matched_ceiling {
    std::string key;
    nlohmann::json ceiling;
};
// Ceiling `key` of a ceilings block with its name; the ceiling null when it has no value.
matched_ceiling ceiling_named(const nlohmann::json& ceilings, const char* key);
matched_ceiling ceiling_for(const nlohmann::json& ceilings, const std::string& bound, const std::string& compute_unit);
// The schedule a tensor-core GEMM ceiling was timed in, read from its method: "bursts after idle
// gaps" (since 1ea5da5) or "back to back" (before); "" for other ceilings and where the method is
// not given.
std::string ceiling_schedule(const matched_ceiling& m);

// "copy 3009 GB/s, bf16 785 / fp16 752 / fp8 1389 TFLOP/s (bursts after idle gaps; SM clock after
// 1996 MHz)": a ceilings block in one line; "no ceilings" when the block is null, "-" for a value
// that is missing or null.
std::string ceilings_summary(const nlohmann::json& ceilings);

// A selection of results, as `fusebench run` selects work: suites, dtypes and variants by name,
// cases by substring of the case name; an empty list takes every value. `fusebench compare` applies
// it to both reports.
struct result_selection {
    std::vector<std::string> suites, cases, dtypes, variants;
    bool empty() const { return suites.empty() && cases.empty() && dtypes.empty() && variants.empty(); }
    bool matches(const nlohmann::json& result) const;
    // "--suite glu --dtype bf16", the options that made it; "" when empty.
    std::string describe() const;
};

// `r` with only the results `sel` matches (and their devices' indices). Throws bad_input naming the
// report when none matches.
loaded_report select_results(const loaded_report& r, const result_selection& sel);

// Report identity of one result (without the device): "suite/case/dtype/variant".
std::string result_key(const nlohmann::json& r);
// "variant" or "variant[config]" of a result.
std::string variant_label(const nlohmann::json& r);

}  // namespace fusebench::reports
