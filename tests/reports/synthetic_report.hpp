// Synthetic fusebench reports for the report-tool tests: schema-valid documents whose timings,
// raw samples, devices and outcomes the test chooses, so a verdict can be predicted exactly.
#pragma once

#include "harness/rng.hpp"
#include "harness/stats.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace fusebench::test {

struct synth_device {
    std::string name = "NVIDIA H200";
    std::string label = "h200";
    std::string uuid = "GPU-aaaaaaaa-0000-0000-0000-000000000001";
    double copy_gbps = 4200;      // measured copy ceiling [GB/s]
    double copy_noise = 0.004;
    int copy_samples = 20;        // 0: the ceiling records no sample count
};

struct synth_result {
    std::string suite = "glu";
    std::string case_name = "swiglu:4096x14336";
    std::string dtype = "bf16";
    std::string variant = "fused_vec";
    std::string role = "fused";
    std::string outcome = "pass";
    std::string reason;
    std::string input_kind = "random";  // case_info.input_kind
    bool timed = true;
    double median_us = 100;
    double noise = 0.003;             // used when samples is empty
    std::vector<double> samples;      // raw samples; the statistics come from them when present
    double model_bytes = 352321536;   // traffic model, read + written [bytes]
    std::optional<double> speedup;    // derived.speedup_vs_baseline
    std::optional<double> e2e_us;     // timing.e2e.median_us (none when unset)
    double e2e_noise = 0.005;
    std::optional<double> e2e_iqr_us;  // timing.e2e.iqr_us (none when unset)
};

// n samples around `median` with relative spread `rel_sd` (deterministic in `seed`), shifted so
// that their median is exactly `median`.
inline std::vector<double> samples_around(double median, double rel_sd, std::size_t n, std::uint64_t seed) {
    const rng g(seed);
    std::vector<double> s(n);
    for (std::size_t i = 0; i < n; ++i) s[i] = median * (1.0 + rel_sd * g.normal(i));
    const double m = summarize(s).median;
    for (auto& x : s) x += median - m;
    return s;
}

inline nlohmann::json device_json(const synth_device& d) {
    return {{"name", d.name},           {"label", d.label},         {"uuid", d.uuid},           {"compute_capability", "9.0"},
            {"sm_count", 132},          {"memory_bytes", 150109880320LL}, {"l2_bytes", 62914560}, {"sm_clock_max_mhz", 1980.0},
            {"memory_clock_max_mhz", 3201.0}, {"memory_bus_width_bits", 6016}, {"ecc_enabled", true}, {"driver_version", 13000},
            {"runtime_version", 13000}};
}

inline nlohmann::json ceilings_json(const synth_device& d) {
    nlohmann::json j = {{"copy_gbps", {{"value", d.copy_gbps}, {"noise", d.copy_noise}, {"unit", "GB/s"}}},
                        {"bf16_tflops", {{"value", 800.0}, {"noise", 0.004}, {"unit", "TFLOP/s"}, {"samples", 20}}}};
    if (d.copy_samples > 0) j["copy_gbps"]["samples"] = d.copy_samples;
    return j;
}

