// TF32 rounding (references/tf32_reference.hpp): bit for bit against an independent model of round
// to nearest, ties away, into 10 mantissa bits (fp64 arithmetic on the value, not on its bits), over
// ties, values just either side of them, carries into the next binade and to infinity, subnormals,
// zeros, infinities, NaN and random bit patterns. The device rounding (cvt.rna.tf32.f32) is checked
// against this model in tests/kernels/tf32_round.test.cpp.
#include "references/tf32_reference.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace {

using fusebench::references::round_tf32_rna;

std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float from_bits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// The model: the quantum of a TF32 value at x's binade is 2^(e - 10), e = max(floor(log2 |x|),
// -126) (fp32 subnormals share the smallest normal binade's quantum); |x| / quantum is exact in
// fp64, rounded half away from zero, scaled back; beyond the largest finite float it is infinity.
float model_rna(float x) {
    if (!std::isfinite(x)) return x;
    if (x == 0) return x;
    const double a = std::fabs(static_cast<double>(x));
    const int e = std::max(std::ilogb(a), -126);
    const double quantum = std::ldexp(1.0, e - 10);
    const double r = std::floor(a / quantum + 0.5) * quantum;  // a / quantum is exact; + 0.5 too (< 2^25)
    const double signed_r = std::signbit(x) ? -r : r;
    if (std::fabs(signed_r) > static_cast<double>(std::numeric_limits<float>::max()))
        return std::signbit(x) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    return static_cast<float>(signed_r);
}

void check_bits(std::uint32_t u) {
    const float x = from_bits(u);
    const float got = round_tf32_rna(x), want = model_rna(x);
    CAPTURE(u, x, got, want);
    CHECK(bits_of(got) == bits_of(want));
    CHECK((bits_of(got) & 0x1fffu) == 0);
}

}  // namespace

TEST_CASE("round_tf32_rna is round to nearest, ties away, into 10 mantissa bits, bit for bit", "[references][tf32]") {
    SECTION("ties, either side of them, carries and the ends of the range") {
        for (std::uint32_t sign : {0u, 0x80000000u}) {
            for (std::uint32_t exp : {0u, 1u, 2u, 100u, 126u, 127u, 128u, 200u, 253u, 254u}) {
                for (std::uint32_t mant_hi : {0u, 1u, 0x155u, 0x3feu, 0x3ffu}) {
                    for (std::uint32_t low : {0x0000u, 0x0001u, 0x0fffu, 0x1000u, 0x1001u, 0x1fffu}) {
                        check_bits(sign | (exp << 23) | (mant_hi << 13) | low);
                    }
                }
            }
        }
        // Exact ties round away from zero: 1 + 2^-11 -> 1 + 2^-10; -(1 + 2^-11) -> -(1 + 2^-10).
        CHECK(round_tf32_rna(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);
        CHECK(round_tf32_rna(-(1.0f + 0x1p-11f)) == -(1.0f + 0x1p-10f));
        // The largest finite float rounds to infinity; the largest TF32 value stays.
        CHECK(std::isinf(round_tf32_rna(std::numeric_limits<float>::max())));
        CHECK(round_tf32_rna(from_bits(0x7f7fe000u)) == from_bits(0x7f7fe000u));
    }
    SECTION("zeros, infinities and NaN pass through") {
        CHECK(bits_of(round_tf32_rna(0.0f)) == 0u);
        CHECK(bits_of(round_tf32_rna(-0.0f)) == 0x80000000u);
        CHECK(round_tf32_rna(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
        CHECK(round_tf32_rna(-std::numeric_limits<float>::infinity()) == -std::numeric_limits<float>::infinity());
        CHECK(std::isnan(round_tf32_rna(std::numeric_limits<float>::quiet_NaN())));
    }
    SECTION("random bit patterns, and N(0, 1) values within 2^-11 relative") {
        std::mt19937 g(20261126);
        for (int i = 0; i < 200000; ++i) {
            const std::uint32_t u = g();
            if (((u >> 23) & 0xffu) == 0xffu) continue;  // inf / NaN: above
            check_bits(u);
        }
        std::normal_distribution<float> nd(0.0f, 1.0f);
        for (int i = 0; i < 10000; ++i) {
            const float x = nd(g);
            CHECK(std::fabs(static_cast<double>(round_tf32_rna(x)) - x) <= fusebench::references::tf32_unit_roundoff * std::fabs(x));
        }
    }
}
