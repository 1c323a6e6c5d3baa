// The speed-of-light guard: a cold-L2 time below what the hardware can physically do means the
// variant skipped work (a result cached across launches, a persistent kernel that returns at
// once), and fails the result as "faster than physics".
//
// The guard's floor is built term by term from ceilings measured on the board of the run:
//   read term    = compulsory bytes read / measured read-stream rate. Cold L2: the inputs come
//                  from DRAM. Only reads up to the size of the inputs count; re-reads of inputs
//                  or of the variant's own intermediates may hit L2.
//   write term   = (compulsory bytes written - the L2 size) / measured write-stream rate. A
//                  kernel can end while up to one L2 of its writes is still dirty in L2, to be
//                  written back after it ends; writes beyond the outputs' size (intermediates)
//                  do not count.
//   memory floor = read term + write term: reads and writes share the DRAM data bus (HBM is
//                  half-duplex per channel), so their times add.
//   compute term = model flops / the peak of the unit that runs them: the dense tensor-core or
//                  FP32 peak at the maximum SM clock where the device tables know it (a physical
//                  limit), else the measured ceiling of that unit.
//   floor        = max(memory floor, compute term); the guard fails a cold result whose median is
//                  below slack x floor.
// This floor is the guard's, not the user-facing "% floor" of the report (compulsory bytes / copy
// bandwidth), which a kernel that reads more than it writes can exceed.
#pragma once

#include "harness/registry.hpp"
#include "harness/timing.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace fusebench {

// The guard fails a result below this fraction of its floor. Measured on the committed baselines
// (every default suite, cold L2): the fastest correct result against its floor was at
// floor / median = 0.955 on an H100 (reports/baselines/h100.json, commit 1307bc1) and 0.933 on an
// H200 (h200.json, commit 2bacc60), both softmax_topk 4096x151936 K=1 fp32 fused_stream, a
// read-bound kernel; the GLU fused_vec kernel the old copy-bandwidth guard failed sits at 0.84 of
// its floor on the H100. No kernel can beat a term by more than the error of the rate measured
// for it (the read and write streams repeat within 0.2% run to run on one board) plus what the
// term leaves out (reads served by L2 of data a previous kernel left there, which cold L2
// excludes). With 0.90 the closest correct result would have to run 14% faster (H100; 16% on the
// H200) before it is flagged, while a result that skipped more than a tenth of its traffic, and
// every skipped-work mutant (typically < 0.2 of the floor), still fails.
constexpr double speed_of_light_slack = 0.90;

struct rate_with_source {
    double value = 0;    // [GB/s] or [TFLOP/s]
    std::string source;  // "measured: <ceiling>" or "theoretical: <how>"
};

// What the guard's floor is built from: the run's measured ceilings and the device's L2.
struct guard_rates {
    std::optional<rate_with_source> read_gbps, write_gbps;
    std::size_t l2_bytes = 0;
    std::map<compute_unit, rate_with_source> compute_tflops;  // per unit; `any` = the fastest
};

// Reads the rates from a run's `ceilings` JSON (harness/ceilings.hpp's to_json); values that were
// not measured are left out. Peaks at the max SM clock are preferred for compute.
guard_rates guard_rates_from_ceilings(const nlohmann::json& ceilings, std::size_t l2_bytes);

struct physical_floor {
    double read_bytes = 0;            // counted reads: min(model reads, input bytes) [bytes]
    double write_bytes = 0;           // counted writes: min(model writes, output bytes) [bytes]
    double l2_write_allowance = 0;    // writes that may still sit dirty in L2 at the end [bytes]
    double flops = 0;                 // the model's [flop]
    std::optional<double> read_term_us, write_term_us, memory_us, compute_us, floor_us;
    std::optional<rate_with_source> read_rate, write_rate, compute_rate;
    compute_unit unit = compute_unit::any;
    std::string bound;                // "memory" | "compute" | "" (no floor)
    std::string null_reason;          // why floor_us is null
};

// input_bytes / output_bytes: the sizes of the case's input and output tensors.
physical_floor compute_physical_floor(const traffic_model& m, double input_bytes, double output_bytes,
                                      const guard_rates& r);

// The reason a cold result is impossible, or nullopt. Hot timing may run from L2: never judged.
std::optional<std::string> speed_of_light_violation(double median_us, const physical_floor& f, cache_mode mode);

nlohmann::json to_json(const physical_floor& f, std::optional<double> median_us);

}  // namespace fusebench
