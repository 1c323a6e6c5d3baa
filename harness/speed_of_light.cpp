#include "harness/speed_of_light.hpp"

#include "harness/ceilings.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace fusebench {

namespace {

std::optional<double> theoretical_value(const nlohmann::json& c, const char* key) {
    if (!c.is_object() || !c.contains("theoretical") || !c.at("theoretical").is_object()) return std::nullopt;
    const auto& t = c.at("theoretical");
    if (t.contains(key) && t.at(key).is_number()) return t.at(key).get<double>();
    return std::nullopt;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

}  // namespace

guard_rates guard_rates_from_ceilings(const nlohmann::json& ceilings, std::size_t l2_bytes) {
    guard_rates r;
    r.l2_bytes = l2_bytes;
    if (auto v = ceiling_value(ceilings, "read_gbps")) r.read_gbps = rate_with_source{*v, "measured: read_gbps"};
    if (auto v = ceiling_value(ceilings, "write_gbps")) r.write_gbps = rate_with_source{*v, "measured: write_gbps"};
    // Per unit: the theoretical peak at the max SM clock when known (nothing runs faster), else
    // the measured ceiling of that unit.
    auto unit_rate = [&](compute_unit u, const char* theoretical_key, const char* measured_key) {
        if (auto t = theoretical_value(ceilings, theoretical_key)) {
            r.compute_tflops[u] = {*t, std::string("theoretical: ") + theoretical_key + " at the max SM clock"};
        } else if (auto m = measured_key ? ceiling_value(ceilings, measured_key) : std::nullopt) {
            r.compute_tflops[u] = {*m, std::string("measured: ") + measured_key};
        }
    };
    unit_rate(compute_unit::fp32, "fp32_tflops", "fp32_tflops");
    unit_rate(compute_unit::tensor_bf16, "tensor_16bit_tflops", "bf16_tflops");
    unit_rate(compute_unit::tensor_fp16, "tensor_16bit_tflops", "fp16_tflops");
    unit_rate(compute_unit::tensor_fp8, "tensor_fp8_tflops", "fp8_tflops");
    // TF32: half the 16-bit dense rate per SM and clock on sm_80 / sm_90 (and sm_89). Only from the
    // theoretical peak: no TF32 ceiling is measured, and half a measured 16-bit ceiling could sit
    // below what a TF32 kernel reaches (the guard would then fail a correct kernel).
    if (auto t = theoretical_value(ceilings, "tensor_16bit_tflops")) {
        r.compute_tflops[compute_unit::tensor_tf32] = {*t / 2, "theoretical: tensor_16bit_tflops / 2 (TF32) at the max SM clock"};
    }
    std::optional<rate_with_source> fastest;
    for (const auto& [u, rate] : r.compute_tflops) {
        if (rate.value > 0 && (!fastest || rate.value > fastest->value)) fastest = rate;
    }
    if (fastest) r.compute_tflops[compute_unit::any] = *fastest;
    return r;
}

physical_floor compute_physical_floor(const traffic_model& m, double input_bytes, double output_bytes,
                                      const guard_rates& r) {
    physical_floor f;
    f.unit = m.unit;
    f.flops = m.flops;
    f.read_bytes = std::max(0.0, std::min(m.bytes_read, input_bytes));
    f.write_bytes = std::max(0.0, std::min(m.bytes_written, output_bytes));
    f.l2_write_allowance = std::min(f.write_bytes, static_cast<double>(r.l2_bytes));
    if (r.read_gbps && r.read_gbps->value > 0) {
        f.read_rate = r.read_gbps;
        f.read_term_us = f.read_bytes / (r.read_gbps->value * 1e9) * 1e6;
    }
    if (r.write_gbps && r.write_gbps->value > 0) {
        f.write_rate = r.write_gbps;
        f.write_term_us = (f.write_bytes - f.l2_write_allowance) / (r.write_gbps->value * 1e9) * 1e6;
    }
    // The memory floor needs a rate for every term that has bytes.
    const bool reads_ok = f.read_bytes == 0 || f.read_term_us.has_value();
    const bool writes_ok = f.write_bytes - f.l2_write_allowance <= 0 || f.write_term_us.has_value();
    if (reads_ok && writes_ok && (f.read_bytes > 0 || f.write_bytes > 0)) {
        f.memory_us = f.read_term_us.value_or(0) + f.write_term_us.value_or(0);
    }
    if (m.flops > 0) {
        const auto it = r.compute_tflops.find(m.unit);
        if (it != r.compute_tflops.end() && it->second.value > 0) {
            f.compute_rate = it->second;
            f.compute_us = m.flops / (it->second.value * 1e12) * 1e6;
        }
    }
    if (f.memory_us || f.compute_us) {
        const double mem = f.memory_us.value_or(0), comp = f.compute_us.value_or(0);
        f.floor_us = std::max(mem, comp);
        f.bound = comp > mem ? "compute" : "memory";
    } else {
        f.null_reason = (f.read_bytes > 0 || f.write_bytes > 0 || m.flops > 0)
                            ? "the ceilings this variant's model needs were not measured"
                            : "the variant's model declares no bytes and no flops";
    }
    return f;
}

std::optional<std::string> speed_of_light_violation(double median_us, const physical_floor& f, cache_mode mode) {
    if (mode != cache_mode::cold || median_us <= 0 || !f.floor_us || *f.floor_us <= 0) return std::nullopt;
    if (median_us >= speed_of_light_slack * *f.floor_us) return std::nullopt;
    std::string terms;
    if (f.bound == "memory") {
        terms = fmt("%.0f bytes read", f.read_bytes) + " at " +
                (f.read_rate ? fmt("%.0f GB/s", f.read_rate->value) : std::string("-")) + " + " +
                fmt("%.0f bytes written", f.write_bytes - f.l2_write_allowance) + " beyond one L2 at " +
                (f.write_rate ? fmt("%.0f GB/s", f.write_rate->value) : std::string("-"));
    } else {
        terms = fmt("%.3g flops", f.flops) + " at " +
                fmt("%.0f TFLOP/s", f.compute_rate->value) + " (" + f.compute_rate->source + ")";
    }
    return fmt("faster than physics: median %.2f us", median_us) + fmt(" is below %.0f%%", 100 * speed_of_light_slack) +
           fmt(" of the physical floor %.2f us", *f.floor_us) + " (" + f.bound + " bound: " + terms +
           "): work was skipped";
}

nlohmann::json to_json(const physical_floor& f, std::optional<double> median_us) {
    using nlohmann::json;
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    auto rate = [](const std::optional<rate_with_source>& r) {
        return r ? json{{"value", r->value}, {"source", r->source}} : json(nullptr);
    };
    json j;
    j["floor_us"] = opt(f.floor_us);
    j["bound"] = f.bound.empty() ? json(nullptr) : json(f.bound);
    j["slack"] = speed_of_light_slack;
    j["median_over_floor"] = (median_us && f.floor_us && *f.floor_us > 0) ? json(*median_us / *f.floor_us) : json(nullptr);
    j["read_bytes"] = f.read_bytes;
    j["write_bytes"] = f.write_bytes;
    j["l2_write_allowance_bytes"] = f.l2_write_allowance;
    j["read_term_us"] = opt(f.read_term_us);
    j["write_term_us"] = opt(f.write_term_us);
    j["memory_us"] = opt(f.memory_us);
    j["flops"] = f.flops;
    j["compute_unit"] = to_string(f.unit);
    j["compute_us"] = opt(f.compute_us);
    j["read_rate_gbps"] = rate(f.read_rate);
    j["write_rate_gbps"] = rate(f.write_rate);
    j["compute_rate_tflops"] = rate(f.compute_rate);
    if (!f.floor_us) j["null_reasons"]["floor_us"] = f.null_reason;
    if (!median_us) j["null_reasons"]["median_over_floor"] = "not timed";
    return j;
}

}  // namespace fusebench
