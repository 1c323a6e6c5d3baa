#include "harness/dtype.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

using namespace fusebench;
using Catch::Matchers::WithinULP;

TEST_CASE("bf16 rounds to nearest even", "[dtype]") {
    CHECK(bf16_bits_to_float(float_to_bf16_bits(1.0f)) == 1.0f);
    // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
    CHECK(bf16_bits_to_float(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8))) == 1.0f);
    // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
    CHECK(bf16_bits_to_float(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8))) == 1.0f + std::ldexp(1.0f, -6));
    CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
    CHECK(std::isinf(bf16_bits_to_float(float_to_bf16_bits(std::numeric_limits<float>::max()))));
}

TEST_CASE("fp16 conversions are exact for representable values and saturate to inf", "[dtype]") {
    const float v = GENERATE(0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f /* min normal */,
                             5.960464477539063e-08f /* min subnormal */, 0.333251953125f);
    CHECK(half_bits_to_float(float_to_half_bits(v)) == v);
    CHECK(std::signbit(half_bits_to_float(float_to_half_bits(v))) == std::signbit(v));
    CHECK(std::isinf(half_bits_to_float(float_to_half_bits(65520.0f))));  // rounds past max
    CHECK(half_bits_to_float(float_to_half_bits(65519.0f)) == 65504.0f);
    CHECK(float_to_half_bits(1.0f) == 0x3C00);
    CHECK(float_to_half_bits(-2.0f) == 0xC000);
}

TEST_CASE("round_to_dtype rounds once from double", "[dtype]") {
    // A double just above the bf16 midpoint must round up; rounding through float first would
    // land exactly on the midpoint and round to even (down): the classic double-rounding bug.
    const double mid = 1.0 + std::ldexp(1.0, -8);
    const double just_above = mid + std::ldexp(1.0, -40);
    CHECK(round_to_dtype(just_above, dtype::bf16) == 1.0 + std::ldexp(1.0, -7));
    CHECK(round_to_dtype(mid, dtype::bf16) == 1.0);
    CHECK(round_to_dtype(1e-8, dtype::f16) == std::ldexp(1.0, -24) * std::nearbyint(1e-8 / std::ldexp(1.0, -24)));
    CHECK(std::isinf(round_to_dtype(1e39, dtype::f32)));
    CHECK(round_to_dtype(2.5, dtype::i32) == 2.0);
    CHECK_THAT(round_to_dtype(0.1, dtype::f32), WithinULP(static_cast<double>(0.1f), 0));
}

TEST_CASE("ulp_distance counts representable steps", "[dtype][ulp]") {
    const auto t = GENERATE(dtype::f32, dtype::bf16, dtype::f16);
    CHECK(ulp_distance(t, 1.0, 1.0) == 0);
    CHECK(ulp_distance(t, 0.0, -0.0) == 0);
    const double step = t == dtype::f32 ? std::ldexp(1.0, -23) : t == dtype::bf16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
    CHECK(ulp_distance(t, 1.0, 1.0 + step) == 1);
    CHECK(ulp_distance(t, 1.0, 1.0 + 3 * step) == 3);
    // Across zero: smallest positive and smallest negative subnormal are 2 apart.
    CHECK(ulp_distance(t, dtype_min_subnormal(t), -dtype_min_subnormal(t)) == 2);
    CHECK(ulp_distance(t, std::nan(""), 1.0) == std::numeric_limits<std::uint64_t>::max());
    CHECK(ulp_distance(t, INFINITY, INFINITY) == 0);
}

TEST_CASE("load and store elements round-trip every type", "[dtype]") {
    const auto t = GENERATE(dtype::f32, dtype::bf16, dtype::f16, dtype::i32);
    unsigned char buf[16] = {};
    store_element(t, buf, 1, 3.0);
    CHECK(load_element(t, buf, 1) == 3.0);
    store_element(t, buf, 2, -0.5);
    CHECK(load_element(t, buf, 2) == (t == dtype::i32 ? -0.0 : -0.5));
    CHECK(parse_dtype(dtype_name(t)) == t);
}

