// The regression gate behind `fusebench compare BASE.json NEW.json`.
//
// Results are matched by (suite, case, dtype, variant), and also by device name when either report
// was merged from several GPUs. Each pair gets one verdict:
//
//   CORRECTNESS REGRESSION  pass in BASE, fail or error in NEW (fails the gate)
//   SLOWER                  see the rule below (fails the gate)
//   E2E SLOWER              the kernel time is not SLOWER, but the host's end-to-end time
//                           (timing.e2e: launcher call to stream completion) grew by the rule below
//                           with the policy's e2e_threshold, and by more than e2e_min_delta_us
//                           beyond the kernel time's own change (fails the gate; one GPU model only).
//                           When either side's e2e samples are spread wider than e2e_max_spread
//                           (IQR over median), the growth is not judged: INCONCLUSIVE with the reason
//   FASTER, SAME, INCONCLUSIVE
//   MISSING                 in BASE only; NEW only in NEW
//   FIXED, STILL FAILING    fail/error in BASE, pass / fail again in NEW
//   SKIPPED                 skipped (outside the variant's declared domain) on either side
//   NOT TIMED               passed on both sides, not timed on at least one (edge cases)
//   LOWER / HIGHER EFFICIENCY  different GPU models: efficiency differs (never fails the gate)
// For verifier self-test variants ("mutant" in the report) "caught" plays the part of "pass".
//
// The performance rule. r is the ratio NEW/BASE of the medians (same device) or of the
// efficiencies BASE/NEW (derived.pct_of_ceiling: different devices), [lo, hi] its noise interval
// and t the policy threshold of the result:
//   SLOWER        r > 1+t  and lo > 1            grew by more than t, and beyond the noise
//   FASTER        r < 1/(1+t) and hi < 1
//   SAME          1/(1+t) <= lo and hi <= 1+t    everything the noise allows is within t
//   INCONCLUSIVE  otherwise: the interval reaches past the threshold but does not settle it
//                 (the note says how many times more samples would)
// The interval, in order of preference:
//   bootstrap  both results kept raw samples (run --raw-samples, at least 5 each): a percentile
//              bootstrap confidence interval of each median (policy: resamples, confidence; the
//              resampling RNG is seeded from the policy seed and the result key, so a verdict is
//              reproducible), and lo = NEW_lo / BASE_hi, hi = NEW_hi / BASE_lo: lo > 1 is exactly
//              "the two intervals do not overlap".
//   noise      otherwise, from the reported relative standard errors of the medians (timing.noise):
//              lo, hi = r * exp(-/+ z * sqrt(noise_base^2 + noise_new^2)), z from the policy (3).
// On the efficiency basis the noise of both devices' ceilings (ceilings.<key>.noise) is added in
// quadrature to the interval's log half-widths.
//
// Launch gate: see report_identity::launch_gate.
//
// Devices: same UUID -> medians compared directly. Same model name on another board -> efficiency
// (each run's time over its own measured ceiling), so board-to-board bandwidth differences are
// not called regressions while a kernel that loses 10% of its efficiency still is; without
// ceilings it falls back to the medians. Different models -> efficiency side by side with both
// absolute times; a hardware difference alone is never a regression (LOWER/HIGHER EFFICIENCY),
// while a correctness regression still fails: correctness does not depend on the GPU.
#pragma once

#include "reports/report_file.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fusebench::reports {

