#include "harness/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace fusebench {

std::size_t dtype_size(dtype t) noexcept {
    switch (t) {
        case dtype::f32: return 4;
        case dtype::f16: return 2;
        case dtype::bf16: return 2;
        case dtype::i32: return 4;
        case dtype::e4m3: return 1;
    }
    return 0;
}

std::string_view dtype_name(dtype t) noexcept {
    switch (t) {
        case dtype::f32: return "fp32";
        case dtype::f16: return "fp16";
        case dtype::bf16: return "bf16";
        case dtype::i32: return "int32";
        case dtype::e4m3: return "fp8_e4m3";
    }
    return "?";
}

std::optional<dtype> parse_dtype(std::string_view s) noexcept {
    if (s == "fp32" || s == "f32" || s == "float32" || s == "float") return dtype::f32;
    if (s == "fp16" || s == "f16" || s == "float16" || s == "half") return dtype::f16;
    if (s == "bf16" || s == "bfloat16") return dtype::bf16;
    if (s == "int32" || s == "i32") return dtype::i32;
    if (s == "fp8_e4m3" || s == "e4m3" || s == "float8_e4m3fn") return dtype::e4m3;
    return std::nullopt;
}

bool is_floating(dtype t) noexcept { return t != dtype::i32; }

namespace {

struct format_desc {
    int mantissa_bits;  // stored fraction bits
    int min_exp;        // exponent of the smallest normal (value 2^min_exp)
    int max_exp;        // exponent of the largest binade
    double max_finite;  // (2 - 2^-mantissa_bits) 2^max_exp, before any saturation rule of the type
};

format_desc describe(dtype t) {
    switch (t) {
        case dtype::f16: return {10, -14, 15, 65504.0};
        case dtype::bf16: return {7, -126, 127, 0x1.FEp127};
        case dtype::e4m3: return {3, -6, 8, 480.0};
        default: return {23, -126, 127, 0x1.FFFFFEp127};
    }
}

// One correct rounding of v to a binary format with the given fraction width and exponent range,
// by scaling (slow, obviously correct: the fallback and the tests' yardstick).
double round_binary_by_scaling(double v, format_desc f) {
    if (!std::isfinite(v) || v == 0.0) return v;
    const double a = std::fabs(v);
    int e;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): leading bit has exponent e-1
    int lead = e - 1;
    if (lead < f.min_exp) lead = f.min_exp;  // subnormal: fixed grain
    const double grain = std::ldexp(1.0, lead - f.mantissa_bits);
    // a / grain is exact (power-of-two scale); nearbyint rounds half to even in the default mode.
    double r = std::nearbyint(a / grain) * grain;
    const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -f.mantissa_bits), f.max_exp);
    if (r > max_finite) r = std::numeric_limits<double>::infinity();
    return std::copysign(r, v);
}

// The same rounding on the bits of v where the result is a normal number of the format: round
// half to even at the format's last fraction bit (a carry into the exponent is the correct next
// binade); subnormal results and non-finite inputs take the scaling path.
double round_binary(double v, format_desc f) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
    const int biased = static_cast<int>((bits >> 52) & 0x7FF);
    if (biased == 0 || biased == 0x7FF || biased - 1023 < f.min_exp) return round_binary_by_scaling(v, f);
    const int drop = 52 - f.mantissa_bits;
    const std::uint64_t sign = bits & (1ull << 63), mag = bits & ~(1ull << 63);
    const std::uint64_t low = (1ull << drop) - 1;
    const std::uint64_t rounded = (mag + (low >> 1) + ((mag >> drop) & 1)) & ~low;
    double r = std::bit_cast<double>(rounded);
    const double max_finite = f.max_finite;
    if (r > max_finite) r = std::numeric_limits<double>::infinity();
    return std::bit_cast<double>(std::bit_cast<std::uint64_t>(r) | sign);
}

}  // namespace

double round_to_dtype_by_scaling(double v, dtype t) noexcept {
    if (t == dtype::f16 || t == dtype::bf16) return round_binary_by_scaling(v, describe(t));
    if (t == dtype::e4m3) {
        if (std::isnan(v)) return v;
        if (std::isinf(v)) return std::copysign(448.0, v);
        const double r = round_binary_by_scaling(v, describe(t));
        return std::fabs(r) > 448.0 ? std::copysign(448.0, v) : r;
    }
    return round_to_dtype(v, t);
}

