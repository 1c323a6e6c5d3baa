#include "reports/report_file.hpp"

#include "harness/ceilings.hpp"
#include "harness/json_schema.hpp"
#include "harness/report.hpp"
#include "reports/format_util.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#if FUSEBENCH_HAVE_ZLIB
#include <zlib.h>
#endif

#ifndef FUSEBENCH_SCHEMA_PATH
#define FUSEBENCH_SCHEMA_PATH "reports/schema/fusebench-report-v1.schema.json"
#endif

namespace fusebench::reports {

namespace {

bool is_gzip(const std::string& bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// A report stored gzip-compressed (`.json.gz`, as the device returns large reports) is read as its
// decompressed text. Corrupt or cut-off data is an error naming the file, never a partial report.
std::string gunzip(const std::string& bytes, const std::string& path) {
#if FUSEBENCH_HAVE_ZLIB
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 32) != Z_OK) throw bad_input(path + ": cannot start zlib to read gzip data");  // 32: gzip or zlib header
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs.avail_in = static_cast<uInt>(bytes.size());
    std::string out;
    std::string chunk(1 << 20, '\0');
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
        zs.avail_out = static_cast<uInt>(chunk.size());
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            const std::string why = zs.msg != nullptr ? zs.msg : (rc == Z_BUF_ERROR ? "the data ends early" : "zlib error " + std::to_string(rc));
            inflateEnd(&zs);
            throw bad_input(path + ": corrupt or truncated gzip data (" + why + ")");
        }
        out.append(chunk.data(), chunk.size() - zs.avail_out);
        if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
            inflateEnd(&zs);
            throw bad_input(path + ": truncated gzip data (the compressed stream ends after " + std::to_string(bytes.size()) + " bytes)");
        }
    }
    inflateEnd(&zs);
    return out;
#else
    (void)bytes;
    throw bad_input(path + ": gzip-compressed, and this build of fusebench has no zlib: gunzip it first");
#endif
}

// One line: a parser's or validator's message may span lines.
std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
}

// The schema is loaded once per process: the tools validate several reports against it.
const json_schema& report_schema() {
    static const json_schema schema = [] {
        const std::string p = schema_path();
        try {
            return load_json_schema(p);
        } catch (const std::exception& e) {
            throw bad_input("cannot load the report schema (" + one_line(e.what()) +
                            "); set FUSEBENCH_SCHEMA to reports/schema/fusebench-report-v1.schema.json");
        }
    }();
    return schema;
}

}  // namespace

std::string schema_path() {
    if (const char* env = std::getenv("FUSEBENCH_SCHEMA"); env && *env) return env;
    return FUSEBENCH_SCHEMA_PATH;
}

std::string device_ctx::name() const {
    return device.is_object() ? string_or(device, "name", "unknown device") : "unknown device";
}

