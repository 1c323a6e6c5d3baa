#include "references/conv1d_reference.hpp"

#include <Eigen/Core>

#include <cmath>

namespace fusebench::references {

double gelu_erf(double z) { return 0.5 * z * std::erfc(-z / std::sqrt(2.0)); }
double silu(double z) { return z / (1.0 + std::exp(-z)); }

std::size_t conv1d_out_length(std::size_t length, std::size_t stride) { return (length - 1) / stride + 1; }

namespace {

// One loop structure for each operation, two readings of it: the reference (ABS false: z, then the
// activation) and the sum of absolute terms (ABS true: |bias| + sum |w| |x|, no activation).
template <bool ABS>
double term(double v) {
    return ABS ? std::fabs(v) : v;
}

template <bool ABS>
void dense(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias, std::size_t cin,
           std::size_t cout, std::size_t length, std::size_t stride, std::vector<double>& y, std::size_t b0, std::size_t b1,
           std::size_t o0, std::size_t o1) {
    const std::size_t lout = conv1d_out_length(length, stride);
    using mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    // im2col: column t holds x[i, t * stride + k - 1] for (i, k), then one GEMM per batch.
    mat cols(cin * 3, lout);
    const Eigen::Map<const mat> wmap(w.data() + o0 * cin * 3, static_cast<Eigen::Index>(o1 - o0), static_cast<Eigen::Index>(cin * 3));
    mat wabs;
    if constexpr (ABS) wabs = wmap.cwiseAbs();
    for (std::size_t b = b0; b < b1; ++b) {
        for (std::size_t i = 0; i < cin; ++i) {
            const double* xr = x.data() + (b * cin + i) * length;
            for (std::size_t k = 0; k < 3; ++k) {
                for (std::size_t t = 0; t < lout; ++t) {
                    const long pos = static_cast<long>(t * stride + k) - 1;
                    cols(static_cast<Eigen::Index>(i * 3 + k), static_cast<Eigen::Index>(t)) =
                        pos >= 0 && pos < static_cast<long>(length) ? term<ABS>(xr[pos]) : 0.0;
                }
            }
        }
        mat z;
        if constexpr (ABS) z = wabs * cols;
        else z = wmap * cols;
        for (std::size_t o = o0; o < o1; ++o) {
            double* yr = y.data() + (b * cout + o) * lout;
            for (std::size_t t = 0; t < lout; ++t) {
                const double zt = term<ABS>(bias[o]) + z(static_cast<Eigen::Index>(o - o0), static_cast<Eigen::Index>(t));
                yr[t] = ABS ? zt : gelu_erf(zt);
            }
        }
    }
}

template <bool ABS>
void depthwise(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias, std::size_t channels,
               std::size_t length, std::size_t width, std::vector<double>& y, std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
        const std::size_t c = r % channels;
        const double* xr = x.data() + r * length;
        double* yr = y.data() + r * length;
        for (std::size_t t = 0; t < length; ++t) {
            double z = term<ABS>(bias[c]);
            for (std::size_t k = 0; k < width; ++k) {
                const long pos = static_cast<long>(t + k) - static_cast<long>(width - 1);
                if (pos >= 0) z += term<ABS>(w[c * width + k]) * term<ABS>(xr[pos]);
            }
            yr[t] = ABS ? z : silu(z);
        }
    }
}

// The decode step's pre-activation of row r = (b, c).
template <bool ABS>
double decode_z(const std::vector<double>& x, const std::vector<double>& state, const std::vector<double>& w,
                const std::vector<double>& bias, std::size_t channels, std::size_t width, std::size_t r) {
    const std::size_t hist = width - 1, c = r % channels;
    double z = term<ABS>(bias[c]) + term<ABS>(w[c * width + hist]) * term<ABS>(x[r]);
    for (std::size_t k = 0; k < hist; ++k) z += term<ABS>(w[c * width + k]) * term<ABS>(state[r * hist + k]);
    return z;
}

}  // namespace

void conv1d_dense_reference(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                            std::size_t batch, std::size_t cin, std::size_t cout, std::size_t length, std::size_t stride,
                            std::vector<double>& y, std::size_t b0, std::size_t b1, std::size_t o0, std::size_t o1) {
    (void)batch;
    dense<false>(x, w, bias, cin, cout, length, stride, y, b0, b1, o0, o1);
}

void conv1d_dense_abs_sum(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                          std::size_t batch, std::size_t cin, std::size_t cout, std::size_t length, std::size_t stride,
                          std::vector<double>& s, std::size_t b0, std::size_t b1, std::size_t o0, std::size_t o1) {
    (void)batch;
    dense<true>(x, w, bias, cin, cout, length, stride, s, b0, b1, o0, o1);
}

void conv1d_depthwise_reference(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                                std::size_t channels, std::size_t length, std::size_t width, std::vector<double>& y,
                                std::size_t r0, std::size_t r1) {
    depthwise<false>(x, w, bias, channels, length, width, y, r0, r1);
}

void conv1d_depthwise_abs_sum(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                              std::size_t channels, std::size_t length, std::size_t width, std::vector<double>& s,
                              std::size_t r0, std::size_t r1) {
    depthwise<true>(x, w, bias, channels, length, width, s, r0, r1);
}

void conv1d_decode_reference(const std::vector<double>& x, const std::vector<double>& state, const std::vector<double>& w,
                             const std::vector<double>& bias, std::size_t batch, std::size_t channels, std::size_t width,
                             std::vector<double>& y, std::vector<double>& state_out) {
    const std::size_t hist = width - 1;
    for (std::size_t r = 0; r < batch * channels; ++r) {
        y[r] = silu(decode_z<false>(x, state, w, bias, channels, width, r));
        for (std::size_t k = 0; k + 1 < hist; ++k) state_out[r * hist + k] = state[r * hist + k + 1];
        if (hist > 0) state_out[r * hist + hist - 1] = x[r];
    }
}

void conv1d_decode_abs_sum(const std::vector<double>& x, const std::vector<double>& state, const std::vector<double>& w,
                           const std::vector<double>& bias, std::size_t batch, std::size_t channels, std::size_t width,
                           std::vector<double>& s) {
    for (std::size_t r = 0; r < batch * channels; ++r) s[r] = decode_z<true>(x, state, w, bias, channels, width, r);
}

}  // namespace fusebench::references
