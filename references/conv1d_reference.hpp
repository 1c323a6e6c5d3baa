// fp64 references for the conv1d family. Layout [batch, channels, length], row-major.
//
// dense:     y[b, o, t] = gelu_erf(bias[o] + sum_{i, k < 3} w[o, i, k] x[b, i, t * stride + k - 1]),
//            kernel 3, padding 1 (x is 0 outside [0, L)), L_out = (L - 1) / stride + 1. The Whisper
//            encoder's convolutions (GELU erf: 0.5 z erfc(-z / sqrt 2)).
// depthwise: y[b, c, t] = silu(bias[c] + sum_{k < W} w[c, k] x[b, c, t - (W - 1) + k]), causal
//            (x is 0 before t = 0), W = 2, 3 or 4: Mamba's causal_conv1d.
// decode:    one new step against a rolling state of the last W - 1 inputs (oldest first):
//            y[b, c] = silu(bias[c] + sum_{k < W-1} w[c, k] state[b, c, k] + w[c, W-1] x[b, c]);
//            state_out[b, c] = (state[b, c, 1 .. W-2], x[b, c]).
#pragma once

#include <cstddef>
#include <vector>

namespace fusebench::references {

double gelu_erf(double z);
double silu(double z);

// The activations' largest slopes, rounded up (Lipschitz constants: |act(a) - act(b)| <= L |a - b|).
// gelu_erf'(z) = Phi(z) + z phi(z) peaks at z = sqrt 2: 1.128904 (its minimum, -0.1289 at -sqrt 2,
// is smaller in size); silu'(z) = s(z) (1 + z (1 - s(z))), s the logistic, peaks at z = 2.3994:
// 1.099839 (minimum -0.0998). They carry a pre-activation's error through to y.
inline constexpr double gelu_erf_lipschitz = 1.1290;
inline constexpr double silu_lipschitz = 1.0999;

std::size_t conv1d_out_length(std::size_t length, std::size_t stride);

// Batches [b0, b1) and output channels [o0, o1) of the dense convolution, written to y (the full
// [batch, cout, L_out] array): callers split the work over threads.
void conv1d_dense_reference(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                            std::size_t batch, std::size_t cin, std::size_t cout, std::size_t length, std::size_t stride,
                            std::vector<double>& y, std::size_t b0, std::size_t b1, std::size_t o0, std::size_t o1);

// Rows [r0, r1) of the batch * channels rows of the depthwise causal convolution.
void conv1d_depthwise_reference(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                                std::size_t channels, std::size_t length, std::size_t width, std::vector<double>& y,
                                std::size_t r0, std::size_t r1);

void conv1d_decode_reference(const std::vector<double>& x, const std::vector<double>& state, const std::vector<double>& w,
                             const std::vector<double>& bias, std::size_t batch, std::size_t channels, std::size_t width,
                             std::vector<double>& y, std::vector<double>& state_out);

// S, the sum of the absolute values of the terms of each pre-activation, bias included:
//   dense     S[b, o, t] = |bias[o]| + sum_{i, k < 3} |w[o, i, k]| |x[b, i, t * stride + k - 1]|,
//   depthwise S[b, c, t] = |bias[c]| + sum_{k < W} |w[c, k]| |x[b, c, t - (W - 1) + k]|,
//   decode    S[b, c]    = |bias[c]| + sum_{k < W-1} |w[c, k]| |state[b, c, k]| + |w[c, W-1]| |x[b, c]|,
// with padding and causal history contributing nothing. Any floating-point evaluation of the n-term
// pre-activation z, in any order, with or without FMA, errs by at most gamma_n S (Higham, Accuracy
// and Stability of Numerical Algorithms, 2nd ed., eq. 3.5 and section 3.1): the suite's fp32
// bound. Same arguments, layout and work split as the references above (y -> s); computed the same
// way (im2col + Eigen GEMM for dense) on the absolute values, in fp64.
void conv1d_dense_abs_sum(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                          std::size_t batch, std::size_t cin, std::size_t cout, std::size_t length, std::size_t stride,
                          std::vector<double>& s, std::size_t b0, std::size_t b1, std::size_t o0, std::size_t o1);
void conv1d_depthwise_abs_sum(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                              std::size_t channels, std::size_t length, std::size_t width, std::vector<double>& s,
                              std::size_t r0, std::size_t r1);
void conv1d_decode_abs_sum(const std::vector<double>& x, const std::vector<double>& state, const std::vector<double>& w,
                           const std::vector<double>& bias, std::size_t batch, std::size_t channels, std::size_t width,
                           std::vector<double>& s);

}  // namespace fusebench::references
