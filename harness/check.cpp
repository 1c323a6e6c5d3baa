#include "harness/check.hpp"

#include <limits>

#include "harness/parallel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

namespace fusebench {

double finite_rms(std::span<const double> ref) {
    double sum = 0;
    std::size_t n = 0;
    for (double r : ref) {
        if (std::isfinite(r)) {
            sum += r * r;
            ++n;
        }
    }
    return n ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

void note_mismatch(error_stats& stats, std::size_t index, double got, double expected,
                   std::string why) {
    if (stats.first.size() < max_reported_mismatches) {
        stats.first.push_back({index, got, expected, std::move(why)});
    }
}

namespace {

// ULP distances are small integers for a correct kernel: an exact histogram of 0..1023 plus the
// rare larger values kept individually gives exact percentiles without storing every distance.
constexpr std::size_t ulp_hist_size = 1024;

struct partial {
    std::size_t mismatches = 0;
    double max_abs = 0, max_rel = 0, diff2 = 0, ref2 = 0;
    double max_atol = 0;  // the largest absolute term applied (for the failure reason)
    bool any_finite = false;
    std::array<std::uint64_t, ulp_hist_size> hist{};
    std::vector<std::uint64_t> large_ulps;
    std::vector<mismatch> first;  // sorted by index after the merge
};

std::string uniform_bound_text(double rtol, double atol) {
    char text[96];
    std::snprintf(text, sizeof text, "rtol %.3g, atol %.3g", rtol, atol);
    return text;
}

// largest: the largest absolute term applied, the subnormal grain included.
std::string per_element_bound_text(double rtol, double largest) {
    char text[128];
    std::snprintf(text, sizeof text, "rtol %.3g, per-element atol up to %.3g", rtol, largest);
    return text;
}

// The comparison the public forms share: |got - ref| <= rtol |ref| + atol_at(i); bound_text(the
// largest atol_at over the compared elements) ends the failure reason ("rtol ..., atol ...").
template <typename ATOL, typename TEXT>
output_check compare_with(const std::string& name, dtype type, const void* got, std::span<const double> ref, double rtol,
                          const ATOL& atol_at, const TEXT& bound_text) {
    output_check result;
    result.output = name;
    error_stats& s = result.stats;
    s.checked = ref.size();

    const bool floating = is_floating(type);

    std::vector<partial> parts;
    std::mutex parts_mutex;
    parallel_for(ref.size(), [&](std::size_t begin, std::size_t end) {
        partial p;
        for (std::size_t i = begin; i < end; ++i) {
            const double g = load_element(type, got, i);
            const double r = ref[i];
            // A finite reference that overflows the output format must come out as that infinity.
            const double r_out = floating ? round_to_dtype(r, type) : r;
            if (!std::isfinite(r_out) || !std::isfinite(g)) {
                // NaN and Inf must sit where the reference has them, with the same sign for Inf.
                const bool same = (std::isnan(r_out) && std::isnan(g)) || (std::isinf(r_out) && g == r_out);
                if (!same) {
                    ++p.mismatches;
                    if (p.first.size() < max_reported_mismatches) p.first.push_back({i, g, r, "nan/inf position"});
                }
                continue;
            }
            p.any_finite = true;
            const double err = std::fabs(g - r);
            p.max_abs = std::max(p.max_abs, err);
            if (r != 0) p.max_rel = std::max(p.max_rel, err / std::fabs(r));
            p.diff2 += err * err;
            p.ref2 += r * r;
            if (floating) {
                const std::uint64_t u = ulp_distance(type, g, r_out);
                if (u < ulp_hist_size) ++p.hist[u];
                else p.large_ulps.push_back(u);
            }
            const double atol = atol_at(i);
            if (atol > p.max_atol) p.max_atol = atol;
            if (err > rtol * std::fabs(r) + atol) {
                ++p.mismatches;
                if (p.first.size() < max_reported_mismatches) p.first.push_back({i, g, r, "tolerance"});
            }
        }
        std::lock_guard lock(parts_mutex);
        parts.push_back(std::move(p));
    });

    partial all;
    for (auto& p : parts) {
        all.mismatches += p.mismatches;
        all.max_abs = std::max(all.max_abs, p.max_abs);
        all.max_rel = std::max(all.max_rel, p.max_rel);
        all.max_atol = std::max(all.max_atol, p.max_atol);
        all.diff2 += p.diff2;
        all.ref2 += p.ref2;
        all.any_finite = all.any_finite || p.any_finite;
        for (std::size_t k = 0; k < ulp_hist_size; ++k) all.hist[k] += p.hist[k];
        all.large_ulps.insert(all.large_ulps.end(), p.large_ulps.begin(), p.large_ulps.end());
        all.first.insert(all.first.end(), p.first.begin(), p.first.end());
    }
    std::sort(all.first.begin(), all.first.end(),
              [](const mismatch& a, const mismatch& b) { return a.index < b.index; });
    if (all.first.size() > max_reported_mismatches) all.first.resize(max_reported_mismatches);
    s.first = std::move(all.first);
    s.mismatches = all.mismatches;

    if (all.any_finite) {
        s.max_abs = all.max_abs;
        s.max_rel = all.max_rel;
        if (all.ref2 > 0) s.rel_l2 = std::sqrt(all.diff2 / all.ref2);
        else if (all.diff2 == 0) s.rel_l2 = 0.0;
    }
    std::uint64_t total = all.large_ulps.size();
    for (auto c : all.hist) total += c;
    if (total) {
        std::sort(all.large_ulps.begin(), all.large_ulps.end());
        auto quantile = [&](double q) -> std::uint64_t {
            const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total - 1));
            std::uint64_t seen = 0;
            for (std::size_t k = 0; k < ulp_hist_size; ++k) {
                seen += all.hist[k];
                if (seen > rank) return k;
            }
            return all.large_ulps[rank - seen];
        };
        s.ulp_p50 = quantile(0.50);
        s.ulp_p99 = quantile(0.99);
        s.ulp_max = quantile(1.0);
    }
    if (s.mismatches) {
        result.pass = false;
        char buf[256];
        std::snprintf(buf, sizeof buf, "%zu of %zu elements of '%s' out of tolerance (%s)", s.mismatches, s.checked,
                      name.c_str(), bound_text(all.max_atol).c_str());
        result.reason = buf;
    }
    return result;
}

}  // namespace

