// TF32 rounding: the host model of what the tensor cores see of an fp32 operand in the TF32
// variants (kernels/conv1d/implicit_gemm_tf32.cu and the naive_tf32 baseline round with
// cvt.rna.tf32.f32 before multiplying).
//
// TF32 keeps fp32's sign and 8 exponent bits and the top 10 of its 23 mantissa bits. Rounding to
// nearest, ties away from zero (PTX .rna), on the bits: add half of the dropped part (bit 12) to
// the magnitude and clear the 13 low bits; a carry out of the mantissa moves to the next binade,
// and out of the largest finite binade to infinity. Infinities and NaN pass through unchanged.
// The result is an fp32 value whose 13 low mantissa bits are zero, so that a product of two of them
// (11 x 11 significant bits) is exact in fp32 and in fp64.
#pragma once

#include <cstdint>
#include <cstring>

namespace fusebench::references {

inline float round_tf32_rna(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x1000u;
        u &= 0xffffe000u;
    }
    float r;
    std::memcpy(&r, &u, sizeof r);
    return r;
}

// The unit roundoff of that rounding: |round_tf32_rna(x) - x| <= 2^-11 |x| for every finite x
// whose rounding stays finite (10 stored mantissa bits, round to nearest).
inline constexpr double tf32_unit_roundoff = 0x1p-11;

}  // namespace fusebench::references
