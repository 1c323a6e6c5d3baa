// Comparison of outputs against the fp64 reference: combined tolerance, NaN/Inf rules, ULP
// statistics. Pure host code, tested on the CPU.
#pragma once

#include "harness/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fusebench {

// |got - ref| <= rtol * |ref| + atol_scale * rms(ref) + dtype_min_subnormal(type) * subnormal_ulps.
// The absolute part scales with the output's magnitude (its RMS over finite reference values),
// so a kernel that returns zeros where outputs are tiny fails; the subnormal term is the grain of
// the format near zero, which no kernel can beat.
struct tolerance {
    double rtol = 0;
    double atol_scale = 0;
    double subnormal_ulps = 1;
};

struct mismatch {
    std::size_t index = 0;
    double got = 0;
    double expected = 0;
    std::string why;  // "tolerance", "nan/inf position", "unwritten (poison)", ...
};

// Error statistics of one output tensor. Fields that cannot be computed (no finite pairs) are
// nullopt and appear as null in the report.
struct error_stats {
    std::size_t checked = 0;
    std::size_t mismatches = 0;
    std::optional<double> max_abs, max_rel, rel_l2;  // rel_l2 = ||out-ref|| / ||ref|| (finite)
    std::optional<std::uint64_t> ulp_p50, ulp_p99, ulp_max;  // vs ref rounded to the output dtype
    std::vector<mismatch> first;  // the first few mismatches
};

// What a baseline-relative tolerance (harness/registry.hpp) found for one output.
struct relative_check {
    double multiple = 0;        // the suite's stated multiple
    double abs_term = 0;        // atol_scale * the output's magnitude (output_check::relative_magnitude), for max_abs
    double rel_l2_term = 0;     // atol_scale * magnitude / rms(reference) (atol_scale by default), for rel_l2
    double rounding_term = 0;   // 2u max|reference|, u the output dtype's unit roundoff, for max_abs
    std::optional<double> baseline_max_abs, baseline_rel_l2;
    std::optional<double> allowed_max_abs, allowed_rel_l2;
    // This output's error over the baseline's (null when the baseline's error is 0 or unknown).
    std::optional<double> ratio_max_abs, ratio_rel_l2;
    bool pass = true;
    std::string reason;  // why it failed, or why it could not be made
    std::string baseline;  // the variant whose error set the budget (empty: not recorded)
};

// Which part of an output was compared: absent when every element was. A suite that verifies a
// sample (the largest attention cases) says which units, how many of how many, and by what rule.
struct check_coverage {
    std::string unit;   // e.g. "(batch, head, row)"
    std::size_t checked = 0, total = 0;
    std::string rule;   // how the sample was drawn
    std::vector<std::vector<std::int64_t>> which;  // the sampled units
};

// A figure a suite reports beside a verdict, never part of it: for example the FP8 suites'
// quantization error, the output against fp64 of the unquantized inputs.
struct output_figure {
    double value = 0;
    std::string meaning;
};

struct output_check {
    std::string output;  // tensor name
    bool pass = true;
    std::string reason;  // empty when pass
    error_stats stats;
    std::optional<relative_check> relative;  // when the suite declares a baseline-relative tolerance
    std::optional<check_coverage> coverage;  // when only part of the output was compared
    std::map<std::string, output_figure> figures;
    // The magnitude the baseline-relative check's absolute term is a fraction of (abs_term =
    // atol_scale * this); nullopt: rms(reference), the default. A check sets it where the output's
    // own RMS is not the scale its rounding errors grow with: attention's lse of a few short rows
    // can sit near 0 by cancellation while its fp32 scores still round at their own magnitude.
    std::optional<double> relative_magnitude;
};

// How closely `got` follows `want` over the pairs where both are finite, as figures named
// prefix + "rel_l2" (||got - want|| / ||want||), "max_abs", "cosine" (got . want / (|got| |want|))
// and "correlation" (Pearson); NaN where undefined (no pairs, a zero norm or variance).
std::map<std::string, output_figure> agreement_figures(std::span<const double> got, std::span<const double> want,
                                                       const std::string& prefix, const std::string& what);

// Applies a baseline-relative tolerance to `c` given the baseline's check of the same output
// (nullptr: no baseline check, which fails) and rms(reference); sets c.relative and, on failure,
// c.pass = false and a reason starting "out of tolerance". With m = c.relative_magnitude when the
// check set one, else rms(reference): abs_term = atol_scale * m and rel_l2_term = atol_scale * m /
// rms(reference) (atol_scale itself in the default), both the same allowance of atol_scale * m on
// the error's max and RMS. rounding_term (2u max|reference| from the runner) is added to the max abs
// allowance: the output's own grid at its largest values, on either neighbour of which a correct
// variant may land (a max taken over a few elements of the top binade is otherwise luck).
void apply_relative_tolerance(output_check& c, const output_check* baseline, double multiple, double atol_scale,
                              double reference_rms, double rounding_term = 0);

// The rounding term of the baseline-relative max abs check: 2 * dtype_unit_roundoff(type) times the
// largest finite |ref| (one ulp at the output's largest magnitude; 0 for int32).
double relative_rounding_term(dtype type, std::span<const double> ref);

constexpr std::size_t max_reported_mismatches = 8;

// Element-wise comparison of `got` (n elements of `type`, raw bytes) against `ref`.
output_check compare_elementwise(const std::string& name, dtype type, const void* got,
                                 std::span<const double> ref, const tolerance& tol);

// The same comparison with an absolute term of its own for every element, for a suite whose bound
// comes from the arithmetic of each element (conv1d's fp32 outputs: gamma_n times the element's
// sum of absolute terms):
//   |got - ref| <= rtol * |ref| + abs_bound[i] + dtype_min_subnormal(type) * subnormal_ulps.
// abs_bound has one entry per element of ref (std::invalid_argument otherwise); the NaN/Inf rules,
// the statistics and the reason's wording are compare_elementwise's.
output_check compare_elementwise_bounded(const std::string& name, dtype type, const void* got, std::span<const double> ref,
                                         double rtol, std::span<const double> abs_bound, double subnormal_ulps = 1);

// The same with element i's absolute term from abs_bound(i), for outputs where a vector of bounds
// would cost as much memory as the reference (glu's up to 10^8 elements). abs_bound is called from
// several threads. Both forms name the largest term they applied in a failure's reason.
output_check compare_elementwise_bounded(const std::string& name, dtype type, const void* got, std::span<const double> ref,
                                         double rtol, const std::function<double(std::size_t)>& abs_bound,
                                         double subnormal_ulps = 1);

// Root mean square over the finite values of ref (0 when none).
double finite_rms(std::span<const double> ref);

// Appends a mismatch to stats.first if there is room.
void note_mismatch(error_stats& stats, std::size_t index, double got, double expected,
                   std::string why);

}  // namespace fusebench
