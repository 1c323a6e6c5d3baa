// Element types and exact host-side conversions. The host never relies on cuda_fp16/cuda_bf16
// for rounding: references and tolerance math must round exactly the way IEEE says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fusebench {

// e4m3: OCP FP8 E4M3 (bias 7, 3 mantissa bits, no infinities, S.1111.111 NaN, largest finite
// 448), as the Hopper tensor cores read it. Stores saturate: values past 448 and +-inf become
// +-448 (as cvt.rn.satfinite does); NaN stays NaN (0x7F).
enum class dtype : std::uint8_t { f32, f16, bf16, i32, e4m3 };

std::size_t dtype_size(dtype t) noexcept;                // [bytes]
std::string_view dtype_name(dtype t) noexcept;          // "fp32", "fp16", "bf16", "int32", "fp8_e4m3"
std::optional<dtype> parse_dtype(std::string_view s) noexcept;  // accepts fp32/f32/float32, ..., fp8_e4m3/e4m3
bool is_floating(dtype t) noexcept;

// Round-to-nearest-even conversions; NaN stays NaN (quiet), overflow goes to +-inf.
std::uint16_t float_to_bf16_bits(float f) noexcept;
float bf16_bits_to_float(std::uint16_t b) noexcept;
std::uint16_t float_to_half_bits(float f) noexcept;
float half_bits_to_float(std::uint16_t h) noexcept;
// The same conversions computed through round_to_dtype_by_scaling and ldexp (slow; the tests'
// yardstick for the bit-level versions above).
std::uint16_t float_to_half_bits_by_scaling(float f) noexcept;
float half_bits_to_float_by_scaling(std::uint16_t h) noexcept;
std::uint8_t double_to_e4m3_bits(double v) noexcept;  // rounds (nearest even) and saturates
double e4m3_bits_to_double(std::uint8_t b) noexcept;

// Correctly rounds a double to the nearest value representable in `t` (one rounding, no double
// rounding through float), returned as a double. For i32: round-half-even, saturating.
double round_to_dtype(double v, dtype t) noexcept;
// The same rounding computed by power-of-two scaling and nearbyint (slow; the yardstick the
// tests hold round_to_dtype's bit-level path to).
double round_to_dtype_by_scaling(double v, dtype t) noexcept;

// Element i of a buffer of type t, widened to double (exact for every supported type).
double load_element(dtype t, const void* base, std::size_t i) noexcept;
// Stores v rounded (round_to_dtype) into element i.
void store_element(dtype t, void* base, std::size_t i, double v) noexcept;

// Distance in units in the last place between a and b in format t (both must be representable
// in t, e.g. results of round_to_dtype). Infinite/NaN mismatches give UINT64_MAX; +0 and -0 are 0
// apart.
std::uint64_t ulp_distance(dtype t, double a, double b) noexcept;

// Smallest positive subnormal of t: the absolute rounding grain near zero. 0 for i32.
double dtype_min_subnormal(dtype t) noexcept;
// Unit roundoff of t's normal range: half the spacing relative to the value, 2^-p for p significand
// bits (2^-24 fp32, 2^-11 fp16, 2^-8 bf16, 2^-4 e4m3); 0 for int32 (exact).
double dtype_unit_roundoff(dtype t) noexcept;
// Largest finite value of t.
double dtype_max_finite(dtype t) noexcept;

}  // namespace fusebench
