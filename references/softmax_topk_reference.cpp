#include "references/softmax_topk_reference.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusebench {

bool softmax_row_is_finite(std::span<const double> logits) {
    const Eigen::Map<const Eigen::ArrayXd> x(logits.data(), static_cast<Eigen::Index>(logits.size()));
    constexpr double inf = std::numeric_limits<double>::infinity();
    return x.size() > 0 && !x.isNaN().any() && !(x == inf).any() && (x > -inf).any();
}

void softmax_topk_row_reference(std::span<const double> logits, std::span<double> probs,
                                std::span<std::int64_t> indices) {
    const std::size_t V = logits.size(), K = probs.size();
    if (indices.size() != K) throw std::invalid_argument("softmax_topk_row_reference: probs and indices sizes differ");
    if (K < 1) throw std::invalid_argument("softmax_topk_row_reference: K < 1");
    if (K > V) {
        throw std::invalid_argument("softmax_topk_row_reference: K > V (K " + std::to_string(K) +
                                    ", V " + std::to_string(V) + ")");
    }
    if (!softmax_row_is_finite(logits)) {
        std::fill(probs.begin(), probs.end(), std::numeric_limits<double>::quiet_NaN());
        std::iota(indices.begin(), indices.end(), std::int64_t{0});
        return;
    }
    const Eigen::Map<const Eigen::ArrayXd> x(logits.data(), static_cast<Eigen::Index>(V));
    const double m = x.maxCoeff();
    const double s = (x - m).exp().sum();

    // Larger logit first, lower index on ties (-0 == +0 compare equal, as they must).
    std::vector<std::int64_t> order(V);
    std::iota(order.begin(), order.end(), std::int64_t{0});
    const auto before = [&](std::int64_t a, std::int64_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    };
    const auto kth = order.begin() + static_cast<std::ptrdiff_t>(K);
    if (K < V) std::nth_element(order.begin(), kth - 1, order.end(), before);
    std::sort(order.begin(), kth, before);
    for (std::size_t k = 0; k < K; ++k) {
        indices[k] = order[k];
        probs[k] = std::exp(logits[order[k]] - m) / s;
    }
}

}  // namespace fusebench
