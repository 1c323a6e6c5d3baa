#include "reports/merge.hpp"

#include "harness/report.hpp"

#include <algorithm>
#include <map>

namespace fusebench::reports {

namespace {

std::string json_text(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return "none";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string device_identity(const device_ctx& d) {
    const std::string u = d.uuid();
    return u.empty() ? "name:" + d.name() + "/" + d.label() : u;
}

int status_rank(const std::string& s) {
    if (s == "complete") return 0;
    if (s == "running") return 1;
    if (s == "interrupted") return 2;
    return 3;  // context_lost
}

}  // namespace

nlohmann::json merge_reports(const std::vector<loaded_report>& inputs, const merge_options& options,
                             std::vector<std::string>& notes) {
    if (inputs.empty()) throw bad_input("no input reports");
    const auto& first = inputs.front();

    // Same tool and timing mode, or --force.
    for (std::size_t i = 1; i < inputs.size(); ++i) {
        const auto& a = first.doc["tool"];
        const auto& b = inputs[i].doc["tool"];
        for (const char* k : {"tool_version", "git_commit", "slowdown_variant"}) {
            if (json_text(a, k) == json_text(b, k)) continue;
            const std::string what = std::string("tool.") + k + " differs: " + first.path + " has " + json_text(a, k) + ", " +
                                     inputs[i].path + " has " + json_text(b, k);
            if (!options.force) throw bad_input("" + what + " (results of different tools do not belong in one report; --force merges anyway)");
            notes.push_back("forced: " + what);
        }
        const std::string ma = string_or(first.doc["settings"], "mode", "?"), mb = string_or(inputs[i].doc["settings"], "mode", "?");
        if (ma != mb) {
            const std::string what = "timing mode differs: " + first.path + " " + ma + ", " + inputs[i].path + " " + mb;
            if (!options.force) throw bad_input("" + what + " (--force merges anyway)");
            notes.push_back("forced: " + what);
        }
    }

    // Devices in order of first appearance, each with the ceilings of its first run.
    std::vector<device_ctx> devices;
    std::map<std::string, std::size_t> device_index;
    for (const auto& in : inputs) {
        for (const auto& d : in.devices) {
            if (device_index.emplace(device_identity(d), devices.size()).second) devices.push_back(d);
        }
    }
    const bool multi = devices.size() > 1;

    // Results keyed by (result, device); a repeat is refused, or with --force replaces in place.
    nlohmann::json results = nlohmann::json::array();
    std::map<std::string, std::pair<std::size_t, std::string>> seen;  // key -> (position, file)
    for (const auto& in : inputs) {
        const auto& res = in.results();
        for (std::size_t i = 0; i < res.size(); ++i) {
            const std::string dev = device_identity(in.device_for(i));
            const std::string key = result_key(res[i]) + "@" + dev;
            nlohmann::json r = res[i];
            r.erase("device_index");
            if (multi) r["device_index"] = device_index.at(dev);
            if (auto it = seen.find(key); it != seen.end()) {
                const std::string what = result_key(res[i]) + " on " + dev + " is in both " + it->second.second + " and " + in.path;
                if (!options.force) throw bad_input("" + what + " (overlapping shards or a rerun; --force keeps the later)");
                notes.push_back("replaced: " + what + ": kept " + in.path);
                results[it->second.first] = std::move(r);
                it->second.second = in.path;
                continue;
            }
            seen.emplace(key, std::make_pair(results.size(), in.path));
            results.push_back(std::move(r));
        }
    }

    nlohmann::json out;
    out["schema"] = first.doc["schema"];
    out["tool"] = first.doc["tool"];
    std::string started = string_or(first.doc, "started_at", "");
    std::string status = "complete", status_reason;
    std::vector<std::string> suites;
    nlohmann::json merged_from = nlohmann::json::array();
    for (const auto& in : inputs) {
        const std::string s = string_or(in.doc, "started_at", "");
        if (!s.empty() && (started.empty() || s < started)) started = s;
        if (in.status() != "complete") {
            const std::string why = in.path + " is " + in.status() +
                                    (string_or(in.doc, "status_reason", "").empty() ? "" : ": " + string_or(in.doc, "status_reason", ""));
            status_reason += (status_reason.empty() ? "" : "; ") + why;
            if (status_rank(in.status()) > status_rank(status)) status = in.status();
        }
        for (const auto& s : in.doc["suites_completed"]) {
            if (std::find(suites.begin(), suites.end(), s.get<std::string>()) == suites.end()) suites.push_back(s.get<std::string>());
        }
        if (const auto it = in.doc.find("merged_from"); it != in.doc.end() && it->is_array()) {
            for (const auto& m : *it) merged_from.push_back(m);  // an input that is itself a merge: keep its runs
            continue;
        }
        const auto& set = in.doc["settings"];
        merged_from.push_back({{"file", in.path},
                               {"started_at", in.doc["started_at"]},
                               {"written_at", in.doc["written_at"]},
                               {"status", in.status()},
                               {"seed", set.value("seed", nlohmann::json(nullptr))},
                               {"shard", set.value("shard", nlohmann::json(nullptr))},
                               {"device", in.devices.front().device},
                               {"ceilings", in.devices.front().ceilings},
                               {"tool", in.doc["tool"]},
                               {"results", in.results().size()}});
    }
    out["started_at"] = started;
    out["written_at"] = utc_now_iso8601();
    out["status"] = status;
    out["status_reason"] = status_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json("merged: " + status_reason);
    if (multi) {
        out["device"] = nullptr;
        out["ceilings"] = nullptr;
        out["null_reasons"] = {{"device", "merged from " + std::to_string(devices.size()) +
                                              " devices: see devices; each result's device_index points into it"},
                               {"ceilings", "merged from several devices: each entry of devices has its own ceilings"}};
        out["devices"] = nlohmann::json::array();
        for (const auto& d : devices) out["devices"].push_back({{"device", d.device}, {"ceilings", d.ceilings}});
    } else {
        out["device"] = devices.front().device;
        out["ceilings"] = devices.front().ceilings;
    }
    out["settings"] = first.doc["settings"];
    out["suites_completed"] = suites;
    out["merged_from"] = merged_from;

    // Standard outcome counts recounted; any other (integer) summary key summed over the inputs.
    nlohmann::json summary = {{"pass", 0}, {"fail", 0}, {"error", 0}, {"skipped", 0}};
    for (const auto& r : results) {
        const std::string o = r.value("outcome", "");
        if (summary.contains(o)) summary[o] = summary[o].get<long long>() + 1;
    }
    for (const auto& in : inputs) {
        for (const auto& [k, v] : in.doc["summary"].items()) {
            if (k == "pass" || k == "fail" || k == "error" || k == "skipped" || !v.is_number_integer()) continue;
            summary[k] = summary.value(k, 0LL) + v.get<long long>();
        }
    }
    out["summary"] = summary;
    // Phase times: summed over the inputs (shards run one after another or side by side: the sum
    // is the work done, not the wall time).
    nlohmann::json phases = nlohmann::json::object();
    for (const auto& in : inputs) {
        if (!in.doc.contains("phase_seconds") || !in.doc["phase_seconds"].is_object()) continue;
        for (const auto& [k, v] : in.doc["phase_seconds"].items()) {
            if (v.is_number()) phases[k] = phases.value(k, 0.0) + v.get<double>();
        }
    }
    if (!phases.empty()) out["phase_seconds"] = phases;
    annotate_time_vs_random(results);  // a twin may come from another input
    out["results"] = std::move(results);
    return out;
}

}  // namespace fusebench::reports
