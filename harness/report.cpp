#include "harness/report.hpp"

#include "fusebench/build_info.hpp"
#include "harness/cupti_counters.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <unistd.h>

namespace fusebench {

namespace {

// Finite doubles as numbers; NaN/Inf (which JSON cannot hold) as strings so nothing is lost.
nlohmann::json number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

template <class T>
void put_optional(nlohmann::json& obj, const char* key, const std::optional<T>& v, const std::string& reason) {
    if (v) {
        if constexpr (std::is_floating_point_v<T>) obj[key] = number(*v);
        else obj[key] = *v;
    } else {
        obj[key] = nullptr;
        obj["null_reasons"][key] = reason;
    }
}

// Order statistics with the unit in each key ("median_us", "median_mhz").
nlohmann::json stats_json(const sample_stats& s, const std::string& unit = "us") {
    const std::string u = "_" + unit;
    return {{"samples", s.n},         {"median" + u, s.median}, {"min" + u, s.min},     {"max" + u, s.max},
            {"mean" + u, s.mean},     {"stdev" + u, s.stdev},   {"p10" + u, s.p10},     {"p90" + u, s.p90},
            {"iqr" + u, s.iqr},       {"rel_stdev", s.rel_stdev}, {"noise", s.noise}};
}

}  // namespace

nlohmann::json build_info_json() {
    return {{"tool_version", build_info::tool_version},
            {"git_commit", build_info::git_commit},
            {"git_dirty", build_info::git_dirty},
            {"cxx_compiler", build_info::cxx_compiler},
            {"cuda_compiler", build_info::cuda_compiler},
            {"cxx_flags", build_info::cxx_flags},
            {"cuda_flags", build_info::cuda_flags},
            {"cuda_architectures", build_info::cuda_architectures},
            {"build_type", build_info::build_type},
            {"slowdown_variant", std::string(build_info::slowdown_variant).empty()
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json(build_info::slowdown_variant)}};
}

nlohmann::json to_json(const output_check& c) {
    nlohmann::json j;
    j["output"] = c.output;
    j["pass"] = c.pass;
    j["reason"] = c.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.reason);
    j["checked"] = c.stats.checked;
    j["mismatches"] = c.stats.mismatches;
    const std::string no_finite = "no finite reference/output pairs to measure";
    put_optional(j, "max_abs", c.stats.max_abs, no_finite);
    put_optional(j, "max_rel", c.stats.max_rel, no_finite);
    put_optional(j, "rel_l2", c.stats.rel_l2, no_finite);
    const std::string no_ulp = "no floating-point pairs (integer output or none finite)";
    put_optional(j, "ulp_p50", c.stats.ulp_p50, no_ulp);
    put_optional(j, "ulp_p99", c.stats.ulp_p99, no_ulp);
    put_optional(j, "ulp_max", c.stats.ulp_max, no_ulp);
    nlohmann::json first = nlohmann::json::array();
    for (const auto& m : c.stats.first) {
        first.push_back({{"index", m.index}, {"got", number(m.got)}, {"expected", number(m.expected)}, {"why", m.why}});
    }
    j["first_mismatches"] = first;
    if (!c.figures.empty()) {
        nlohmann::json f = nlohmann::json::object();
        for (const auto& [name, fig] : c.figures) f[name] = {{"value", number(fig.value)}, {"meaning", fig.meaning}};
        j["figures"] = f;
    }
    if (c.relative) {
        const auto& r = *c.relative;
        nlohmann::json rj;
        rj["multiple"] = r.multiple;
        rj["abs_term"] = r.abs_term;
        rj["rel_l2_term"] = r.rel_l2_term;
        rj["rounding_term"] = r.rounding_term;
        const std::string no_base = r.reason.empty() ? "the baseline's error is unknown" : r.reason;
        put_optional(rj, "baseline_max_abs", r.baseline_max_abs, no_base);
        put_optional(rj, "baseline_rel_l2", r.baseline_rel_l2, no_base);
        put_optional(rj, "allowed_max_abs", r.allowed_max_abs, no_base);
        put_optional(rj, "allowed_rel_l2", r.allowed_rel_l2, no_base);
        put_optional(rj, "ratio_max_abs", r.ratio_max_abs, "the baseline's max abs error is 0 or unknown");
        put_optional(rj, "ratio_rel_l2", r.ratio_rel_l2, "the baseline's rel L2 error is 0 or unknown");
        rj["pass"] = r.pass;
        rj["reason"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
        if (!r.baseline.empty()) rj["baseline"] = r.baseline;
        j["relative_to_baseline"] = rj;
    }
    if (c.coverage) {
        const auto& cv = *c.coverage;
        j["coverage"] = {{"unit", cv.unit}, {"checked", cv.checked}, {"total", cv.total}, {"rule", cv.rule}, {"which", cv.which}};
    } else {
        j["coverage"] = nullptr;  // every element compared
    }
    return j;
}

nlohmann::json to_json(const variant_result& r) {
    nlohmann::json j;
    j["suite"] = r.suite;
    j["case"] = r.c.name;
    j["dtype"] = std::string(dtype_name(r.c.type));
    j["variant"] = r.variant;
    if (!r.config.empty()) j["config"] = r.config;
    j["role"] = to_string(r.role);
    j["description"] = r.description;
    // Host wall time per phase (absent for variants not run: skipped, or a lost context).
    if (!r.phase_seconds.empty()) j["phase_seconds"] = r.phase_seconds;
    if (!r.must_be_caught_by.empty()) {
        // Verifier self-test: caught means the variant failed (or errored) for the expected reason.
        const bool flagged = r.result == outcome::fail || r.result == outcome::error;
        j["mutant"] = {{"must_be_caught_by", r.must_be_caught_by},
                       {"caught", flagged && r.reason.find(r.must_be_caught_by) != std::string::npos}};
    }
    nlohmann::json cj;
    cj["dims"] = r.c.dims;
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : r.c.params) params[k] = number(v);
    cj["params"] = params;
    cj["input_kind"] = r.c.input_kind;
    cj["timed"] = r.c.timed;
    j["case_info"] = cj;
    j["outcome"] = to_string(r.result);
    j["reason"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);