double round_to_dtype(double v, dtype t) noexcept {
    switch (t) {
        case dtype::f32: return static_cast<double>(static_cast<float>(v));  // one IEEE rounding
        case dtype::f16:
        case dtype::bf16: return round_binary(v, describe(t));
        case dtype::i32: {
            if (std::isnan(v)) return 0.0;
            double r = std::nearbyint(v);
            if (r > 2147483647.0) r = 2147483647.0;
            if (r < -2147483648.0) r = -2147483648.0;
            return r;
        }
        case dtype::e4m3: {
            if (std::isnan(v)) return v;
            if (std::isinf(v)) return std::copysign(448.0, v);
            const double r = round_binary(v, describe(t));
            return std::fabs(r) > 448.0 ? std::copysign(448.0, v) : r;
        }
    }
    return v;
}

std::uint16_t float_to_bf16_bits(float f) noexcept {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // keep sign, quiet
    const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float bf16_bits_to_float(std::uint16_t b) noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

std::uint16_t float_to_half_bits_by_scaling(float f) noexcept {
    const double r = round_binary_by_scaling(static_cast<double>(f), describe(dtype::f16));
    const std::uint16_t sign = std::signbit(f) ? 0x8000u : 0u;
    if (std::isnan(f)) return static_cast<std::uint16_t>(sign | 0x7E00u);
    if (std::isinf(r)) return static_cast<std::uint16_t>(sign | 0x7C00u);
    const double a = std::fabs(r);
    if (a == 0.0) return sign;
    int e;
    const double m = std::frexp(a, &e);  // a = m * 2^e
    const int lead = e - 1;
    if (lead < -14) {  // subnormal: a = frac * 2^-24
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::ldexp(a, 24)));
    }
    const auto frac = static_cast<std::uint16_t>(std::ldexp(m * 2.0 - 1.0, 10));
    return static_cast<std::uint16_t>(sign | ((lead + 15) << 10) | frac);
}

float half_bits_to_float_by_scaling(std::uint16_t h) noexcept {
    const int sign = (h & 0x8000u) ? -1 : 1;
    const int exp = (h >> 10) & 0x1F;
    const int frac = h & 0x3FF;
    if (exp == 0x1F) {
        return frac ? std::numeric_limits<float>::quiet_NaN()
                    : sign * std::numeric_limits<float>::infinity();
    }
    if (exp == 0) return static_cast<float>(sign * std::ldexp(static_cast<double>(frac), -24));
    return static_cast<float>(sign * std::ldexp(1.0 + frac / 1024.0, exp - 15));
}

// Bit-level conversions (round half to even), equal to the scaling versions above for every
// input (tests/harness/dtype.test.cpp checks every half and a spread of floats).
std::uint16_t float_to_half_bits(float f) noexcept {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);  // NaN
    if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520: rounds to inf
    if (a < 0x38800000u) {
        // Below 2^-14: a subnormal half (or zero, or 0x400 when it rounds up to the smallest
        // normal); |f| * 2^24 is exact in float and nearbyint rounds half to even.
        const float scaled = std::bit_cast<float>(a) * 0x1p24f;
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
    }
    const std::uint32_t rounded = a + 0xFFFu + ((a >> 13) & 1u);  // to 10 fraction bits, carry into the exponent
    return static_cast<std::uint16_t>(sign | ((rounded >> 13) - ((127u - 15u) << 10)));
}

float half_bits_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
    if (exp == 0x1F) {
        return frac ? std::numeric_limits<float>::quiet_NaN() : std::bit_cast<float>(sign | 0x7F800000u);
    }
    if (exp == 0) {
        const float v = static_cast<float>(frac) * 0x1p-24f;  // exact
        return sign ? -v : v;
    }
    return std::bit_cast<float>(sign | ((exp + 127u - 15u) << 23) | (frac << 13));
}

std::uint8_t double_to_e4m3_bits(double v) noexcept {
    if (std::isnan(v)) return 0x7F;
    const double r = round_to_dtype(v, dtype::e4m3);
    const std::uint8_t sign = std::signbit(r) ? 0x80 : 0x00;
    const double a = std::fabs(r);
    if (a == 0.0) return sign;
    int e;
    const double m = std::frexp(a, &e);  // a = m * 2^e
    const int lead = e - 1;
    if (lead < -6) return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(std::ldexp(a, 9)));  // subnormal
    const auto frac = static_cast<std::uint8_t>(std::ldexp(m * 2.0 - 1.0, 3));
    return static_cast<std::uint8_t>(sign | ((lead + 7) << 3) | frac);
}

double e4m3_bits_to_double(std::uint8_t b) noexcept {
    const double sign = (b & 0x80) ? -1.0 : 1.0;
    const int exp = (b >> 3) & 0xF;
    const int frac = b & 0x7;
    if (exp == 0xF && frac == 0x7) return std::numeric_limits<double>::quiet_NaN();
    if (exp == 0) return sign * std::ldexp(static_cast<double>(frac), -9);
    return sign * std::ldexp(1.0 + frac / 8.0, exp - 7);
}