TEST_CASE("round_to_dtype's bit-level rounding equals rounding by scaling", "[dtype]") {
    // Random doubles over the whole exponent range of each format (normals, subnormals, overflow),
    // values exactly halfway between neighbours (ties to even), and the edges of the range.
    for (const dtype t : {dtype::bf16, dtype::f16, dtype::e4m3}) {
        std::uint64_t state = 0x9E3779B97F4A7C15ull;
        auto next = [&] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        std::size_t checked = 0, ties = 0;
        for (int k = 0; k < 400000; ++k) {
            const std::uint64_t r = next();
            // From below the smallest subnormal to past the largest finite value of the format.
            const int lo = t == dtype::bf16 ? -136 : t == dtype::f16 ? -27 : -12;
            const int hi = t == dtype::bf16 ? 129 : t == dtype::f16 ? 17 : 10;
            const int exp = lo + static_cast<int>(r % static_cast<std::uint64_t>(hi - lo + 1));
            double v = std::ldexp(1.0 + static_cast<double>(next() >> 12) * 0x1.0p-52, exp);
            if (k % 4 == 1) {
                // A tie: a representable value plus half a grain at its binade.
                const double base = round_to_dtype_by_scaling(v, t);
                if (!std::isfinite(base) || base == 0.0) continue;
                int e;
                std::frexp(base, &e);
                const int mant = t == dtype::bf16 ? 7 : t == dtype::f16 ? 10 : 3;
                v = base + std::ldexp(1.0, e - 1 - mant - 1);
                ++ties;
            }
            if (r & 1) v = -v;
            const double fast = round_to_dtype(v, t), slow = round_to_dtype_by_scaling(v, t);
            INFO(dtype_name(t) << " v=" << v);
            REQUIRE(std::memcmp(&fast, &slow, sizeof(double)) == 0);
            ++checked;
        }
        CHECK(checked > 380000);
        CHECK(ties > 80000);
        for (double v : {0.0, -0.0, dtype_max_finite(t), -dtype_max_finite(t), dtype_min_subnormal(t),
                         std::numeric_limits<double>::infinity(), 1e300, -1e300}) {
            const double fast = round_to_dtype(v, t), slow = round_to_dtype_by_scaling(v, t);
            CHECK(std::memcmp(&fast, &slow, sizeof(double)) == 0);
        }
    }
}

TEST_CASE("bit-level fp16 conversions equal the scaling ones: every half, and floats across the range", "[dtype]") {
    // Every one of the 2^32 floats was checked once when the bit-level path was written; here every
    // half both ways, every float that is a half or halfway between two, and 2^20 random floats.
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float a = half_bits_to_float(static_cast<std::uint16_t>(h));
        const float b = half_bits_to_float_by_scaling(static_cast<std::uint16_t>(h));
        INFO("half " << h);
        REQUIRE((std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b))));
        if (std::isfinite(a)) {
            REQUIRE(float_to_half_bits(a) == float_to_half_bits_by_scaling(a));
            const float up = std::nextafter(a, std::numeric_limits<float>::infinity());
            const float down = std::nextafter(a, -std::numeric_limits<float>::infinity());
            REQUIRE(float_to_half_bits(up) == float_to_half_bits_by_scaling(up));
            REQUIRE(float_to_half_bits(down) == float_to_half_bits_by_scaling(down));
            if ((h & 0x7FFF) < 0x7BFF) {  // halfway to the next half: ties to even
                const float next = half_bits_to_float(static_cast<std::uint16_t>(h + 1));
                const float mid = a + (next - a) / 2;
                REQUIRE(float_to_half_bits(mid) == float_to_half_bits_by_scaling(mid));
            }
        }
    }
    std::uint64_t state = 0x243F6A8885A308D3ull;
    for (int k = 0; k < (1 << 20); ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const auto bits = static_cast<std::uint32_t>(state >> 32);
        const float f = std::bit_cast<float>(bits);
        INFO("float bits " << bits);
        REQUIRE(float_to_half_bits(f) == float_to_half_bits_by_scaling(f));
    }
    CHECK(float_to_half_bits(65519.996f) == 0x7BFF);
    CHECK(float_to_half_bits(65520.0f) == 0x7C00);
    CHECK(float_to_half_bits(-0.0f) == 0x8000);
    CHECK(float_to_half_bits(std::ldexp(1.0f, -25)) == 0x0000);           // half the smallest subnormal: to even (0)
    CHECK(float_to_half_bits(std::ldexp(3.0f, -25)) == 0x0002);           // 1.5 grains: to even (2)
}
