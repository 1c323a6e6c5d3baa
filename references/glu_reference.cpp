#include "references/glu_reference.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace fusebench::references {

double glu_activation_reference(glu_activation act, double x) {
    switch (act) {
        case glu_activation::silu: return x / (1.0 + std::exp(-x));
        case glu_activation::gelu_tanh: {
            const double u = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
            return x / (1.0 + std::exp(-2.0 * u));
        }
        case glu_activation::gelu_erf: return 0.5 * x * std::erfc(-x / std::numbers::sqrt2);
    }
    return x;
}

void glu_reference(glu_activation act, const Eigen::Ref<const Eigen::ArrayXd>& gate,
                   const Eigen::Ref<const Eigen::ArrayXd>& up, Eigen::Ref<Eigen::ArrayXd> y,
                   const std::function<double(double)>& round_intermediate) {
    if (gate.size() != up.size() || gate.size() != y.size()) {
        throw std::invalid_argument("glu_reference: gate, up and y sizes differ");
    }
    y = gate.unaryExpr([&](double g) {
        const double a = glu_activation_reference(act, g);
        return round_intermediate ? round_intermediate(a) : a;
    }) * up;
}

}  // namespace fusebench::references
