// What the report says about the GPU and software it ran on.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace fusebench {

struct device_info {
    int ordinal = 0;
    std::string name;
    std::string uuid;  // "GPU-xxxxxxxx-..."
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::size_t memory_bytes = 0;
    std::size_t l2_bytes = 0;
    std::size_t persisting_l2_max_bytes = 0;
    std::optional<double> sm_clock_max_mhz;      // attribute peak clock
    std::optional<double> memory_clock_max_mhz;  // attribute peak memory clock
    std::optional<int> memory_bus_width_bits;
    std::optional<bool> ecc_enabled;
    int driver_version = 0;   // e.g. 13000
    int runtime_version = 0;  // e.g. 13000

    int compute_capability() const noexcept { return cc_major * 10 + cc_minor; }
    // A short file-name friendly label, e.g. "h100" or "h200", used for reports/baselines/<gpu>.json.
    std::string short_label() const;
};

// Queries device `ordinal`; throws cuda_error when there is no such device.
device_info query_device(int ordinal);

nlohmann::json to_json(const device_info& d);

}  // namespace fusebench
