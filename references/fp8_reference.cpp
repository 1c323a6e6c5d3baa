#include "references/fp8_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusebench::references {

namespace {
constexpr double e4m3_max = 448.0;
constexpr int e4m3_bias = 7;
constexpr double e4m3_min_normal = 0.015625;  // 2^-6
}  // namespace

std::uint8_t e4m3_from_float(float xf) {
    if (std::isnan(xf)) return 0x7F;
    const std::uint8_t sign = std::signbit(xf) ? 0x80 : 0x00;
    double a = std::fabs(static_cast<double>(xf));
    if (std::isinf(a)) return sign | 0x7E;
    if (a == 0.0) return sign;
    // Quantum of the binade a lies in (the subnormal step below 2^-6), then round half to even:
    // a / quantum is exact (a power-of-two scaling) and std::nearbyint rounds ties to even.
    int e = 0;
    (void)std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1): binade exponent e - 1
    const int binade = std::max(e - 1, -6);
    const double quantum = std::ldexp(1.0, binade - 3);
    a = std::nearbyint(a / quantum) * quantum;
    if (a > e4m3_max) a = e4m3_max;
    if (a == 0.0) return sign;
    if (a < e4m3_min_normal) return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(a / std::ldexp(1.0, -9)));
    (void)std::frexp(a, &e);
    const int exp_field = e - 1 + e4m3_bias;
    const int mantissa = static_cast<int>((a / std::ldexp(1.0, e - 1) - 1.0) * 8.0);
    return static_cast<std::uint8_t>(sign | (exp_field << 3) | mantissa);
}

double e4m3_to_double(std::uint8_t code) {
    const double sign = (code & 0x80) ? -1.0 : 1.0;
    const int exp_field = (code >> 3) & 0xF;
    const int mantissa = code & 0x7;
    if (exp_field == 0xF && mantissa == 0x7) return std::numeric_limits<double>::quiet_NaN();
    if (exp_field == 0) return sign * std::ldexp(static_cast<double>(mantissa), -9);
    return sign * std::ldexp(1.0 + mantissa / 8.0, exp_field - e4m3_bias);
}

float e4m3_block_scale(const float* x, std::size_t n, std::size_t stride) {
    float amax = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
        const float v = std::fabs(x[i * stride]);
        if (std::isfinite(v)) amax = std::max(amax, v);
    }
    return amax > 0.0f ? amax / 448.0f : 1.0f;
}

void quantize_e4m3_rows(const std::vector<float>& x, std::size_t rows, std::size_t cols, std::size_t block,
                        std::vector<std::uint8_t>& codes, std::vector<float>& scales) {
    const std::size_t blocks = (cols + block - 1) / block;
    codes.assign(rows * cols, 0);
    scales.assign(rows * blocks, 0.0f);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t b = 0; b < blocks; ++b) {
            const std::size_t c0 = b * block, n = std::min(block, cols - c0);
            const float* p = x.data() + r * cols + c0;
            const float scale = e4m3_block_scale(p, n);
            scales[r * blocks + b] = scale;
            for (std::size_t i = 0; i < n; ++i) codes[r * cols + c0 + i] = e4m3_from_float(p[i] / scale);
        }
    }
}

void quantize_e4m3_tiles(const std::vector<float>& x, std::size_t rows, std::size_t cols, std::size_t block,
                         std::vector<std::uint8_t>& codes, std::vector<float>& scales) {
    const std::size_t br = (rows + block - 1) / block, bc = (cols + block - 1) / block;
    codes.assign(rows * cols, 0);
    scales.assign(br * bc, 0.0f);
    for (std::size_t i = 0; i < br; ++i) {
        for (std::size_t j = 0; j < bc; ++j) {
            const std::size_t r0 = i * block, c0 = j * block;
            const std::size_t nr = std::min(block, rows - r0), nc = std::min(block, cols - c0);
            float amax = 0.0f;
            for (std::size_t r = 0; r < nr; ++r) {
                for (std::size_t c = 0; c < nc; ++c) {
                    const float v = std::fabs(x[(r0 + r) * cols + c0 + c]);
                    if (std::isfinite(v)) amax = std::max(amax, v);
                }
            }
            const float scale = amax > 0.0f ? amax / 448.0f : 1.0f;
            scales[i * bc + j] = scale;
            for (std::size_t r = 0; r < nr; ++r) {
                for (std::size_t c = 0; c < nc; ++c) {
                    const std::size_t k = (r0 + r) * cols + c0 + c;
                    codes[k] = e4m3_from_float(x[k] / scale);
                }
            }
        }
    }
}

}  // namespace fusebench::references