    if (r.correctness) {
        const auto& cb = *r.correctness;
        nlohmann::json c;
        c["outputs"] = nlohmann::json::array();
        for (const auto& o : cb.outputs) c["outputs"].push_back(to_json(o));
        put_optional(c, "deterministic", cb.deterministic, "the variant did not complete two runs");
        c["unwritten_elements"] = cb.unwritten_elements;
        c["guard_violations"] = cb.guard_violations;
        c["modified_inputs"] = cb.modified_inputs;
        if (r.role != variant_role::baseline) {
            if (cb.baseline_outputs.empty()) {
                c["baseline_error"] = nullptr;
                c["null_reasons"]["baseline_error"] = "no verified baseline in this case's selection";
            } else {
                c["baseline_error"] = nlohmann::json::array();
                for (const auto& o : cb.baseline_outputs) c["baseline_error"].push_back(to_json(o));
            }
        }
        c["verify_seconds"] = r.verify_seconds;
        j["correctness"] = c;
    } else {
        j["correctness"] = nullptr;
        j["null_reasons"]["correctness"] = r.reason.empty() ? "not verified" : r.reason;
    }

    if (r.timing) {
        const auto& t = *r.timing;
        nlohmann::json tj = stats_json(t.stats);
        tj["method"] = t.method;
        tj["method_reason"] = t.method_reason;
        tj["mode"] = to_string(t.mode);
        tj["stop_reason"] = to_string(t.stopped);
        tj["sampling_seconds"] = t.sampling_s;
        if (!t.samples_us.empty()) tj["samples_us"] = t.samples_us;
        if (t.method == "cupti_activity") {
            nlohmann::json cj;
            cj["span_note"] = "median_us etc. are the span from the first kernel start to the last kernel end of each sample";
            cj["sum_of_durations"] = t.sum_stats ? stats_json(*t.sum_stats) : nlohmann::json(nullptr);
            cj["event_cross_check"] = t.event_stats ? stats_json(*t.event_stats) : nlohmann::json(nullptr);
            if (!t.event_stats) cj["null_reasons"]["event_cross_check"] = "hot mode: events are not recorded per launch";
            cj["kernel_records"] = t.kernel_records;
            cj["kernels_per_sample"] = t.kernels_per_sample;
            cj["kernel_names"] = t.kernel_names;
            cj["kernel_set_consistent"] = t.kernel_set_consistent;
            cj["inconsistency"] = t.inconsistency.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.inconsistency);
            cj["dropped_records"] = t.dropped_records;
            cj["untimed_records"] = t.untimed_records;
            tj["cupti"] = cj;
        }
        nlohmann::json clock;
        if (t.clock_stats) {
            clock["sm_clock_mhz"] = stats_json(*t.clock_stats, "mhz");
            clock["readings"] = t.sm_clock_mhz.size();
        } else {
            clock["sm_clock_mhz"] = nullptr;
            clock["null_reasons"]["sm_clock_mhz"] = "the event timer does not read the SM clock";
        }
        put_optional(clock, "max_clock_mhz", t.max_clock_mhz, "the maximum SM clock is unknown");
        clock["low_clock_samples"] = t.low_clock_samples;  // indices below 75% of the maximum clock
        clock["low_clock_threshold"] = 0.75;
        tj["clock"] = clock;
        if (t.e2e_stats) {
            tj["e2e"] = stats_json(*t.e2e_stats);
            tj["e2e"]["samples"] = t.e2e_stats->n;
            tj["e2e"]["method"] =
                "host steady_clock from the launcher call to the return of cudaStreamSynchronize (launch latency and "
                "host-side setup included), prepared and, in cold mode, L2-flushed before each sample";
        } else {
            tj["e2e"] = nullptr;
            tj["null_reasons"]["e2e"] = "not measured";
        }
        if (t.empty_kernel_stats) {
            tj["empty_kernel"] = stats_json(*t.empty_kernel_stats);
            tj["empty_kernel"]["meaning"] =
                "this timer's reading of a kernel that does nothing (one block of 32 threads), timed in the same process, "
                "mode and kind of records before the first variant: the launch and completion every sample carries";
        } else {
            tj["empty_kernel"] = nullptr;
            tj["null_reasons"]["empty_kernel"] = t.empty_kernel_null_reason.empty() ? "not measured" : t.empty_kernel_null_reason;
        }
        j["timing"] = tj;
    } else {
        j["timing"] = nullptr;
        j["null_reasons"]["timing"] = r.timing_null_reason.empty() ? "not timed" : r.timing_null_reason;
    }

    j["traffic_model"] = {{"bytes_read", r.model.bytes_read},
                          {"bytes_written", r.model.bytes_written},
                          {"flops", r.model.flops},
                          {"compute_unit", to_string(r.model.unit)}};
    nlohmann::json d = nlohmann::json::object();
    auto reason_of = [&](const char* k) {
        const auto it = r.null_reasons.find(k);
        return it == r.null_reasons.end() ? std::string("unknown") : it->second;
    };
    put_optional(d, "achieved_gbps", r.achieved_gbps, reason_of("achieved_gbps"));
    put_optional(d, "achieved_tflops", r.achieved_tflops, reason_of("achieved_tflops"));
    put_optional(d, "pct_of_copy_ceiling", r.pct_of_copy_ceiling, reason_of("pct_of_copy_ceiling"));
    put_optional(d, "pct_of_floor", r.pct_of_floor, reason_of("pct_of_floor"));
    put_optional(d, "pct_of_floor_with_launch", r.pct_of_floor_with_launch, reason_of("pct_of_floor_with_launch"));
    put_optional(d, "speedup_vs_baseline", r.speedup_vs_baseline, reason_of("speedup_vs_baseline"));
    put_optional(d, "arithmetic_intensity", r.arithmetic_intensity, reason_of("arithmetic_intensity"));
    put_optional(d, "pct_of_ceiling", r.pct_of_ceiling, reason_of("pct_of_ceiling"));
    d["bound"] = r.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.bound);
    if (r.bound.empty()) d["null_reasons"]["bound"] = reason_of("pct_of_ceiling");
    if (r.sol_floor) {
        d["speed_of_light"] = to_json(*r.sol_floor, r.timing ? std::optional<double>(r.timing->stats.median) : std::nullopt);
    } else {
        d["speed_of_light"] = nullptr;
        d["null_reasons"]["speed_of_light"] = r.timing ? "no floor computed" : reason_of("pct_of_ceiling");
    }
    j["derived"] = d;

    if (r.counters) {
        nlohmann::json cj = to_json(*r.counters);
        nlohmann::json rec;
        const double model = r.model.bytes_read + r.model.bytes_written;
        rec["model_bytes"] = model;
        const std::string why = r.counters->status == "ok" ? "DRAM byte counters missing from the result"
                                                           : "counters " + r.counters->status + ": " + r.counters->reason;
        put_optional(rec, "measured_dram_bytes", r.measured_dram_bytes, why);
        put_optional(rec, "ratio", r.traffic_ratio, why);
        rec["flag"] = r.traffic_flag.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.traffic_flag);
        put_optional(rec, "bytes_saved_vs_baseline", r.bytes_saved_vs_baseline,
                     r.role == variant_role::baseline ? "this is the baseline" : "no measured bytes for this variant or its baseline");
        cj["reconciliation"] = rec;
        j["counters"] = cj;
    } else {
        j["counters"] = nullptr;
        j["null_reasons"]["counters"] = r.timing ? "counter pass disabled (--no-counters)" : "no counter pass: not timed";
    }
    return j;
}

