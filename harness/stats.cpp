#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace fusebench {

double quantile_sorted(std::span<const double> sorted, double q) {
    if (sorted.empty()) throw std::invalid_argument("quantile of an empty sample");
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

sample_stats summarize(std::span<const double> samples) {
    if (samples.empty()) throw std::invalid_argument("no samples to summarize");
    std::vector<double> v(samples.begin(), samples.end());
    std::sort(v.begin(), v.end());
    sample_stats s;
    s.n = v.size();
    s.min = v.front();
    s.max = v.back();
    s.median = quantile_sorted(v, 0.5);
    s.p10 = quantile_sorted(v, 0.10);
    s.p90 = quantile_sorted(v, 0.90);
    s.iqr = quantile_sorted(v, 0.75) - quantile_sorted(v, 0.25);
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(s.n);
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stdev = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;
    s.rel_stdev = s.mean != 0 ? s.stdev / s.mean : 0.0;
    s.noise = (s.median != 0 && s.n > 1)
                  ? 1.2533 * s.stdev / (s.median * std::sqrt(static_cast<double>(s.n)))
                  : (s.n > 1 ? 0.0 : INFINITY);
    return s;
}

stop_reason should_stop(const sample_stats& s, double elapsed_s, const sampling_policy& p) {
    if (s.n >= p.max_samples) return stop_reason::max_samples;
    if (s.n < p.min_samples) return stop_reason::keep_going;
    if (s.noise < p.noise_target) return stop_reason::noise_target_met;
    if (elapsed_s >= std::min(p.budget_s, p.max_budget_s)) return stop_reason::budget_exhausted;
    return stop_reason::keep_going;
}

const char* to_string(stop_reason r) noexcept {
    switch (r) {
        case stop_reason::keep_going: return "keep_going";
        case stop_reason::noise_target_met: return "noise_target_met";
        case stop_reason::budget_exhausted: return "budget_exhausted";
        case stop_reason::max_samples: return "max_samples";
    }
    return "?";
}

}  // namespace fusebench