output_check compare_elementwise(const std::string& name, dtype type, const void* got,
                                 std::span<const double> ref, const tolerance& tol) {
    const double scale = finite_rms(ref);
    const double atol = tol.atol_scale * scale + dtype_min_subnormal(type) * tol.subnormal_ulps;
    return compare_with(name, type, got, ref, tol.rtol, [atol](std::size_t) { return atol; },
                        [rtol = tol.rtol, atol](double) { return uniform_bound_text(rtol, atol); });
}

output_check compare_elementwise_bounded(const std::string& name, dtype type, const void* got, std::span<const double> ref,
                                         double rtol, std::span<const double> abs_bound, double subnormal_ulps) {
    if (abs_bound.size() != ref.size()) {
        throw std::invalid_argument("compare_elementwise_bounded: " + std::to_string(abs_bound.size()) + " bounds for " +
                                    std::to_string(ref.size()) + " elements of '" + name + "'");
    }
    const double grain = dtype_min_subnormal(type) * subnormal_ulps;
    return compare_with(name, type, got, ref, rtol, [abs_bound, grain](std::size_t i) { return abs_bound[i] + grain; },
                        [rtol](double largest) { return per_element_bound_text(rtol, largest); });
}

output_check compare_elementwise_bounded(const std::string& name, dtype type, const void* got, std::span<const double> ref,
                                         double rtol, const std::function<double(std::size_t)>& abs_bound,
                                         double subnormal_ulps) {
    if (!abs_bound) throw std::invalid_argument("compare_elementwise_bounded: no bound function for '" + name + "'");
    const double grain = dtype_min_subnormal(type) * subnormal_ulps;
    return compare_with(name, type, got, ref, rtol, [&abs_bound, grain](std::size_t i) { return abs_bound(i) + grain; },
                        [rtol](double largest) { return per_element_bound_text(rtol, largest); });
}

}  // namespace fusebench