nlohmann::json count_outcomes(const nlohmann::json& results) {
    nlohmann::json summary = {{"pass", 0}, {"fail", 0}, {"error", 0}, {"skipped", 0}};
    for (const auto& r : results) {
        const std::string o = r.value("outcome", "error");
        summary[o] = summary.value(o, 0) + 1;
    }
    return summary;
}

void annotate_time_vs_random(nlohmann::json& results) {
    if (!results.is_array()) return;
    auto kind_of = [](const nlohmann::json& r) -> std::string {
        const auto ci = r.find("case_info");
        if (ci == r.end() || !ci->is_object()) return "";
        const auto k = ci->find("input_kind");
        return k != ci->end() && k->is_string() ? k->get<std::string>() : "";
    };
    auto key_of = [](const nlohmann::json& r) {
        const auto& ci = r["case_info"];
        const auto part = [&](const char* k) { return ci.contains(k) ? ci[k].dump() : std::string("null"); };
        const auto str = [&](const char* k) { return r.contains(k) && r[k].is_string() ? r[k].get<std::string>() : std::string(); };
        // device_index: a merged report of several devices pairs results of one device only.
        const std::string dev = r.contains("device_index") ? r["device_index"].dump() : std::string();
        return str("suite") + '\x1f' + str("variant") + '\x1f' + str("config") + '\x1f' + str("dtype") + '\x1f' + part("dims") + '\x1f' +
               part("params") + '\x1f' + dev;
    };
    auto median_of = [](const nlohmann::json& r) -> std::optional<double> {
        const auto t = r.find("timing");
        if (t == r.end() || !t->is_object()) return std::nullopt;
        const auto m = t->find("median_us");
        if (m == t->end() || !m->is_number()) return std::nullopt;
        return m->get<double>();
    };
    std::map<std::string, std::vector<const nlohmann::json*>> twins;
    for (const auto& r : results) {
        if (r.is_object() && kind_of(r) == "random") twins[key_of(r)].push_back(&r);
    }
    for (auto& r : results) {
        if (!r.is_object() || !r.contains("derived") || !r["derived"].is_object()) continue;
        auto& d = r["derived"];
        std::optional<double> value;
        std::string why;
        const std::string kind = kind_of(r);
        const auto median = median_of(r);
        if (kind.empty()) {
            why = "the case declares no input kind";
        } else if (kind == "random") {
            why = "a random-input case: the reference of this ratio";
        } else if (!median) {
            why = "not timed";
        } else if (const auto it = twins.find(key_of(r)); it == twins.end()) {
            why = "no random-input result of the same suite, variant, config, dtype, dims and params (and device) in this report";
        } else if (it->second.size() > 1) {
            why = std::to_string(it->second.size()) +
                  " random-input results of the same suite, variant, config, dtype, dims and params (and device) in this report";
        } else if (const auto twin = median_of(*it->second.front()); !twin || *twin <= 0) {
            why = "its random-input twin (" + it->second.front()->value("case", std::string("?")) + ") was not timed";
        } else {
            value = *median / *twin;
        }
        d["time_vs_random"] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
        if (value) {
            if (d.contains("null_reasons") && d["null_reasons"].is_object()) d["null_reasons"].erase("time_vs_random");
        } else {
            d["null_reasons"]["time_vs_random"] = why;
        }
    }
}

