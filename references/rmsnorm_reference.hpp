// fp64 reference of fused residual-add + RMSNorm over rows of length `hidden`:
//   residual_out = round_to_storage(x + residual)
//   y            = residual_out / sqrt(mean(residual_out^2) + eps) * gamma
// The normalization sees the rounded residual_out, exactly as a kernel that stores residual_out in
// its storage dtype and normalizes what it stored. y is returned unrounded (the comparison rounds).
#pragma once

#include <cstddef>
#include <functional>
#include <span>

namespace fusebench::references {

// x, residual, residual_out, y: rows * hidden values (row-major); gamma: hidden values. rows is
// x.size() / hidden. Throws std::invalid_argument when the sizes do not fit together. The output
// spans may not overlap the inputs.
void residual_rmsnorm_reference(std::span<const double> x, std::span<const double> residual,
                                std::span<const double> gamma, std::size_t hidden, double eps,
                                const std::function<double(double)>& round_to_storage,
                                std::span<double> y, std::span<double> residual_out);

}  // namespace fusebench::references
