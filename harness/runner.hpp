// The correctness engine and the timing orchestration over a selection of (suite, case, variants).
#pragma once

#include "harness/device_info.hpp"
#include "harness/registry.hpp"
#include "harness/result.hpp"
#include "harness/speed_of_light.hpp"
#include "harness/timing.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusebench {

// A bad name or value from the user: the CLI prints it on one line and exits 2.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct selection_filter {
    std::vector<std::string> suites;    // exact names; empty = the default suites
    std::vector<std::string> variants;  // exact names; empty = all
    std::vector<std::string> configs;   // tuning configurations (variants without any are kept); empty = all
    std::vector<std::string> cases;     // substrings of case names; empty = all
    std::vector<dtype> dtypes;          // empty = all
    bool quick = false;                 // only cases marked quick
    // Every case and variant, the ones marked full_only included (--full). Without it those are
    // left out unless --case / --variant names them.
    bool full = false;
    // User shapes, "SUITE: name=value,..." (SUITE may be left out when one suite is selected):
    // when any is given, the selection is these shapes only (--case and --quick do not apply),
    // each in --dtype's dtypes or the suite's default ones. See harness/shapes.hpp.
    std::vector<std::string> shapes;
    // Shard `shard_index` of `shard_count` (0-based): item k of the full selection belongs to
    // shard k % shard_count, so shards are disjoint, cover everything, and do not depend on timing.
    std::size_t shard_index = 0, shard_count = 1;
};

struct selection_item {
    const suite* s = nullptr;
    case_desc c;
    std::vector<const variant*> variants;
};

// Throws usage_error when a named suite or variant does not exist, or nothing is selected.
std::vector<selection_item> select_work(const registry& reg, const selection_filter& f);

struct run_options {
    std::uint64_t seed = 0;
    cache_mode mode = cache_mode::cold;
    sampling_policy policy;
    bool keep_raw_samples = false;
    bool verify_only = false;  // skip timing
    bool profile_once = false; // after verification, one launch under NVTX "profile/...", no timing
    std::optional<double> copy_gbps;    // measured copy ceiling [GB/s], for % of ceiling and % floor
    std::optional<double> peak_tflops;  // the largest measured compute ceiling [TFLOP/s]
    std::map<compute_unit, double> measured_tflops;  // per unit, for % of ceiling [TFLOP/s]
    guard_rates sol;                    // the speed-of-light guard's rates (harness/speed_of_light.hpp)
    bool counters = true;               // run the counter pass when a profiler is given
    // CUPTI timing from serialized, uninstrumented KERNEL records (default) or CONCURRENT_KERNEL.
    bool serial_kernel_records = true;
    // runner::prefetch prepares the next case's inputs and reference in the background.
    bool prefetch = true;
};

class activity_tracer;
class counter_profiler;

// What the runner may use for timing and counting; each may be null (events fallback, counters
// null with `counters_reason`).
struct measurement_tools {
    activity_tracer* tracer = nullptr;
    std::string tracer_reason;          // why tracer is null
    counter_profiler* counters = nullptr;
    counter_result counters_failure;    // why counters is null (status, reason, null values)
    std::optional<double> max_clock_mhz;
};

// Traffic reconciliation: measured DRAM bytes over model bytes; > 1.15 is excess traffic
// (re-reads, uncoalesced access), < 0.9 means cache residency or skipped work.
std::string classify_traffic(double ratio);

// Fills copy_gbps, peak_tflops, measured_tflops and sol from a run's `ceilings` JSON.
void apply_ceilings(run_options& o, const nlohmann::json& ceilings, std::size_t l2_bytes);

// The suite's baseline-relative tolerances applied to a non-baseline variant's checks, as a run
// applies them: each output named in `relative` against the baseline's check of the same output
// (baseline: the baseline variant's checks; nullptr: none, which fails), with rms(reference) and
// the output dtype's rounding term (relative_rounding_term); records baseline_label as the judge.
void apply_relative_tolerances(std::vector<output_check>& checks, const std::vector<output_check>* baseline,
                               const std::map<std::string, baseline_relative_tolerance>& relative,
                               const std::vector<tensor_spec>& out_specs, const std::vector<std::vector<double>>& reference,
                               const std::string& baseline_label);

// Per-case seed: replayable from the run seed, independent across cases.
std::uint64_t case_seed(std::uint64_t run_seed, const std::string& suite, const case_desc& c);

struct progress_event {
    std::size_t index = 0, total = 0;  // case i of N (1-based)
    const selection_item* item = nullptr;
    double elapsed_s = 0;
};

class runner {
public:
    runner(const device_info& dev, run_options opts, measurement_tools tools = {});
    ~runner();
    runner(const runner&) = delete;
    runner& operator=(const runner&) = delete;

    // Verifies and times every variant of one selection item; results in variant order. Never
    // throws for a variant's failure; throws only for harness faults (out of host memory, ...).
    std::vector<variant_result> run_item(const selection_item& item);
    // Starts preparing `next`'s inputs and fp64 reference on a background thread (fewer threads,
    // lowest priority) while the caller runs the current item; run_item(next) takes them. One
    // item ahead at most; a no-op with run_options::prefetch off or when nothing of `next` runs.
    void prefetch(const selection_item& next);
    // Asks every variant of `items` (in order) whether it runs its case, on one background thread
    // at the lowest priority, so that what those checks build and cache (a cuDNN plan per shape,
    // 0.3-1.5 s each) is ready when the items run. Each check waits while the foreground times a
    // kernel or reads counters (nothing it builds or probes overlaps a measurement). A no-op with
    // run_options::prefetch off. Stops early when the runner is destroyed.
    void warm_domain_checks(std::vector<selection_item> items);

    // True once a variant has corrupted the CUDA context: nothing more can run in this process.
    bool context_lost() const noexcept { return m_context_lost; }
    const std::string& context_lost_reason() const noexcept { return m_context_lost_reason; }

private:
    struct impl;
    const device_info& m_dev;
    run_options m_opts;
    measurement_tools m_tools;
    bool m_context_lost = false;
    std::string m_context_lost_reason;
    std::unique_ptr<impl> m_impl;
};

}  // namespace fusebench
