// fp64 references for gated linear units: y = act(gate) * up, element-wise.
#pragma once

#include <Eigen/Core>

#include <functional>

namespace fusebench::references {

enum class glu_activation { silu, gelu_tanh, gelu_erf };

// act(x) in fp64 using the same stable forms as the kernels document:
//   silu(x)      = x / (1 + exp(-x))
//   gelu_tanh(x) = x / (1 + exp(-2 u)), u = sqrt(2/pi) (x + 0.044715 x^3)   [= 0.5 x (1 + tanh u)]
//   gelu_erf(x)  = 0.5 x erfc(-x / sqrt(2))                                  [= 0.5 x (1 + erf(x/sqrt2))]
// IEEE special values follow from these formulas (silu(-inf) = NaN, silu(+inf) = +inf).
double glu_activation_reference(glu_activation act, double x);

// y = round_intermediate(act(gate)) * up, element-wise; all arrays have the same size.
// round_intermediate models the precision the operation keeps act(gate) in (the suite passes a
// rounding to fp32: a value below fp32's range is 0 there, so 0 * inf = NaN as on the GPU);
// the default keeps it exact.
void glu_reference(glu_activation act, const Eigen::Ref<const Eigen::ArrayXd>& gate,
                   const Eigen::Ref<const Eigen::ArrayXd>& up, Eigen::Ref<Eigen::ArrayXd> y,
                   const std::function<double(double)>& round_intermediate = {});

}  // namespace fusebench::references
