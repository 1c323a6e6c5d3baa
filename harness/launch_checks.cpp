#include "harness/launch_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace fusebench {

std::optional<std::string> unordered_side_stream_work(const std::vector<kernel_record>& records,
                                                      std::uint32_t launch_stream_id) {
    std::optional<std::uint64_t> released;  // start of the first activity on the launch stream [ns]
    for (const auto& r : records) {
        if (r.stream_id == launch_stream_id && r.start_ns != 0) released = std::min(released.value_or(r.start_ns), r.start_ns);
    }
    if (!released) return std::nullopt;
    const kernel_record* first = nullptr;
    std::size_t count = 0;
    for (const auto& r : records) {
        if (r.stream_id == launch_stream_id || r.start_ns == 0 || r.start_ns >= *released) continue;
        ++count;
        if (!first || r.start_ns < first->start_ns) first = &r;
    }
    if (!first) return std::nullopt;
    std::string name = first->name;
    if (name.size() > 120) name = name.substr(0, 117) + "...";
    char buf[160];
    std::snprintf(buf, sizeof buf, " ran on stream %u and started %.1f us before the launch stream (%u) reached the launch",
                  first->stream_id, static_cast<double>(*released - first->start_ns) * 1e-3, launch_stream_id);
    return "side stream: " + std::to_string(count) + " activit" + (count == 1 ? "y" : "ies") + " unordered with the launch stream; first: " +
           first->kind + " '" + name + "'" + buf +
           " (work on another stream must wait on an event recorded on the launch stream, and the launch stream on its end)";
}

bool rotation_changes(std::span<const std::byte> data, std::size_t element_bytes) noexcept {
    if (element_bytes == 0 || data.size() <= element_bytes) return false;
    // Rotating changes nothing exactly when every element equals its successor.
    return std::memcmp(data.data(), data.data() + element_bytes, data.size() - element_bytes) != 0;
}

std::vector<std::byte> rotated_by_one(std::span<const std::byte> data, std::size_t element_bytes) {
    std::vector<std::byte> out(data.size());
    if (data.size() < element_bytes || element_bytes == 0) {
        std::copy(data.begin(), data.end(), out.begin());
        return out;
    }
    std::copy(data.begin() + static_cast<std::ptrdiff_t>(element_bytes), data.end(), out.begin());
    std::copy(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(element_bytes),
              out.end() - static_cast<std::ptrdiff_t>(element_bytes));
    return out;
}

std::optional<std::string> stale_result(std::span<const std::span<const std::byte>> decoy_outputs,
                                        std::span<const std::span<const std::byte>> run1_outputs,
                                        bool inputs_differed, bool already_failing) {
    if (!inputs_differed || !already_failing || decoy_outputs.empty() || decoy_outputs.size() != run1_outputs.size()) {
        return std::nullopt;
    }
    for (std::size_t o = 0; o < decoy_outputs.size(); ++o) {
        const auto a = decoy_outputs[o], b = run1_outputs[o];
        if (a.size() != b.size() || !std::equal(a.begin(), a.end(), b.begin())) return std::nullopt;
    }
    return std::string(
        "stale result: the outputs equal, bit for bit, those of the previous launch on other inputs in the same buffers "
        "(a result cached or work skipped across launches)");
}

std::optional<std::string> catching_check_off(const std::string& keyword, const active_checks& k) {
    if (keyword.find("faster than physics") != std::string::npos) {
        if (!k.timed_cold) return std::string("the speed-of-light guard needs cold-L2 timing of this case (not --verify-only, --mode hot, --profile-once, or an untimed case)");
        if (!k.bandwidth_measured) return std::string("the speed-of-light guard needs the measured bandwidth ceilings (not --no-ceilings)");
        if (k.model_bytes <= 4.0 * static_cast<double>(k.l2_bytes)) {
            return "the speed-of-light guard applies above 4x the L2 (" + std::to_string(4 * k.l2_bytes) +
                   " bytes); the model moves " + std::to_string(static_cast<long long>(k.model_bytes));
        }
    }
    if (keyword.find("side stream") != std::string::npos && !k.stream_order) {
        return std::string("the stream-order check needs CUPTI activity records (not --no-cupti-timing, no other CUPTI client)");
    }
    return std::nullopt;
}

}  // namespace fusebench
