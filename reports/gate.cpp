#include "reports/gate.hpp"

#include "harness/rng.hpp"
#include "harness/stats.hpp"
#include "reports/format_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#ifndef FUSEBENCH_POLICY_PATH
#define FUSEBENCH_POLICY_PATH ""
#endif

namespace fusebench::reports {

namespace {

double positive_threshold(const nlohmann::json& v, const std::string& where) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() >= 10) {
        throw bad_input(where + ": expected a threshold as a fraction in [0, 10) (0.05 = 5%), got " + v.dump());
    }
    return v.get<double>();
}

// Median with the harness's convention (mean of the middle two for an even count), in O(n).
double median_inplace(std::vector<double>& v) {
    const std::size_t n = v.size();
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(v.begin(), mid, v.end());
    if (n % 2) return *mid;
    const double upper = *mid;
    const double lower = *std::max_element(v.begin(), mid);
    return 0.5 * (lower + upper);
}

constexpr std::size_t min_bootstrap_samples = 5;

}  // namespace

// ---------------------------------------------------------------- policy

double policy::threshold_for(const std::string& suite, const std::string& variant) const {
    if (auto it = overrides.find(suite + "/" + variant); it != overrides.end()) return it->second;
    if (auto it = overrides.find(suite); it != overrides.end()) return it->second;
    return threshold;
}

policy parse_policy(const nlohmann::json& j, const std::string& source) {
    policy p;
    p.source = source;
    if (!j.is_object()) throw bad_input(source + ": a policy is a JSON object");
    static const std::set<std::string> known{"fusebench_policy", "comment", "threshold", "overrides", "noise_z", "bootstrap",
                                             "fail_on_missing", "cross_board_min_pct_of_ceiling",
                                             "cross_board_gate_reference_rows", "e2e_threshold", "e2e_min_delta_us",
                                             "e2e_max_spread"};
    for (const auto& [k, v] : j.items()) {
        if (!known.count(k)) throw bad_input(source + ": unknown policy key '" + k + "'");
    }
    if (!j.contains("fusebench_policy") || j["fusebench_policy"] != 1) {
        throw bad_input(source + ": not a fusebench policy version 1 (expected \"fusebench_policy\": 1)");
    }
    if (j.contains("threshold")) p.threshold = positive_threshold(j["threshold"], source + ": threshold");
    if (j.contains("overrides")) {
        if (!j["overrides"].is_object()) throw bad_input(source + ": overrides must map \"suite\" or \"suite/variant\" to a threshold");
        for (const auto& [k, v] : j["overrides"].items()) {
            if (k.empty() || std::count(k.begin(), k.end(), '/') > 1) {
                throw bad_input(source + ": override key '" + k + "' is neither \"suite\" nor \"suite/variant\"");
            }
            p.overrides[k] = positive_threshold(v, source + ": overrides." + k);
        }
    }
    if (j.contains("cross_board_min_pct_of_ceiling")) {
        const auto& v = j["cross_board_min_pct_of_ceiling"];
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 100) {
            throw bad_input(source + ": cross_board_min_pct_of_ceiling must be a percentage in [0, 100]");
        }
        p.cross_board_min_pct_of_ceiling = v.get<double>();
    }
    if (j.contains("noise_z")) {
        const auto& z = j["noise_z"];
        if (!z.is_number() || z.get<double>() <= 0 || z.get<double>() > 10) throw bad_input(source + ": noise_z must be in (0, 10]");
        p.noise_z = z.get<double>();
    }
    if (j.contains("bootstrap")) {
        const auto& b = j["bootstrap"];
        if (!b.is_object()) throw bad_input(source + ": bootstrap must be an object {resamples, confidence, seed}");
        for (const auto& [k, v] : b.items()) {
            if (k == "resamples") {
                if (!v.is_number_integer() || v.get<long long>() < 100 || v.get<long long>() > 100000) {
                    throw bad_input(source + ": bootstrap.resamples must be an integer in [100, 100000]");
                }
                p.bootstrap_resamples = v.get<int>();
            } else if (k == "confidence") {
                if (!v.is_number() || v.get<double>() <= 0.5 || v.get<double>() >= 1) {
                    throw bad_input(source + ": bootstrap.confidence must be in (0.5, 1)");
                }
                p.bootstrap_confidence = v.get<double>();
            } else if (k == "seed") {
                if (!v.is_number_unsigned()) throw bad_input(source + ": bootstrap.seed must be a non-negative integer");
                p.bootstrap_seed = v.get<std::uint64_t>();
            } else {
                throw bad_input(source + ": unknown policy key 'bootstrap." + k + "'");
            }
        }
    }
    if (j.contains("cross_board_gate_reference_rows")) {
        if (!j["cross_board_gate_reference_rows"].is_boolean()) {
            throw bad_input(source + ": cross_board_gate_reference_rows must be true or false");
        }
        p.cross_board_gate_reference_rows = j["cross_board_gate_reference_rows"].get<bool>();
    }
    if (j.contains("e2e_threshold")) p.e2e_threshold = positive_threshold(j["e2e_threshold"], source + ": e2e_threshold");
    if (j.contains("e2e_min_delta_us")) {
        const auto& v = j["e2e_min_delta_us"];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
            throw bad_input(source + ": e2e_min_delta_us must be a non-negative number of microseconds");
        }
        p.e2e_min_delta_us = v.get<double>();
    }
    if (j.contains("e2e_max_spread")) p.e2e_max_spread = positive_threshold(j["e2e_max_spread"], source + ": e2e_max_spread");
    if (j.contains("fail_on_missing")) {
        if (!j["fail_on_missing"].is_boolean()) throw bad_input(source + ": fail_on_missing must be true or false");
        p.fail_on_missing = j["fail_on_missing"].get<bool>();
    }
    return p;
}