struct policy {
    std::string source = "built-in defaults";
    double threshold = 0.05;                   // relative growth of the median that counts [fraction]
    std::map<std::string, double> overrides;  // "suite" or "suite/variant" -> threshold
    double noise_z = 3.0;                      // half-width of the noise interval in standard errors
    int bootstrap_resamples = 4000;
    double bootstrap_confidence = 0.997;       // two-sided, per median
    std::uint64_t bootstrap_seed = 20261121;
    bool fail_on_missing = false;              // MISSING fails the gate too
    // Across two boards of the same GPU model, results below this % of their measured ceiling on
    // both runs are not gated: their time is set by launch and ramp latency and clocks, which
    // differ between boards and which no measured ceiling normalizes (INCONCLUSIVE with the reason).
    double cross_board_min_pct_of_ceiling = 50;
    // Across two boards of the same GPU model, whether the reference rows (role baseline or peer:
    // the naive pipelines and the vendor libraries, not the code under test) are gated. Off by
    // default: their library kernels' speed differs by board (the unchanged naive decode's cuBLAS
    // P V kernel took 94.2 us on one H100 and 108.9 on another, README "Three uses"); such a change
    // is INCONCLUSIVE with the reason. On the same board they are gated as every result.
    bool cross_board_gate_reference_rows = false;
    // The end-to-end check (E2E SLOWER): the host time from the launcher call to stream completion
    // must not grow by more than this fraction beyond its noise interval, nor by more than
    // e2e_min_delta_us beyond what the kernel time grew (an unchanged naive row that read 74 -> 139 us
    // of kernel time on another board, e2e 82 -> 149, is the kernel rule's to judge, H200 ec2ed78). The kernel-time rule cannot see host work in the launcher (it times the
    // kernels behind a launch gate): an H200 baseline (c94de34) added ~600 us of a driver query to
    // every fused_stream K <= 32 launch (e2e 160 -> 778 us) while its kernel time stayed SAME.
    // Across two hosts the e2e of unchanged code moved by up to 31% (+3.6 us) on tiny kernels and
    // +29.6 us (+17%) on a three-kernel pipeline (H200 baselines 5b50ca4 and c94de34), and by at most
    // 9.9% (+322 us on a 3.2 ms attention kernel) between the H200 baselines 9939c58 and c94de34.
    double e2e_threshold = 0.25;
    double e2e_min_delta_us = 50;
    // The end-to-end check only judges host times that hold launch after launch: when either side's
    // e2e samples spread wider than this (IQR / median), a growth is INCONCLUSIVE, never E2E SLOWER.
    // The e2e median's noise interval assumes independent samples; host interference comes in
    // bursts. On H100 GPU-74021969 (29162c0, library and harness unchanged from the baseline but for a
    // refactor) two naive rows read e2e 85.9 -> 172.3 us (IQR 57.8 us, 34% of the median) and
    // 127.5 -> 434.5 us (IQR 220.7 us, 51%) against baselines' IQR of 1-5%, with kernel times SAME,
    // and failed the gate on no change of code; the launcher regression the check exists for
    // (c94de34: 160 -> 778 us) moved every launch (interval [4.74, 4.87]). Over 28 committed baselines
    // (5,516 e2e rows) 8 rows spread wider than 0.25; of 26 consecutive pairs only the first one
    // changes verdict by it, and c94de34's 5 E2E SLOWER stay.
    double e2e_max_spread = 0.25;

    // suite/variant override, then suite override, then the global threshold.
    double threshold_for(const std::string& suite, const std::string& variant) const;
};

// Parses a policy document; throws bad_input (naming `source`) on unknown keys or bad values.
policy parse_policy(const nlohmann::json& j, const std::string& source);
// Reads a policy file; throws bad_input when it cannot be read or parsed.
policy load_policy(const std::string& path);
// The project's default policy file (reports/policy.json in the source tree, compiled in as
// FUSEBENCH_POLICY_PATH; $FUSEBENCH_POLICY overrides). Empty when neither exists: built-in defaults.
std::string default_policy_path();

enum class verdict {
    correctness_regression,
    slower,
    e2e_slower,
    missing,
    inconclusive,
    still_failing,
    lower_efficiency,
    skipped,
    new_result,
    fixed,
    faster,
    higher_efficiency,
    same,
    not_timed,
};
inline constexpr int verdict_count = 14;

