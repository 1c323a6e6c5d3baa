// One result per (suite, case, variant): an outcome value, never an exit().
#pragma once

#include "harness/check.hpp"
#include "harness/cupti_counters.hpp"
#include "harness/registry.hpp"
#include "harness/speed_of_light.hpp"
#include "harness/timing.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusebench {

enum class outcome { pass, fail, error, skipped };
const char* to_string(outcome o) noexcept;
const char* to_string(variant_role r) noexcept;

struct correctness_block {
    std::vector<output_check> outputs;      // verdict per output (first run; second run if it differs)
    std::optional<bool> deterministic;      // two runs on the same inputs bitwise equal
    std::size_t unwritten_elements = 0;     // held the poison pattern in both runs
    std::vector<std::string> guard_violations;   // "y: 3 bytes changed before the buffer", ...
    std::vector<std::string> modified_inputs;    // inputs whose hash changed
    // The baseline's error on the same case (for a fused variant): the natural error budget.
    std::vector<output_check> baseline_outputs;
};

struct variant_result {
    std::string suite;
    case_desc c;
    std::string variant;
    std::string config;  // the variant's tuning configuration (empty: none)
    variant_role role = variant_role::fused;
    std::string description;
    std::string must_be_caught_by;  // copied from the variant (mutants only)
    outcome result = outcome::skipped;
    std::string reason;  // why fail / error / skipped; empty on pass
    std::optional<correctness_block> correctness;
    std::optional<timed_run> timing;
    std::string timing_null_reason;  // why timing is null
    traffic_model model;
    std::optional<double> achieved_gbps, achieved_tflops, speedup_vs_baseline;
    // achieved GB/s of the variant's own traffic model over the measured copy bandwidth [%]
    std::optional<double> pct_of_copy_ceiling;
    // the operation's floor (least traffic of any variant of the case / copy bandwidth) over the
    // measured time [%]: the "% of speed of light" of the operation, comparable across variants
    std::optional<double> pct_of_floor;
    // The same with the timer's reading of an empty kernel added to the floor's time:
    // 100 (floor_us + empty_kernel_us) / median_us, what a kernel that moved the compulsory bytes
    // at the copy bandwidth would read by this timer (a figure beside pct_of_floor, never a verdict)
    std::optional<double> pct_of_floor_with_launch;
    std::optional<double> arithmetic_intensity;  // model flops / model bytes [flop/byte]
    std::string bound;                           // "memory" | "compute": which ceiling the intensity meets first
    std::optional<double> pct_of_ceiling;        // achieved rate over the matching measured ceiling [%]
    // The speed-of-light guard's floor, term by term (timed results only).
    std::optional<physical_floor> sol_floor;
    std::map<std::string, std::string> null_reasons;  // for the derived fields above

    // Counter pass (its own launches, after verification and timing).
    std::optional<counter_result> counters;
    std::optional<double> measured_dram_bytes;   // dram__bytes_read.sum + dram__bytes_write.sum [bytes]
    std::optional<double> traffic_ratio;         // measured DRAM bytes / model bytes
    std::string traffic_flag;                    // "excess_traffic" (> 1.15), "below_model" (< 0.9), "ok"
    std::optional<double> bytes_saved_vs_baseline;  // baseline's measured DRAM bytes - this variant's
    double verify_seconds = 0;
    // Host wall time per phase [s]. The case's own, on the first variant run on it:
    // generate_inputs and reference (where they ran: in the background while the previous case
    // ran, when prefetched), prepare_wait (the foreground's wait for them, or their whole time when
    // not prefetched) and upload. Each variant's: decoy_and_stream_order, verify (poisoning, the
    // two checked launches, downloads, guard/determinism/input checks), compare (the foreground's
    // share of the comparison with the reference: its wait for the worker thread that compares
    // while timing and counters run; the whole comparison when they do not), compare_background
    // (the comparison's own time), timing, e2e, counters, timing_dropped (a speculative timing and
    // counter pass discarded because the comparison failed). unattributed (on a case's first result): the case's wall
    // time in the run loop less its foreground phases. domain_checks (the case's): asking each
    // variant whether it runs the case (a library may build its plan there; with prefetching a
    // background thread has asked them ahead, runner::warm_domain_checks, so these answers come
    // from the caches). The foreground's time is the sum of all but the background phases
    // (is_background_phase).
    std::map<std::string, double> phase_seconds;
};

// Phases measured where they ran in the background, overlapping the foreground's phases:
// generate_inputs and reference (when the case was prefetched), and
// compare_background (the comparison with the reference on its worker thread, while the kernel
// timing and counter pass ran).
inline bool is_background_phase(std::string_view phase) {
    return phase == "generate_inputs" || phase == "reference" || phase == "compare_background";
}

}  // namespace fusebench
