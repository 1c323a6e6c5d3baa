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

}  // namespace fusebench::references