std::string device_ctx::label() const {
    if (device.is_object()) {
        const std::string l = string_or(device, "label", "");
        if (!l.empty()) return l;
    }
    std::string l;
    for (char c : name()) {
        if (std::isalnum(static_cast<unsigned char>(c))) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return l.empty() ? "gpu" : l;
}

std::string device_ctx::uuid() const { return device.is_object() ? string_or(device, "uuid", "") : ""; }

std::string device_ctx::driver() const {
    if (!device.is_object()) return "driver unknown";
    // cudaDriverGetVersion / cudaRuntimeGetVersion encode 1000 * major + 10 * minor.
    auto ver = [&](const char* k) -> std::string {
        const auto it = device.find(k);
        if (it == device.end() || !it->is_number_integer()) return "?";
        const int v = it->get<int>();
        return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
    };
    return "driver API " + ver("driver_version") + ", runtime " + ver("runtime_version");
}

std::string loaded_report::tool_line() const {
    const auto& t = doc.at("tool");
    std::string commit = string_or(t, "git_commit", "unknown");
    if (commit.size() > 12) commit.resize(12);
    std::string s = "fusebench " + string_or(t, "tool_version", "?") + " (" + commit;
    if (t.value("git_dirty", false)) s += ", dirty";
    const auto sv = t.find("slowdown_variant");
    if (sv != t.end() && sv->is_string()) s += ", SLOWDOWN BUILD " + sv->get<std::string>();
    return s + ")";
}

std::string loaded_report::status() const { return string_or(doc, "status", "unknown"); }

std::optional<double> number_or_null(const nlohmann::json& obj, const char* key) {
    if (!obj.is_object()) return std::nullopt;
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    if (!std::isfinite(v)) return std::nullopt;
    return v;
}

std::string string_or(const nlohmann::json& obj, const char* key, const std::string& fallback) {
    if (!obj.is_object()) return fallback;
    const auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

matched_ceiling ceiling_named(const nlohmann::json& ceilings, const char* key) {
    if (!ceiling_value(ceilings, key)) return {key, nullptr};
    return {key, ceilings.at(key)};
}

matched_ceiling ceiling_for(const nlohmann::json& ceilings, const std::string& bound, const std::string& compute_unit) {
    if (!ceilings.is_object()) return {};
    if (bound == "memory") return ceiling_named(ceilings, "copy_gbps");
    if (bound != "compute") return {};
    if (compute_unit == "tensor_bf16") return ceiling_named(ceilings, "bf16_tflops");
    if (compute_unit == "tensor_fp16") return ceiling_named(ceilings, "fp16_tflops");
    if (compute_unit == "tensor_fp8") return ceiling_named(ceilings, "fp8_tflops");
    if (compute_unit == "fp32") return ceiling_named(ceilings, "fp32_tflops");
    if (compute_unit == "tensor_tf32") return {"", nullptr};
    matched_ceiling best;
    std::optional<double> best_value;
    for (const char* k : {"bf16_tflops", "fp16_tflops", "fp32_tflops"}) {
        const auto v = ceiling_value(ceilings, k);
        if (v && (!best_value || *v > *best_value)) {
            best = ceiling_named(ceilings, k);
            best_value = v;
        }
    }
    return best;
}

std::string ceiling_schedule(const matched_ceiling& m) {
    if (m.key != "bf16_tflops" && m.key != "fp16_tflops" && m.key != "fp8_tflops") return "";
    if (!m.ceiling.is_object()) return "";
    const std::string method = string_or(m.ceiling, "method", "");
    if (method.empty()) return "";  // a report that does not say how
    return method.find("idle gap") != std::string::npos ? "bursts after idle gaps" : "back to back";
}

std::string ceilings_summary(const nlohmann::json& ceilings) {
    if (!ceilings.is_object()) return "no ceilings";
    auto value = [&](const char* k) {
        const auto v = ceiling_value(ceilings, k);
        return v ? format("%.0f", *v) : std::string("-");
    };
    std::string o = "copy " + value("copy_gbps") + " GB/s, bf16 " + value("bf16_tflops") + " / fp16 " + value("fp16_tflops") + " / fp8 " +
                    value("fp8_tflops") + " TFLOP/s";
    const matched_ceiling fp8 = ceiling_named(ceilings, "fp8_tflops");
    const matched_ceiling tensor = fp8.ceiling.is_object() ? fp8 : ceiling_named(ceilings, "bf16_tflops");
    const std::string schedule = ceiling_schedule(tensor);
    if (!schedule.empty()) {
        o += " (" + schedule;
        if (const auto mhz = number_or_null(tensor.ceiling, "sm_clock_mhz_after")) o += "; SM clock after " + format("%.0f", *mhz) + " MHz";
        o += ")";
    }
    return o;
}

std::string variant_label(const nlohmann::json& r) {
    const std::string config = string_or(r, "config", "");
    return string_or(r, "variant", "?") + (config.empty() ? "" : "[" + config + "]");
}

bool result_selection::matches(const nlohmann::json& r) const {
    const auto in = [](const std::vector<std::string>& list, const std::string& v) {
        return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
    };
    if (!in(suites, string_or(r, "suite", "")) || !in(dtypes, string_or(r, "dtype", "")) || !in(variants, string_or(r, "variant", ""))) {
        return false;
    }
    if (cases.empty()) return true;
    const std::string name = string_or(r, "case", "");
    return std::any_of(cases.begin(), cases.end(), [&](const std::string& c) { return name.find(c) != std::string::npos; });
}

std::string result_selection::describe() const {
    std::string o;
    const auto add = [&](const char* opt, const std::vector<std::string>& list) {
        if (list.empty()) return;
        std::string joined;
        for (const auto& v : list) joined += (joined.empty() ? "" : ",") + v;
        o += (o.empty() ? "" : " ") + std::string(opt) + " " + joined;
    };
    add("--suite", suites);
    add("--case", cases);
    add("--dtype", dtypes);
    add("--variant", variants);
    return o;
}

loaded_report select_results(const loaded_report& r, const result_selection& sel) {
    loaded_report out = r;
    out.doc["results"] = nlohmann::json::array();
    out.device_of.clear();
    const auto& all = r.results();
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (!sel.matches(all[i])) continue;
        out.doc["results"].push_back(all[i]);
        out.device_of.push_back(r.device_of.at(i));
    }
    if (out.doc["results"].empty()) {
        throw bad_input(r.path + ": no result matches the selection (" + sel.describe() + ")");
    }
    return out;
}

std::string result_key(const nlohmann::json& r) {
    return string_or(r, "suite", "?") + "/" + string_or(r, "case", "?") + "/" + string_or(r, "dtype", "?") + "/" + variant_label(r);
}

loaded_report load_report(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw bad_input(path + ": cannot read (" + std::strerror(errno) + ")");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw bad_input(path + ": read error");
    std::string raw = ss.str();
    const std::string text = is_gzip(raw) ? gunzip(raw, path) : std::move(raw);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw bad_input(path + ": empty file, not a fusebench report");
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // The parser stops one past the last byte when the text ends early: a cut-off write.
        if (e.byte >= text.size()) {
            throw bad_input(path + ": truncated JSON (the text ends after " + std::to_string(text.size()) +
                            " bytes inside an unfinished value)");
        }
        throw bad_input(path + ": not JSON (parse error at byte " + std::to_string(e.byte) + ")");
    }
    return parse_report(std::move(doc), path);
}