inline nlohmann::json result_json(const synth_result& r, const synth_device& d) {
    nlohmann::json j;
    j["suite"] = r.suite;
    j["case"] = r.case_name;
    j["dtype"] = r.dtype;
    j["variant"] = r.variant;
    j["role"] = r.role;
    j["description"] = "synthetic";
    j["case_info"] = {{"dims", {{"tokens", 4096}, {"inter", 14336}}}, {"params", nlohmann::json::object()}, {"input_kind", r.input_kind}, {"timed", r.timed}};
    j["outcome"] = r.outcome;
    j["reason"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
    j["correctness"] = nullptr;
    j["null_reasons"] = {{"correctness", "synthetic"}, {"counters", "synthetic"}};
    j["counters"] = nullptr;
    j["traffic_model"] = {{"bytes_read", r.model_bytes * 2 / 3}, {"bytes_written", r.model_bytes / 3}, {"flops", r.model_bytes / 3}};
    const bool timed = r.outcome == "pass" && r.timed;
    nlohmann::json derived = {{"achieved_gbps", nullptr}, {"achieved_tflops", nullptr}, {"pct_of_copy_ceiling", nullptr},
                              {"pct_of_floor", nullptr},  {"speedup_vs_baseline", nullptr}, {"arithmetic_intensity", nullptr},
                              {"pct_of_ceiling", nullptr}, {"bound", nullptr}};
    if (timed) {
        sample_stats st;
        if (!r.samples.empty()) {
            st = summarize(r.samples);
        } else {
            st.n = 100;
            st.median = st.min = st.max = st.mean = st.p10 = st.p90 = r.median_us;
            st.noise = r.noise;
            st.rel_stdev = r.noise * 10 / 1.2533;
        }
        nlohmann::json t = {{"method", "cupti_activity"}, {"method_reason", "synthetic"}, {"mode", "cold"},
                            {"samples", st.n},           {"median_us", st.median},      {"min_us", st.min},
                            {"max_us", st.max},          {"mean_us", st.mean},          {"stdev_us", st.stdev},
                            {"p10_us", st.p10},          {"p90_us", st.p90},            {"iqr_us", st.iqr},
                            {"rel_stdev", st.rel_stdev}, {"noise", st.noise},           {"stop_reason", "noise_target_met"},
                            {"sampling_seconds", 0.1},
                            {"clock", {{"sm_clock_mhz", nullptr}, {"max_clock_mhz", 1980.0}, {"low_clock_samples", nlohmann::json::array()},
                                       {"low_clock_threshold", 0.75}}}};
        if (!r.samples.empty()) t["samples_us"] = r.samples;
        if (r.e2e_us) {
            t["e2e"] = {{"method", "synthetic"}, {"samples", 30}, {"median_us", *r.e2e_us}, {"noise", r.e2e_noise},
                        {"min_us", *r.e2e_us}, {"max_us", *r.e2e_us}, {"mean_us", *r.e2e_us}};
            if (r.e2e_iqr_us) t["e2e"]["iqr_us"] = *r.e2e_iqr_us;
        }
        j["timing"] = t;
        const double gbps = r.model_bytes / (st.median * 1e-6) * 1e-9;
        derived["achieved_gbps"] = gbps;
        derived["achieved_tflops"] = r.model_bytes / 3 / (st.median * 1e-6) * 1e-12;
        derived["pct_of_copy_ceiling"] = 100 * gbps / d.copy_gbps;
        derived["pct_of_floor"] = 100 * gbps / d.copy_gbps;
        derived["pct_of_ceiling"] = 100 * gbps / d.copy_gbps;
        derived["arithmetic_intensity"] = 1.0 / 3.0;
        derived["bound"] = "memory";
        derived["speedup_vs_baseline"] = r.speedup ? nlohmann::json(*r.speedup) : nlohmann::json(1.0);
    } else {
        j["timing"] = nullptr;
        j["null_reasons"]["timing"] = r.outcome == "pass" ? "not timed: edge case verified only" : "not timed: " + r.outcome;
        derived["null_reasons"] = nlohmann::json::object();
        for (const auto& [k, v] : derived.items()) {
            if (k != "null_reasons") derived["null_reasons"][k] = "not timed";
        }
    }
    j["derived"] = derived;
    return j;
}

inline nlohmann::json make_report(const std::vector<synth_result>& results, const synth_device& d = {},
                                  const std::string& tool_version = "0.1.0", std::uint64_t seed = 1) {
    nlohmann::json j;
    j["schema"] = {{"name", "fusebench-report"}, {"version", 1}};
    j["tool"] = {{"tool_version", tool_version}, {"git_commit", "0123456789abcdef"}, {"git_dirty", false},
                 {"cxx_compiler", "GNU 13.3.0"}, {"cuda_compiler", "NVIDIA 13.0.88"}, {"cxx_flags", "-O3"},
                 {"cuda_flags", "-O3"},          {"cuda_architectures", "90"},     {"build_type", "Release"},
                 {"slowdown_variant", nullptr}};
    j["started_at"] = "2026-11-21T22:16:18Z";
    j["written_at"] = "2026-11-21T22:20:14Z";
    j["status"] = "complete";
    j["status_reason"] = nullptr;
    j["device"] = device_json(d);
    j["settings"] = {{"seed", seed}, {"seed_source", "fresh"}, {"mode", "cold"}, {"sampling", {{"noise_target", 0.005}}},
                     {"shard", {{"index", 1}, {"count", 1}}}};
    j["ceilings"] = ceilings_json(d);
    j["suites_completed"] = nlohmann::json::array();
    j["results"] = nlohmann::json::array();
    nlohmann::json summary = {{"pass", 0}, {"fail", 0}, {"error", 0}, {"skipped", 0}};
    for (const auto& r : results) {
        j["results"].push_back(result_json(r, d));
        summary[r.outcome] = summary[r.outcome].get<int>() + 1;
        bool have = false;
        for (const auto& s : j["suites_completed"]) have = have || s == r.suite;
        if (!have) j["suites_completed"].push_back(r.suite);
    }
    j["summary"] = summary;
    return j;
}

// A fresh, empty folder for one test, removed when the object goes.
class temp_dir {
public:
    temp_dir() {
        static std::atomic<int> counter{0};
        m_path = std::filesystem::temp_directory_path() /
                 ("fusebench-reports-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    temp_dir(const temp_dir&) = delete;  // owns the folder: one owner removes it
    temp_dir& operator=(const temp_dir&) = delete;

    std::string file(const std::string& name) const { return (m_path / name).string(); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(file(name), std::ios::binary) << text;
        return file(name);
    }
    std::string write(const std::string& name, const nlohmann::json& j) const { return write(name, j.dump(1)); }

private:
    std::filesystem::path m_path;
};

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace fusebench::test