nlohmann::json make_report(const report_context& ctx, const std::vector<variant_result>& results,
                           const nlohmann::json& prior) {
    nlohmann::json j;
    j["schema"] = {{"name", report_schema_name}, {"version", report_schema_version}};
    j["tool"] = build_info_json();
    j["started_at"] = ctx.started_at;
    j["written_at"] = utc_now_iso8601();
    j["status"] = ctx.status;
    j["status_reason"] = ctx.status_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(ctx.status_reason);
    j["device"] = ctx.device;
    j["settings"] = ctx.settings;
    j["ceilings"] = ctx.ceilings;
    j["suites_completed"] = ctx.suites_completed;
    j["results"] = prior.is_array() ? prior : nlohmann::json::array();
    for (const auto& r : results) j["results"].push_back(to_json(r));
    annotate_time_vs_random(j["results"]);
    j["summary"] = count_outcomes(j["results"]);
    // Where the run's time went: each phase summed over the results, plus the ceilings.
    nlohmann::json phases = nlohmann::json::object();
    for (const auto& r : j["results"]) {
        if (!r.contains("phase_seconds") || !r["phase_seconds"].is_object()) continue;
        for (const auto& [k, v] : r["phase_seconds"].items()) {
            if (v.is_number()) phases[k] = phases.value(k, 0.0) + v.get<double>();
        }
    }
    if (ctx.settings.is_object() && ctx.settings.contains("ceilings_seconds")) phases["ceilings"] = ctx.settings["ceilings_seconds"];
    j["phase_seconds"] = phases;
    return j;
}