policy load_policy(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw bad_input(path + ": cannot read the policy file");
    std::ostringstream ss;
    ss << in.rdbuf();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(ss.str());
    } catch (const nlohmann::json::parse_error& e) {
        throw bad_input(path + ": policy is not JSON (parse error at byte " + std::to_string(e.byte) + ")");
    }
    return parse_policy(j, path);
}

std::string default_policy_path() {
    if (const char* env = std::getenv("FUSEBENCH_POLICY"); env && *env) return env;
    const std::string compiled = FUSEBENCH_POLICY_PATH;
    std::error_code ec;
    if (!compiled.empty() && std::filesystem::exists(compiled, ec)) return compiled;
    return "";
}

// ---------------------------------------------------------------- verdicts

const char* to_string(verdict v) noexcept {
    switch (v) {
        case verdict::correctness_regression: return "CORRECTNESS REGRESSION";
        case verdict::slower: return "SLOWER";
        case verdict::e2e_slower: return "E2E SLOWER";
        case verdict::missing: return "MISSING";
        case verdict::inconclusive: return "INCONCLUSIVE";
        case verdict::still_failing: return "STILL FAILING";
        case verdict::lower_efficiency: return "LOWER EFFICIENCY";
        case verdict::skipped: return "SKIPPED";
        case verdict::new_result: return "NEW";
        case verdict::fixed: return "FIXED";
        case verdict::faster: return "FASTER";
        case verdict::higher_efficiency: return "HIGHER EFFICIENCY";
        case verdict::same: return "SAME";
        case verdict::not_timed: return "NOT TIMED";
    }
    return "?";
}

bool fails_gate(verdict v, const policy& p) noexcept {
    return v == verdict::correctness_regression || v == verdict::slower || v == verdict::e2e_slower ||
           (p.fail_on_missing && v == verdict::missing);
}

const char* to_string(device_relation d) noexcept {
    switch (d) {
        case device_relation::same_device: return "same device";
        case device_relation::same_model: return "same model, other board";
        case device_relation::different_model: return "different GPUs";
    }
    return "?";
}

// ---------------------------------------------------------------- the performance rule

std::pair<double, double> bootstrap_median_ci(const std::vector<double>& samples, int resamples, double confidence,
                                              std::uint64_t seed) {
    const std::size_t n = samples.size();
    if (n == 0) throw std::invalid_argument("bootstrap of no samples");
    const rng gen(seed);
    std::vector<double> medians(static_cast<std::size_t>(resamples));
    std::vector<double> draw(n);
    std::uint64_t counter = 0;
    for (auto& m : medians) {
        for (auto& d : draw) {
            // uniform() is in [0, 1): the index is always in range.
            d = samples[static_cast<std::size_t>(gen.uniform(counter++) * static_cast<double>(n))];
        }
        m = median_inplace(draw);
    }
    std::sort(medians.begin(), medians.end());
    const double tail = (1.0 - confidence) / 2.0;
    return {quantile_sorted(medians, tail), quantile_sorted(medians, 1.0 - tail)};
}

