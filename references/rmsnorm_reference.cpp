#include "references/rmsnorm_reference.hpp"

#include <Eigen/Core>

#include <stdexcept>
#include <string>

namespace fusebench::references {

void residual_rmsnorm_reference(std::span<const double> x, std::span<const double> residual,
                                std::span<const double> gamma, std::size_t hidden, double eps,
                                const std::function<double(double)>& round_to_storage,
                                std::span<double> y, std::span<double> residual_out) {
    if (hidden == 0 || gamma.size() != hidden || x.size() % hidden != 0 ||
        residual.size() != x.size() || y.size() != x.size() || residual_out.size() != x.size()) {
        throw std::invalid_argument(
            "residual_rmsnorm_reference: sizes do not fit (hidden " + std::to_string(hidden) + ", gamma " +
            std::to_string(gamma.size()) + ", x " + std::to_string(x.size()) + ", residual " +
            std::to_string(residual.size()) + ", y " + std::to_string(y.size()) + ", residual_out " +
            std::to_string(residual_out.size()) + ")");
    }
    if (!round_to_storage) throw std::invalid_argument("residual_rmsnorm_reference: no rounding function");
    using matrix = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const auto rows = static_cast<Eigen::Index>(x.size() / hidden);
    const auto cols = static_cast<Eigen::Index>(hidden);
    const Eigen::Map<const matrix> xm(x.data(), rows, cols);
    const Eigen::Map<const matrix> rm(residual.data(), rows, cols);
    const Eigen::Map<const Eigen::Array<double, 1, Eigen::Dynamic>> g(gamma.data(), cols);
    Eigen::Map<matrix> out_r(residual_out.data(), rows, cols);
    Eigen::Map<matrix> out_y(y.data(), rows, cols);

    out_r = (xm + rm).unaryExpr([&](double v) { return round_to_storage(v); });
    // inf in a row gives ms = inf, scale 0, y = 0 for finite elements and NaN (inf * 0) for the
    // infinite ones: the same IEEE outcome as an fp32 kernel using rsqrt.
    const Eigen::ArrayXd scale =
        1.0 / (out_r.square().rowwise().sum() / static_cast<double>(hidden) + eps).sqrt();
    out_y = (out_r.colwise() * scale).rowwise() * g;
}

}  // namespace fusebench::references