double load_element(dtype t, const void* base, std::size_t i) noexcept {
    const auto* p = static_cast<const unsigned char*>(base);
    switch (t) {
        case dtype::f32: {
            float f;
            std::memcpy(&f, p + 4 * i, 4);
            return f;
        }
        case dtype::f16: {
            std::uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            return half_bits_to_float(h);
        }
        case dtype::bf16: {
            std::uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            return bf16_bits_to_float(h);
        }
        case dtype::i32: {
            std::int32_t v;
            std::memcpy(&v, p + 4 * i, 4);
            return v;
        }
        case dtype::e4m3: return e4m3_bits_to_double(p[i]);
    }
    return 0.0;
}

void store_element(dtype t, void* base, std::size_t i, double v) noexcept {
    auto* p = static_cast<unsigned char*>(base);
    const double r = round_to_dtype(v, t);
    switch (t) {
        case dtype::f32: {
            const auto f = static_cast<float>(r);
            std::memcpy(p + 4 * i, &f, 4);
            break;
        }
        case dtype::f16: {
            const std::uint16_t h = float_to_half_bits(static_cast<float>(r));  // r exact in f16
            std::memcpy(p + 2 * i, &h, 2);
            break;
        }
        case dtype::bf16: {
            const std::uint16_t h = float_to_bf16_bits(static_cast<float>(r));  // r exact in bf16
            std::memcpy(p + 2 * i, &h, 2);
            break;
        }
        case dtype::i32: {
            const auto v32 = static_cast<std::int32_t>(r);
            std::memcpy(p + 4 * i, &v32, 4);
            break;
        }
        case dtype::e4m3: p[i] = double_to_e4m3_bits(r); break;
    }
}

namespace {
// Maps a float's bit pattern to a monotonic integer line: adjacent floats are 1 apart, +0 == -0.
std::int64_t ordered(double v, dtype t) {
    switch (t) {
        case dtype::f32: {
            const auto u = std::bit_cast<std::int32_t>(static_cast<float>(v));
            return u < 0 ? -static_cast<std::int64_t>(u & 0x7FFFFFFF) : u;
        }
        case dtype::f16:
        case dtype::bf16: {
            const std::uint16_t b = t == dtype::f16 ? float_to_half_bits(static_cast<float>(v))
                                                    : float_to_bf16_bits(static_cast<float>(v));
            const std::int64_t mag = b & 0x7FFF;
            return (b & 0x8000) ? -mag : mag;
        }
        case dtype::i32: return static_cast<std::int64_t>(v);
        case dtype::e4m3: {
            const std::uint8_t b = double_to_e4m3_bits(v);
            const std::int64_t mag = b & 0x7F;
            return (b & 0x80) ? -mag : mag;
        }
    }
    return 0;
}
}  // namespace

std::uint64_t ulp_distance(dtype t, double a, double b) noexcept {
    if (std::isnan(a) || std::isnan(b)) {
        return (std::isnan(a) && std::isnan(b)) ? 0 : std::numeric_limits<std::uint64_t>::max();
    }
    if (std::isinf(a) || std::isinf(b)) {
        return a == b ? 0 : std::numeric_limits<std::uint64_t>::max();
    }
    const std::int64_t d = ordered(a, t) - ordered(b, t);
    return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

double dtype_min_subnormal(dtype t) noexcept {
    switch (t) {
        case dtype::f32: return std::ldexp(1.0, -149);
        case dtype::f16: return std::ldexp(1.0, -24);
        case dtype::bf16: return std::ldexp(1.0, -133);
        case dtype::i32: return 0.0;
        case dtype::e4m3: return std::ldexp(1.0, -9);
    }
    return 0.0;
}

double dtype_unit_roundoff(dtype t) noexcept {
    switch (t) {
        case dtype::f32: return std::ldexp(1.0, -24);
        case dtype::f16: return std::ldexp(1.0, -11);
        case dtype::bf16: return std::ldexp(1.0, -8);
        case dtype::i32: return 0.0;
        case dtype::e4m3: return std::ldexp(1.0, -4);
    }
    return 0.0;
}

double dtype_max_finite(dtype t) noexcept {
    switch (t) {
        case dtype::f32: return std::numeric_limits<float>::max();
        case dtype::f16: return 65504.0;
        case dtype::bf16: return std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
        case dtype::i32: return 2147483647.0;
        case dtype::e4m3: return 448.0;
    }
    return 0.0;
}

}  // namespace fusebench