ratio_interval time_ratio(const timing_side& base, const timing_side& now, const policy& p, const std::string& key) {
    ratio_interval iv;
    iv.ratio = now.median_us / base.median_us;
    if (base.samples_us.size() >= min_bootstrap_samples && now.samples_us.size() >= min_bootstrap_samples) {
        const std::uint64_t s = splitmix64(p.bootstrap_seed ^ hash_string(key));
        const auto [b_lo, b_hi] = bootstrap_median_ci(base.samples_us, p.bootstrap_resamples, p.bootstrap_confidence, splitmix64(s ^ 1));
        const auto [n_lo, n_hi] = bootstrap_median_ci(now.samples_us, p.bootstrap_resamples, p.bootstrap_confidence, splitmix64(s ^ 2));
        iv.lo = n_lo / b_hi;
        iv.hi = n_hi / b_lo;
        iv.method = "bootstrap";
    } else {
        const double s = p.noise_z * std::sqrt(base.noise * base.noise + now.noise * now.noise);
        iv.lo = iv.ratio * std::exp(-s);
        iv.hi = iv.ratio * std::exp(s);
        iv.method = "noise";
    }
    // The interval always contains the point estimate (a bootstrap interval of a skewed sample
    // need not be centred on the reported median).
    iv.lo = std::min(iv.lo, iv.ratio);
    iv.hi = std::max(iv.hi, iv.ratio);
    return iv;
}

verdict classify(const ratio_interval& iv, double threshold) {
    const double up = 1.0 + threshold, down = 1.0 / (1.0 + threshold);
    if (iv.ratio > up && iv.lo > 1.0) return verdict::slower;
    if (iv.ratio < down && iv.hi < 1.0) return verdict::faster;
    if (iv.lo >= down && iv.hi <= up) return verdict::same;
    return verdict::inconclusive;
}

// ---------------------------------------------------------------- whole reports

std::string pair_result::key() const {
    std::string k = suite + "/" + case_name + "/" + dtype + "/" + variant;
    if (!device.empty()) k += "@" + device;
    return k;
}