const char* to_string(verdict v) noexcept;  // "CORRECTNESS REGRESSION", "SLOWER", ...
bool fails_gate(verdict v, const policy& p) noexcept;

// ---- the performance rule on its own (unit-tested directly)

struct timing_side {
    double median_us = 0;
    double noise = 0;                 // relative standard error of the median
    std::vector<double> samples_us;   // raw samples, empty when the report has none
};

struct ratio_interval {
    double ratio = 1, lo = 1, hi = 1;
    std::string method;  // "bootstrap" | "noise"
};

// Interval of median_new / median_base; `key` seeds the bootstrap.
ratio_interval time_ratio(const timing_side& base, const timing_side& now, const policy& p, const std::string& key);

// Percentile-bootstrap confidence interval of the median of `samples` (resamples, confidence and
// seed as given); deterministic for equal inputs.
std::pair<double, double> bootstrap_median_ci(const std::vector<double>& samples, int resamples, double confidence,
                                              std::uint64_t seed);

// SLOWER / FASTER / SAME / INCONCLUSIVE from an interval and a threshold.
verdict classify(const ratio_interval& iv, double threshold);

// ---- whole reports

enum class device_relation { same_device, same_model, different_model };
const char* to_string(device_relation d) noexcept;

struct side_summary {
    bool present = false;
    std::string outcome;            // pass | fail | error | skipped (mutants: caught | missed)
    std::string reason;
    std::string device_label;
    std::string device_name;
    bool timed = false;
    double median_us = 0, noise = 0;
    std::size_t samples = 0;
    bool raw_samples = false;
    std::optional<double> pct_of_ceiling, gbps, speedup;
};

struct pair_result {
    std::string suite, case_name, dtype, variant;
    std::string device;                 // device name when the match is also keyed by device
    verdict v = verdict::same;
    device_relation relation = device_relation::same_device;
    std::string basis;                  // "time" | "efficiency" | "" (no performance comparison)
    std::optional<ratio_interval> interval;
    std::optional<ratio_interval> e2e_interval;  // NEW/BASE of the e2e medians, when both sides have one
    double threshold = 0;
    std::string note;
    side_summary base, now;

    std::string key() const;  // suite/case/dtype/variant[@device]
};

struct report_identity {
    std::string path, tool, status, started_at, mode;
    // settings.timing_launch_gate: cold samples' launch calls enqueued behind a stream gate (reports
    // since c9adc8d; c9adc8d's own reports say it in their results' timing.method_reason); false when
    // absent. Across reports that differ in it, a result whose launch runs more than one kernel (or
    // whose kernel count is unknown) is not gated: one side's span holds the host's launch gaps
    // between its kernels (INCONCLUSIVE with the reason).
    bool launch_gate = false;
    std::vector<std::string> devices;  // "NVIDIA H200 (h200, GPU-42f6..., driver API 13.0, runtime 13.0)"
    // Per device, its measured ceilings in one line (ceilings_summary): what efficiencies across
    // boards were judged against.
    std::vector<std::string> ceilings;
};

struct comparison {
    report_identity base, now;
    bool efficiency_compared = false;   // some pair was judged by efficiency (other boards or models)
    std::string relation;               // overall device relation, in words
    std::string policy_line;            // what the policy was and where it came from
    // The selection compare was given (empty: every result), and each report's result count before
    // and after it.
    result_selection selection;
    std::size_t base_selected = 0, base_total = 0, new_selected = 0, new_total = 0;
    std::vector<std::string> warnings;  // incomplete reports, differing modes, ignored duplicates
    std::vector<pair_result> pairs;     // BASE order, then results only in NEW
    std::map<verdict, int> counts;
    int regressions = 0;                // pairs that fail the gate
    int exit_code = 0;                  // 0 no regression, 1 regression
};

// Throws bad_input when the reports have no result in common.
comparison compare_reports(const loaded_report& base, const loaded_report& now, const policy& p);

}  // namespace fusebench::reports
