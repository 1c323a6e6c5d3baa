// The progress line's estimate of the time left in a run.
#pragma once

#include "harness/runner.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace fusebench {

// Time left in a run, for the progress line: each item weighs what its cost scales with (the
// variants it runs, timing or not, the bytes the host generates, checks against the fp64
// reference and copies), and the seconds per unit of weight are learned from the items done.
class progress_estimate {
public:
    progress_estimate(const std::vector<selection_item>& items, std::size_t first) : m_first(first) {
        std::vector<double> w;
        for (const auto& it : items) w.push_back(weight(it));
        set_weights(w);
    }
    // Items of the given weights (tests).
    progress_estimate(const std::vector<double>& weights, std::size_t first) : m_first(first) { set_weights(weights); }
    // ", about 3m10s left" once an item has finished, else "".
    std::string left_text(std::size_t next, double elapsed_s) const {
        const double done = m_prefix[next] - m_prefix[m_first];
        if (next <= m_first || done <= 0 || elapsed_s <= 0) return "";
        const double left = elapsed_s / done * (m_prefix.back() - m_prefix[next]);
        char buf[64];
        const long s = static_cast<long>(left + 0.5);
        if (s >= 60) std::snprintf(buf, sizeof buf, ", about %ldm%02lds left", s / 60, s % 60);
        else std::snprintf(buf, sizeof buf, ", about %lds left", s);
        return buf;
    }

    static double weight(const selection_item& it) {
        double bytes = 0;
        for (const auto& spec : it.s->input_specs(it.c)) bytes += static_cast<double>(spec.numel()) * dtype_size(spec.type);
        const double variants = static_cast<double>(it.variants.size());
        return variants * ((it.c.timed ? 3.0 : 1.0) + bytes / (256.0 * 1024 * 1024));
    }
private:
    void set_weights(const std::vector<double>& w) {
        m_prefix.assign(w.size() + 1, 0.0);
        for (std::size_t i = 0; i < w.size(); ++i) m_prefix[i + 1] = m_prefix[i] + w[i];
    }
    std::size_t m_first;
    std::vector<double> m_prefix;
};

}  // namespace fusebench