namespace {

side_summary summarize_side(const nlohmann::json& r, const device_ctx& dev) {
    side_summary s;
    s.present = true;
    s.outcome = string_or(r, "outcome", "?");
    s.reason = string_or(r, "reason", "");
    if (const auto m = r.find("mutant"); m != r.end() && m->is_object()) s.outcome = m->value("caught", false) ? "caught" : "missed";
    s.device_label = dev.label();
    s.device_name = dev.name();
    const auto& t = r["timing"];
    if (t.is_object() && string_or(r, "outcome", "") == "pass") {
        s.timed = true;
        s.median_us = number_or_null(t, "median_us").value_or(0);
        s.noise = number_or_null(t, "noise").value_or(0);
        s.samples = t.value("samples", std::size_t{0});
        s.raw_samples = t.contains("samples_us") && t["samples_us"].is_array() && !t["samples_us"].empty();
        s.timed = s.median_us > 0;
    }
    const auto& d = r["derived"];
    s.pct_of_ceiling = number_or_null(d, "pct_of_ceiling");
    s.gbps = number_or_null(d, "achieved_gbps");
    s.speedup = number_or_null(d, "speedup_vs_baseline");
    return s;
}

timing_side timing_of(const nlohmann::json& r) {
    timing_side t;
    const auto& tj = r["timing"];
    t.median_us = number_or_null(tj, "median_us").value_or(0);
    t.noise = number_or_null(tj, "noise").value_or(0);
    if (const auto it = tj.find("samples_us"); it != tj.end() && it->is_array()) {
        for (const auto& v : *it) {
            if (v.is_number()) t.samples_us.push_back(v.get<double>());
        }
    }
    return t;
}

bool passing(const std::string& outcome) { return outcome == "pass" || outcome == "caught"; }
bool failing(const std::string& outcome) { return outcome == "fail" || outcome == "error" || outcome == "missed"; }

// How many times the samples would shrink the interval enough to decide (noise ~ 1/sqrt(n)).
std::string more_samples_note(const ratio_interval& iv, double threshold) {
    const double l = std::log(iv.ratio);
    const double w = std::max(std::log(iv.ratio / iv.lo), std::log(iv.hi / iv.ratio));
    const double room = std::abs(l) < std::log1p(threshold) ? std::log1p(threshold) - std::abs(l) : std::abs(l);
    std::string n = "noise too large for the " + format("%.3g", threshold * 100) + "% threshold: ";
    if (room <= 0 || w <= 0) return n + "rerun with more samples (--time-budget, --noise-target)";
    const double k = std::ceil(std::pow(w / room, 2.0) * 1.1);
    return n + (k > 100 ? std::string("over 100x") : "~" + format("%.0f", std::max(k, 2.0)) + "x") +
           " the samples would settle it (--time-budget, --noise-target)";
}

device_relation relation_of(const device_ctx& a, const device_ctx& b) {
    if (!a.uuid().empty() && a.uuid() == b.uuid()) return device_relation::same_device;
    if (a.name() == b.name()) return device_relation::same_model;
    return device_relation::different_model;
}

// The uncertainty of the ceiling a result is judged against, relative. A ceiling's value is the
// median of `samples` timings whose relative spread is `noise` (stdev / median), so the value is
// uncertain by about the median's standard error, sqrt(pi / 2) noise / sqrt(samples) (normal
// samples), not by the spread itself; a ceiling without a sample count keeps the spread. Measured
// on the committed baselines: the copy ceiling's median on eight H100 boards 3006.7-3011.1 GB/s
// (0.15% apart) and on four H200 boards 4244.2-4247.7 GB/s (0.08%) while the runs' spreads were
// 0.26-1.5%; with the spread as the uncertainty, one noisy reading (1.5%) left 169 of 197 timed
// results INCONCLUSIVE between two H200 baselines with the same kernels, and two H100 boards of one
// session (1.2% each) all 197. Over 12 cross-board pairs of unchanged kernels the standard error
// left 5-14 INCONCLUSIVE and no new SLOWER or FASTER (README, "Across GPUs").
matched_ceiling ceiling_of(const device_ctx& d, const nlohmann::json& r) {
    return ceiling_for(d.ceilings, string_or(r["derived"], "bound", ""), string_or(r["traffic_model"], "compute_unit", ""));
}

double ceiling_noise(const device_ctx& d, const nlohmann::json& r) {
    const auto c = ceiling_of(d, r).ceiling;
    if (!c.is_object()) return 0;
    const double spread = number_or_null(c, "noise").value_or(0);
    const auto n = number_or_null(c, "samples");
    if (!n || *n < 2) return spread;
    return std::sqrt(std::acos(-1.0) / 2) * spread / std::sqrt(*n);
}

// Kernels per launch from the CUPTI block of a result's timing; nullopt when unknown (events).
std::optional<std::size_t> kernels_per_launch(const nlohmann::json& r) {
    const auto& t = r["timing"];
    if (!t.is_object()) return std::nullopt;
    const auto it = t.find("cupti");
    if (it == t.end() || !it->is_object()) return std::nullopt;
    const auto k = it->find("kernels_per_sample");
    if (k == it->end() || !k->is_number_integer() || k->get<long long>() < 0) return std::nullopt;
    return static_cast<std::size_t>(k->get<long long>());
}

// timing.e2e's median, noise and spread (IQR / median, 0 when the report has no IQR); nullopt when a
// report has none (reports before e2e, events).
struct e2e_side {
    timing_side t;
    double spread = 0;
};
std::optional<e2e_side> e2e_of(const nlohmann::json& r) {
    const auto& t = r["timing"];
    if (!t.is_object()) return std::nullopt;
    const auto it = t.find("e2e");
    if (it == t.end() || !it->is_object()) return std::nullopt;
    const auto m = number_or_null(*it, "median_us");
    if (!m || *m <= 0) return std::nullopt;
    e2e_side s;
    s.t.median_us = *m;
    s.t.noise = number_or_null(*it, "noise").value_or(0);
    s.spread = number_or_null(*it, "iqr_us").value_or(0) / *m;
    return s;
}

// E2E SLOWER: the kernel time did not fail, but the host's end-to-end time grew (policy e2e_*) by
// more than the kernel time did.
// Not between GPU models (their hosts and drivers differ as much as their GPUs).
void judge_e2e(pair_result& p, const nlohmann::json& rb, const nlohmann::json& rn, const policy& pol) {
    const auto eb = e2e_of(rb), en = e2e_of(rn);
    if (!eb || !en) return;
    p.e2e_interval = time_ratio(eb->t, en->t, pol, p.key() + "/e2e");
    if (p.relation == device_relation::different_model) return;
    if (p.v != verdict::same && p.v != verdict::faster && p.v != verdict::inconclusive) return;
    // What the kernel time does not explain: a kernel that got slower (judged or, across boards,
    // not judged) takes its e2e with it, and that is the kernel rule's business.
    const double delta = en->t.median_us - eb->t.median_us;
    const double host_delta = delta - (p.now.median_us - p.base.median_us);
    if (classify(*p.e2e_interval, pol.e2e_threshold) != verdict::slower || host_delta <= pol.e2e_min_delta_us) return;
    const std::string grew = "end-to-end (launcher call to stream completion) " + format_us(eb->t.median_us) + " -> " +
                             format_us(en->t.median_us) + " us (x" + format("%.2f", p.e2e_interval->ratio) + ", interval [" +
                             format("%.2f", p.e2e_interval->lo) + ", " + format("%.2f", p.e2e_interval->hi) + "]; +" +
                             format_us(host_delta) + " us beyond the kernel time's change)";
    const double sb = eb->spread, sn = en->spread;
    if (sb > pol.e2e_max_spread || sn > pol.e2e_max_spread) {
        // Host interference in bursts, not a cost every launch pays: shown, not judged.
        p.note = std::string("kernel time ") + to_string(p.v) + "; " + grew + ", but not judged: the e2e samples are spread (IQR " +
                 format("%.0f", 100 * sb) + "% of the median in BASE, " + format("%.0f", 100 * sn) +
                 "% in NEW; policy e2e_max_spread " + format("%.0f", 100 * pol.e2e_max_spread) +
                 "%): host interference during the run, not a launcher cost that holds launch after launch; rerun on a quiet host";
        p.v = verdict::inconclusive;
        return;
    }
    p.note = std::string("kernel time ") + to_string(p.v) + ", but " + grew + ": host work in the launcher grew";
    p.v = verdict::e2e_slower;
}

void judge_performance(pair_result& p, const nlohmann::json& rb, const device_ctx& db, const nlohmann::json& rn,
                       const device_ctx& dn, const policy& pol, bool launch_gate_differs) {
    const std::string key = p.key();
    const ratio_interval t = time_ratio(timing_of(rb), timing_of(rn), pol, key);
    const bool have_eff = p.base.pct_of_ceiling && p.now.pct_of_ceiling && *p.base.pct_of_ceiling > 0 && *p.now.pct_of_ceiling > 0;
    if (p.relation == device_relation::same_device || (p.relation == device_relation::same_model && !have_eff)) {
        p.basis = "time";
        p.interval = t;
        if (p.relation == device_relation::same_model) p.note = "no measured ceilings on one side: medians compared directly";
    } else if (!have_eff) {
        p.basis = "";
        p.v = verdict::inconclusive;
        p.note = "different GPUs and no measured ceilings on one side: efficiencies cannot be compared";
        return;
    } else {
        // Efficiency = model work / time / own ceiling: its ratio is the time ratio scaled by the
        // ratio of the ceilings, so the time interval's widths carry over, widened by the
        // uncertainty of both ceilings' values (ceiling_noise).
        p.basis = "efficiency";
        ratio_interval e;
        e.ratio = *p.base.pct_of_ceiling / *p.now.pct_of_ceiling;
        const double cb = ceiling_noise(db, rb), cn = ceiling_noise(dn, rn);
        const double extra = pol.noise_z * std::sqrt(cb * cb + cn * cn);
        const double a = std::log(t.ratio / t.lo), b = std::log(t.hi / t.ratio);
        e.lo = e.ratio * std::exp(-std::sqrt(a * a + extra * extra));
        e.hi = e.ratio * std::exp(std::sqrt(b * b + extra * extra));
        e.method = t.method + "+ceilings";
        p.interval = e;
    }
    verdict v = classify(*p.interval, p.threshold);
    if (v == verdict::inconclusive) p.note = more_samples_note(*p.interval, p.threshold);
    // A decided change that is not judged: INCONCLUSIVE, the note says which way the interval went
    // and why it does not count.
    const bool eff = p.relation == device_relation::different_model;
    auto not_judged = [&](const std::string& why) {
        p.note = std::string(v == verdict::slower ? (eff ? "lower efficiency" : "slower") : (eff ? "higher efficiency" : "faster")) +
                 " by the interval, but " + why;
        v = verdict::inconclusive;
    };
    const auto decided = [&] { return v == verdict::slower || v == verdict::faster; };
    if (decided() && p.relation == device_relation::same_model) {
        const std::string role = rn.value("role", std::string{});
        if (p.basis == "efficiency" &&
            std::max(*p.base.pct_of_ceiling, *p.now.pct_of_ceiling) < pol.cross_board_min_pct_of_ceiling) {
            // Measured on two H200 boards: kernels of 4 to 48 us at 0.2% to 35% of the copy ceiling
            // moved by 5% to 30% between boards, beyond their within-run noise, while every result
            // above 80% agreed within 3.7% (README, "Three uses").
            not_judged("not gated across boards: " + format("%.3g", *p.base.pct_of_ceiling) + "% and " +
                       format("%.3g", *p.now.pct_of_ceiling) + "% of the ceiling, below " +
                       format("%.3g", pol.cross_board_min_pct_of_ceiling) +
                       "%: latency and clocks, which differ between boards, set its time; compare on one board");
        } else if (!pol.cross_board_gate_reference_rows && (role == "baseline" || role == "peer")) {
            // Seen on two H100 boards (baselines at c9adc8d and d6e3591, both gated): the unchanged
            // naive decode q1 k32768 read 6.4% slower at 75-80% of the ceiling, all of it cuBLAS's
            // P V kernel (94.2 -> 108.9 us); cuDNN's attention moved 5-6% at 4k the same way.
            not_judged("not gated across boards: a " + role +
                       " row (reference code, not under test), whose library kernels' speed differs by board; "
                       "compare on one board");
        }
    }
    if (decided() && p.basis == "efficiency") {
        // Efficiency is time against each run's own ceiling: a ceiling timed back to back (before
        // 1ea5da5) ran into the power limit (the FP8 one read 1269-1430 TFLOP/s over four runs), one
        // timed in bursts after idle gaps reads the unthrottled rate, so the two are not the same bar.
        const auto mb = ceiling_of(db, rb), mn = ceiling_of(dn, rn);
        const std::string sb = ceiling_schedule(mb), sn = ceiling_schedule(mn);
        if (!sb.empty() && !sn.empty() && sb != sn) {
            not_judged("not judged: the " + mb.key + " ceilings were timed differently (BASE " + sb + ", NEW " + sn +
                       "), so the efficiencies are against different bars; compare on one board, or reports whose ceilings "
                       "were timed alike");
        }
    }
    bool gate_note = false;
    if (decided() && launch_gate_differs) {
        const auto kb = kernels_per_launch(rb), kn = kernels_per_launch(rn);
        if (!kb || !kn || *kb > 1 || *kn > 1) {
            gate_note = true;
            // Seen on two H100 boards: the unchanged naive decode pipeline (three short kernels)
            // read 12.5% slower ungated, the gated run as fast as before (README, "What is measured").
            not_judged("not judged: " +
                       (kb && kn ? std::to_string(std::max(*kb, *kn)) + " kernels per launch"
                                 : std::string("kernels per launch unknown")) +
                       ", timed behind the launch gate on one side only (the other's span holds the host's launch gaps); "
                       "compare reports made with the same timing");
        }
    }
    if (eff) {
        if (v == verdict::slower) v = verdict::lower_efficiency;
        if (v == verdict::faster) v = verdict::higher_efficiency;
        if (v == verdict::inconclusive && !gate_note) p.note = "efficiencies differ by less than the noise can settle";
    }
    p.v = v;
}

void judge(pair_result& p, const nlohmann::json* rb, const device_ctx* db, const nlohmann::json* rn, const device_ctx* dn,
           const policy& pol, bool launch_gate_differs) {
    if (!rn) {
        p.v = verdict::missing;
        p.note = "only in BASE (" + p.base.outcome + ")";
        return;
    }
    if (!rb) {
        p.v = verdict::new_result;
        p.note = "only in NEW (" + p.now.outcome + ")";
        return;
    }
    p.relation = relation_of(*db, *dn);
    const std::string& bo = p.base.outcome;
    const std::string& no = p.now.outcome;
    if (passing(bo) && failing(no)) {
        p.v = verdict::correctness_regression;
        p.note = p.now.reason.empty() ? "was " + bo + ", now " + no : no + ": " + p.now.reason;
        return;
    }
    if (failing(bo) && failing(no)) {
        p.v = verdict::still_failing;
        p.note = no + (p.now.reason.empty() ? "" : ": " + p.now.reason);
        return;
    }
    if (failing(bo) && passing(no)) {
        p.v = verdict::fixed;
        p.note = "was " + bo + (p.base.reason.empty() ? "" : ": " + p.base.reason);
        return;
    }
    if (bo == "skipped" || no == "skipped") {
        p.v = verdict::skipped;
        p.note = bo == no ? "skipped on both sides"
                          : (no == "skipped" ? "now skipped: " + p.now.reason : "was skipped, now " + no);
        return;
    }
    if (!p.base.timed || !p.now.timed) {
        p.v = verdict::not_timed;
        p.note = bo == "caught" ? "verifier self-test: caught on both sides" : "verified only";
        return;
    }
    judge_performance(p, *rb, *db, *rn, *dn, pol, launch_gate_differs);
    judge_e2e(p, *rb, *rn, pol);
}

std::string device_line(const device_ctx& d) {
    std::string u = d.uuid();
    if (u.size() > 12) u = u.substr(0, 12) + "...";
    return d.name() + " (" + d.label() + (u.empty() ? "" : ", " + u) + ", " + d.driver() + ")";
}

report_identity identity_of(const loaded_report& r) {
    report_identity id;
    id.path = r.path;
    id.tool = r.tool_line();
    id.status = r.status();
    id.started_at = string_or(r.doc, "started_at", "?");
    id.mode = string_or(r.doc["settings"], "mode", "?");
    if (const auto& st = r.doc["settings"]; st.is_object()) {
        const auto g = st.find("timing_launch_gate");
        id.launch_gate = g != st.end() && g->is_boolean() && g->get<bool>();
    }
    // Reports of c9adc8d itself gate without the setting: their results' method_reason says so.
    for (std::size_t i = 0; !id.launch_gate && i < r.results().size(); ++i) {
        const auto& t = r.results()[i]["timing"];
        if (t.is_object() && string_or(t, "method_reason", "").find("behind a stream gate") != std::string::npos) id.launch_gate = true;
    }
    for (const auto& d : r.devices) {
        id.devices.push_back(device_line(d));
        id.ceilings.push_back(ceilings_summary(d.ceilings));
    }
    return id;
}

// Match identity -> first result index; counts the duplicates it ignores.
std::map<std::string, std::size_t> index_results(const loaded_report& r, bool by_device, std::vector<std::string>& order,
                                                 int& duplicates) {
    std::map<std::string, std::size_t> idx;
    const auto& res = r.results();
    for (std::size_t i = 0; i < res.size(); ++i) {
        std::string k = result_key(res[i]);
        if (by_device) {
            k += '@';
            k += r.device_for(i).name();
        }
        if (idx.emplace(k, i).second) order.push_back(k);
        else ++duplicates;
    }
    return idx;
}

}  // namespace

