#include "harness/device_info.hpp"

#include "harness/cuda_check.hpp"

#include <cctype>
#include <cstdio>

namespace fusebench {

namespace {
std::optional<int> attribute(cudaDeviceAttr attr, int dev) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return std::nullopt;
    }
    return v;
}
}  // namespace

std::string device_info::short_label() const {
    // "NVIDIA H100 80GB HBM3" -> "h100"; "NVIDIA H200" -> "h200"; otherwise the sanitized name.
    std::string lower;
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* known : {"h100", "h200", "h800", "h20", "gh200", "a100", "b200", "l40s", "l4"}) {
        const std::string k = known;
        const auto pos = lower.find(k);
        if (pos != std::string::npos) return k;
    }
    std::string out;
    for (char c : lower) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out.empty() ? "unknown_gpu" : out;
}

device_info query_device(int ordinal) {
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
    device_info d;
    d.ordinal = ordinal;
    d.name = p.name;
    char uuid[64];
    const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
    std::snprintf(uuid, sizeof uuid,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                  u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    d.uuid = uuid;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.memory_bytes = p.totalGlobalMem;
    d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    d.persisting_l2_max_bytes = static_cast<std::size_t>(p.persistingL2CacheMaxSize);
    if (auto v = attribute(cudaDevAttrClockRate, ordinal)) d.sm_clock_max_mhz = *v / 1000.0;  // [kHz]
    if (auto v = attribute(cudaDevAttrMemoryClockRate, ordinal)) d.memory_clock_max_mhz = *v / 1000.0;
    d.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
    if (auto v = attribute(cudaDevAttrEccEnabled, ordinal)) d.ecc_enabled = *v != 0;
    CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
    return d;
}

nlohmann::json to_json(const device_info& d) {
    nlohmann::json j;
    j["ordinal"] = d.ordinal;
    j["name"] = d.name;
    j["label"] = d.short_label();
    j["uuid"] = d.uuid;
    j["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
    j["sm_count"] = d.sm_count;
    j["memory_bytes"] = d.memory_bytes;
    j["l2_bytes"] = d.l2_bytes;
    j["persisting_l2_max_bytes"] = d.persisting_l2_max_bytes;
    nlohmann::json reasons = nlohmann::json::object();
    auto opt = [&](const char* key, const auto& v) {
        if (v) j[key] = *v;
        else {
            j[key] = nullptr;
            reasons[key] = "device attribute query failed";
        }
    };
    opt("sm_clock_max_mhz", d.sm_clock_max_mhz);
    opt("memory_clock_max_mhz", d.memory_clock_max_mhz);
    opt("memory_bus_width_bits", d.memory_bus_width_bits);
    opt("ecc_enabled", d.ecc_enabled);
    if (!reasons.empty()) j["null_reasons"] = reasons;
    j["driver_version"] = d.driver_version;
    j["runtime_version"] = d.runtime_version;
    return j;
}

}  // namespace fusebench
