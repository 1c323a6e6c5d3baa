// Checks of how a variant's launch behaves beyond the values it writes: work it puts outside the
// order of the launch stream, and results that do not follow a change of the inputs. The runner
// gathers the data (CUPTI records, captures of a decoy launch); the decisions are pure host logic
// here, tested on the CPU.
#pragma once

#include "harness/cupti_tracer.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fusebench {

// Stream order. The runner holds the launch stream with a host function until the variant's launch
// call has returned (and 200 us more), then lets the harness's own memsets and the variant's work
// through. So the first activity on the launch stream starts after the launch call returned, and
// every activity the variant ordered after the launch stream (directly, or on a side stream that
// waits on an event recorded there) starts after it. An activity on another stream that started
// before it was ordered after nothing the caller enqueued: it ran on a side stream nobody joined.
// Returns the reason ("side stream: ...") or nullopt; nullopt too when no activity ran on the
// launch stream (nothing to compare with).
std::optional<std::string> unordered_side_stream_work(const std::vector<kernel_record>& records,
                                                      std::uint32_t launch_stream_id);

// Decoy inputs: the real inputs rotated by one element (element i takes element i + 1, the last
// takes the first), in the same buffers. Same values, other positions: in the variant's domain
// whatever the generator made, and different unless every element is equal.
// True when rotating `data` (elements of `element_bytes`) changes it.
bool rotation_changes(std::span<const std::byte> data, std::size_t element_bytes) noexcept;
// The rotated copy (host version of what the runner does on the device with two copies).
std::vector<std::byte> rotated_by_one(std::span<const std::byte> data, std::size_t element_bytes);

// Stale result. The runner launches each variant once on the decoy inputs before the two
// verification launches on the real ones, with the same buffers. A variant that returns, bit for
// bit, the decoy launch's outputs for different inputs cached or skipped its work. Only judged for
// a variant that already failed against the reference, so it never turns a pass into a failure
// (a correct variant may legitimately map two inputs to one output). Returns the reason or nullopt.
std::optional<std::string> stale_result(std::span<const std::span<const std::byte>> decoy_outputs,
                                        std::span<const std::span<const std::byte>> run1_outputs,
                                        bool inputs_differed, bool already_failing);

// What the run can check, for the mutants whose catching check is not always on.
struct active_checks {
    bool timed_cold = false;        // timing runs in cold mode for this case (not --verify-only, case timed)
    bool bandwidth_measured = false;  // the copy or read ceiling was measured
    double model_bytes = 0;         // the variant's traffic model on this case [bytes]
    std::size_t l2_bytes = 0;       // [bytes]
    bool stream_order = false;      // CUPTI records and the launch stream's id are available
};

// For a mutant (must_be_caught_by = `keyword`): why its catching check cannot fire in this run,
// or nullopt when it can. "faster than physics" needs cold timing, a measured bandwidth and a
// model above 4x the L2; "side stream" needs CUPTI activity records. Other checks always run.
std::optional<std::string> catching_check_off(const std::string& keyword, const active_checks& k);

}  // namespace fusebench