comparison compare_reports(const loaded_report& base, const loaded_report& now, const policy& pol) {
    comparison c;
    c.base = identity_of(base);
    c.now = identity_of(now);
    const bool by_device = base.merged_devices || now.merged_devices;

    std::vector<std::string> base_order, new_order;
    int dup_b = 0, dup_n = 0;
    const auto bi = index_results(base, by_device, base_order, dup_b);
    const auto ni = index_results(now, by_device, new_order, dup_n);
    if (dup_b) c.warnings.push_back(base.path + ": " + std::to_string(dup_b) + " duplicate results ignored (the first of each is compared)");
    if (dup_n) c.warnings.push_back(now.path + ": " + std::to_string(dup_n) + " duplicate results ignored (the first of each is compared)");

    std::size_t common = 0;
    for (const auto& k : base_order) common += ni.count(k);
    if (common == 0) {
        throw bad_input(base.path + " and " + now.path + " have no result in common (matched by suite, case, dtype, variant" +
                        std::string(by_device ? ", device" : "") + ")");
    }
    for (const auto* r : {&base, &now}) {
        if (r->status() != "complete") {
            c.warnings.push_back(r->path + " is '" + r->status() + "', not complete: results it lacks are " +
                                 (r == &base ? "NEW" : "MISSING"));
        }
    }
    if (c.base.mode != c.now.mode) {
        c.warnings.push_back("timing modes differ (BASE " + c.base.mode + ", NEW " + c.now.mode + "): times are not comparable");
    }
    const bool launch_gate_differs = c.base.launch_gate != c.now.launch_gate;
    if (launch_gate_differs) {
        c.warnings.push_back(std::string(c.base.launch_gate ? "NEW" : "BASE") +
                             " was timed without the launch gate (reports before c9adc8d): there a launch of several "
                             "kernels is timed with the host's launch gaps between them; such results are not gated");
    }

    // Tensor-core ceilings timed in different schedules (bursts after idle gaps since 1ea5da5, back to
    // back before): said once; judge_performance leaves the compute-bound results across boards
    // that meet them unjudged.
    for (const char* key : {"bf16_tflops", "fp16_tflops", "fp8_tflops"}) {
        const auto sb = ceiling_schedule(ceiling_named(base.devices.front().ceilings, key));
        const auto sn = ceiling_schedule(ceiling_named(now.devices.front().ceilings, key));
        if (!sb.empty() && !sn.empty() && sb != sn) {
            c.warnings.push_back("the tensor-core ceilings were timed differently (BASE " + sb + ", NEW " + sn +
                                 "): across boards, compute-bound results judged against them are not gated");
            break;
        }
    }

    auto make_pair = [&](const std::string& k) {
        pair_result p;
        const nlohmann::json* rb = nullptr;
        const nlohmann::json* rn = nullptr;
        const device_ctx* db = nullptr;
        const device_ctx* dn = nullptr;
        if (auto it = bi.find(k); it != bi.end()) {
            rb = &base.results()[it->second];
            db = &base.device_for(it->second);
            p.base = summarize_side(*rb, *db);
        }
        if (auto it = ni.find(k); it != ni.end()) {
            rn = &now.results()[it->second];
            dn = &now.device_for(it->second);
            p.now = summarize_side(*rn, *dn);
        }
        const nlohmann::json& any = rb ? *rb : *rn;
        p.suite = string_or(any, "suite", "?");
        p.case_name = string_or(any, "case", "?");
        p.dtype = string_or(any, "dtype", "?");
        p.variant = string_or(any, "variant", "?");
        if (by_device) p.device = (db ? db : dn)->name();
        p.threshold = pol.threshold_for(p.suite, p.variant);
        judge(p, rb, db, rn, dn, pol, launch_gate_differs);
        return p;
    };
    for (const auto& k : base_order) c.pairs.push_back(make_pair(k));
    for (const auto& k : new_order) {
        if (!bi.count(k)) c.pairs.push_back(make_pair(k));
    }

    std::set<device_relation> relations;
    for (const auto& p : c.pairs) {
        if (p.basis == "efficiency") c.efficiency_compared = true;
        ++c.counts[p.v];
        if (fails_gate(p.v, pol)) ++c.regressions;
        if (p.base.present && p.now.present) relations.insert(p.relation);
    }
    c.exit_code = c.regressions ? 1 : 0;
    if (relations.size() == 1) {
        switch (*relations.begin()) {
            case device_relation::same_device:
                c.relation = "same device: medians compared directly";
                break;
            case device_relation::same_model:
                c.relation = "same GPU model on different boards: efficiency (time against each run's own measured ceiling) compared, gate active "
                             "(not for results under " + format("%.3g", pol.cross_board_min_pct_of_ceiling) + "% of their ceiling" +
                             (pol.cross_board_gate_reference_rows ? "" : ", nor for baseline and peer rows") + ")";
                break;
            case device_relation::different_model:
                c.relation = "different GPUs: efficiency (% of each device's measured ceiling) compared, both times shown; "
                             "a hardware difference never fails the gate";
                break;
        }
    } else {
        c.relation = "mixed devices: each result is compared by its own devices' relation (see the basis column)";
    }
    std::string ov;
    for (const auto& [k, v] : pol.overrides) ov += (ov.empty() ? "" : ", ") + k + " " + format("%.3g", v * 100) + "%";
    c.policy_line = pol.source + ": threshold " + format("%.3g", pol.threshold * 100) + "%" + (ov.empty() ? "" : " (" + ov + ")") +
                    ", noise z " + format("%.3g", pol.noise_z) + ", bootstrap " + std::to_string(pol.bootstrap_resamples) +
                    " resamples at " + format("%.3g", pol.bootstrap_confidence * 100) + "%, seed " + std::to_string(pol.bootstrap_seed) +
                    ", end-to-end " + format("%.3g", pol.e2e_threshold * 100) + "% and " + format("%.3g", pol.e2e_min_delta_us) +
                    " us (samples spread at most " + format("%.3g", pol.e2e_max_spread * 100) + "%)" +
                    (pol.fail_on_missing ? ", MISSING fails" : "");
    return c;
}

}  // namespace fusebench::reports