loaded_report parse_report(nlohmann::json doc, const std::string& path) {
    if (!doc.is_object()) throw bad_input(path + ": not a fusebench report (the top level is a JSON " + doc.type_name() + ")");
    const auto sit = doc.find("schema");
    if (sit == doc.end() || !sit->is_object() || string_or(*sit, "name", "") != report_schema_name) {
        throw bad_input(path + ": not a fusebench report (no schema.name \"" + report_schema_name + "\")");
    }
    const auto vit = sit->find("version");
    if (vit == sit->end() || !vit->is_number_integer()) {
        throw bad_input(path + ": fusebench report without an integer schema.version");
    }
    const long long version = vit->get<long long>();
    if (version > report_schema_version) {
        throw bad_input(path + ": report schema version " + std::to_string(version) + " is newer than this fusebench reads (" +
                        std::to_string(report_schema_version) + "): use a newer fusebench");
    }
    if (version != report_schema_version) {
        throw bad_input(path + ": report schema version " + std::to_string(version) + " is not supported (this fusebench reads " +
                        std::to_string(report_schema_version) + ")");
    }
    const auto errors = report_schema().validate(doc);
    if (!errors.empty()) {
        std::string msg = path + ": does not match report schema v" + std::to_string(report_schema_version) + ": " + one_line(errors.front());
        if (errors.size() > 1) msg += " (and " + std::to_string(errors.size() - 1) + " more)";
        throw bad_input(msg);
    }

    loaded_report rep;
    rep.path = path;
    rep.doc = std::move(doc);
    const auto& d = rep.doc;
    const auto dit = d.find("devices");
    if (dit != d.end() && dit->is_array() && !dit->empty()) {
        rep.merged_devices = true;
        for (std::size_t i = 0; i < dit->size(); ++i) {
            const auto& e = (*dit)[i];
            if (!e.is_object() || !e.contains("device")) throw bad_input(path + ": devices[" + std::to_string(i) + "] has no device object");
            rep.devices.push_back({e["device"], e.value("ceilings", nlohmann::json(nullptr))});
        }
    } else {
        rep.devices.push_back({d["device"], d["ceilings"]});
    }
    const auto& results = d["results"];
    rep.device_of.reserve(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
        std::size_t dev = 0;
        if (rep.merged_devices) {
            const auto it = results[i].find("device_index");
            if (it == results[i].end() || !it->is_number_unsigned() || it->get<std::size_t>() >= rep.devices.size()) {
                throw bad_input(path + ": results[" + std::to_string(i) + "] has no valid device_index into devices");
            }
            dev = it->get<std::size_t>();
        }
        rep.device_of.push_back(dev);
    }
    return rep;
}

}  // namespace fusebench::reports
