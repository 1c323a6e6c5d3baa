// Sample statistics and the stopping rule of the timing loop. Pure host code.
#pragma once

#include <cstddef>
#include <span>

namespace fusebench {

struct sample_stats {
    std::size_t n = 0;
    double median = 0, min = 0, max = 0, mean = 0, stdev = 0;
    double p10 = 0, p90 = 0, iqr = 0;  // iqr = p75 - p25
    double rel_stdev = 0;  // stdev / mean: the spread of single samples
    // Relative standard error of the median, 1.2533 * stdev / (median * sqrt(n)): how well the
    // median is known. It shrinks as samples accumulate; the loop stops once it is under target.
    double noise = 0;
};

// Linear-interpolated quantile (q in [0, 1]) of a sorted, non-empty range.
double quantile_sorted(std::span<const double> sorted, double q);

// Throws std::invalid_argument on an empty span.
sample_stats summarize(std::span<const double> samples);

struct sampling_policy {
    int warmup = 3;                // launches before the first sample
    std::size_t min_samples = 10;
    std::size_t max_samples = 10000;
    double noise_target = 0.005;   // 0.5 %
    double budget_s = 0.5;         // wall time spent sampling one (case, variant) before giving up on the noise target
    double max_budget_s = 15.0;    // hard cap on budget_s
};

enum class stop_reason { keep_going, noise_target_met, budget_exhausted, max_samples };

// The rule: at least min_samples; then stop when noise < target, or when the budget (capped by
// max_budget_s) is spent, or at max_samples.
stop_reason should_stop(const sample_stats& s, double elapsed_s, const sampling_policy& p);
const char* to_string(stop_reason r) noexcept;

}  // namespace fusebench