std::string json_file_text(const nlohmann::json& j) {
    if (!j.is_object() || j.empty()) return j.dump(2);
    const auto one_per_line = [](const nlohmann::json& v) {
        if (!v.is_array() || v.empty()) return false;
        for (const auto& e : v) {
            if (!e.is_object()) return false;
        }
        return true;
    };
    // Indents every line after the first of a nested dump by the two spaces of its key.
    const auto nested = [](const nlohmann::json& v) {
        std::string s = v.dump(2), out;
        out.reserve(s.size() + s.size() / 16);
        for (const char c : s) {
            out += c;
            if (c == '\n') out += "  ";
        }
        return out;
    };
    std::string out = "{\n";
    bool first = true;
    for (const auto& [key, v] : j.items()) {
        if (!first) out += ",\n";
        first = false;
        out += "  " + nlohmann::json(key).dump() + ": ";
        if (one_per_line(v)) {
            out += "[\n";
            for (std::size_t i = 0; i < v.size(); ++i) out += "    " + v[i].dump() + (i + 1 < v.size() ? ",\n" : "\n");
            out += "  ]";
        } else {
            out += nested(v);
        }
    }
    return out + "\n}";
}

void write_json_atomic(const std::string& path, const nlohmann::json& j) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path());
    const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error("cannot write " + tmp.string());
        out << json_file_text(j) << '\n';
        out.flush();
        if (!out) throw std::runtime_error("writing " + tmp.string() + " failed");
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp);
        throw std::runtime_error("cannot rename " + tmp.string() + " to " + path + ": " + ec.message());
    }
}

std::string utc_now_iso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace fusebench