namespace fusebench {

void apply_relative_tolerance(output_check& c, const output_check* baseline, double multiple, double atol_scale,
                              double reference_rms, double rounding_term) {
    relative_check rc;
    rc.multiple = multiple;
    rc.rounding_term = rounding_term;
    const double magnitude = c.relative_magnitude.value_or(reference_rms);
    rc.abs_term = atol_scale * magnitude;
    rc.rel_l2_term = c.relative_magnitude && reference_rms > 0 ? atol_scale * magnitude / reference_rms : atol_scale;
    auto fail = [&](std::string why) {
        rc.pass = false;
        rc.reason = std::move(why);
        c.pass = false;
        c.reason += (c.reason.empty() ? "" : "; ") + rc.reason;
    };
    if (!baseline) {
        fail("output '" + c.output + "': the baseline-relative tolerance could not be checked: no verified baseline output");
        c.relative = rc;
        return;
    }
    rc.baseline_max_abs = baseline->stats.max_abs;
    rc.baseline_rel_l2 = baseline->stats.rel_l2;
    if (!baseline->pass) {
        fail("output '" + c.output + "': the baseline-relative tolerance could not be checked: the baseline failed its own check");
    } else if (!rc.baseline_max_abs || !rc.baseline_rel_l2 || !c.stats.max_abs || !c.stats.rel_l2) {
        fail("output '" + c.output + "': the baseline-relative tolerance could not be checked: no finite error to compare");
    } else {
        rc.allowed_max_abs = multiple * *rc.baseline_max_abs + rc.abs_term + rc.rounding_term;
        rc.allowed_rel_l2 = multiple * *rc.baseline_rel_l2 + rc.rel_l2_term;
        if (*rc.baseline_max_abs > 0) rc.ratio_max_abs = *c.stats.max_abs / *rc.baseline_max_abs;
        if (*rc.baseline_rel_l2 > 0) rc.ratio_rel_l2 = *c.stats.rel_l2 / *rc.baseline_rel_l2;
        char buf[320];
        if (*c.stats.max_abs > *rc.allowed_max_abs) {
            std::snprintf(buf, sizeof buf,
                          "output '%s' out of tolerance relative to the baseline: max abs error %.3g > %.3g x the "
                          "baseline's %.3g + %.3g + %.3g (one ulp at its largest value)",
                          c.output.c_str(), *c.stats.max_abs, multiple, *rc.baseline_max_abs, rc.abs_term, rc.rounding_term);
            fail(buf);
        } else if (*c.stats.rel_l2 > *rc.allowed_rel_l2) {
            std::snprintf(buf, sizeof buf,
                          "output '%s' out of tolerance relative to the baseline: rel L2 error %.3g > %.3g x the "
                          "baseline's %.3g + %.3g",
                          c.output.c_str(), *c.stats.rel_l2, multiple, *rc.baseline_rel_l2, rc.rel_l2_term);
            fail(buf);
        }
    }
    c.relative = rc;
}

double relative_rounding_term(dtype type, std::span<const double> ref) {
    double largest = 0;
    for (double r : ref) {
        if (std::isfinite(r)) largest = std::max(largest, std::fabs(r));
    }
    return 2 * dtype_unit_roundoff(type) * largest;
}

std::map<std::string, output_figure> agreement_figures(std::span<const double> got, std::span<const double> want,
                                                       const std::string& prefix, const std::string& what) {
    const std::size_t n = std::min(got.size(), want.size());
    double diff2 = 0, want2 = 0, got2 = 0, dot = 0, max_abs = 0, sum_g = 0, sum_w = 0;
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(got[i]) || !std::isfinite(want[i])) continue;
        const double d = got[i] - want[i];
        diff2 += d * d;
        want2 += want[i] * want[i];
        got2 += got[i] * got[i];
        dot += got[i] * want[i];
        sum_g += got[i];
        sum_w += want[i];
        max_abs = std::max(max_abs, std::fabs(d));
        ++pairs;
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double rel = nan, cosine = nan, corr = nan;
    if (pairs > 0 && want2 > 0) rel = std::sqrt(diff2 / want2);
    if (pairs > 0 && want2 > 0 && got2 > 0) cosine = dot / std::sqrt(want2 * got2);
    if (pairs > 1) {
        const double p = static_cast<double>(pairs);
        const double cov = dot - sum_g * sum_w / p, var_g = got2 - sum_g * sum_g / p, var_w = want2 - sum_w * sum_w / p;
        if (var_g > 0 && var_w > 0) corr = cov / std::sqrt(var_g * var_w);
    }
    return {{prefix + "rel_l2", {rel, "||got - want|| / ||want|| over finite pairs: " + what}},
            {prefix + "max_abs", {pairs > 0 ? max_abs : nan, "largest |got - want| over finite pairs: " + what}},
            {prefix + "cosine", {cosine, "cosine similarity of got and want: " + what}},
            {prefix + "correlation", {corr, "Pearson correlation of got and want: " + what}}};
}

}  // namespace fusebench
