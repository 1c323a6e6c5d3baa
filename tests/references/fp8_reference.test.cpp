// The E4M3 quantization reference: codes of known values, rounding ties to even, saturation, NaN,
// every code's round trip, and the block scales.
#include "references/fp8_reference.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <limits>

using namespace fusebench::references;

TEST_CASE("e4m3 codes of known values", "[fp8]") {
    CHECK(e4m3_from_float(0.0f) == 0x00);
    CHECK(e4m3_from_float(-0.0f) == 0x80);
    CHECK(e4m3_from_float(1.0f) == 0x38);   // exponent 7 (bias 7), mantissa 0
    CHECK(e4m3_from_float(-1.0f) == 0xB8);
    CHECK(e4m3_from_float(1.125f) == 0x39);
    CHECK(e4m3_from_float(448.0f) == 0x7E);  // largest finite
    CHECK(e4m3_from_float(-448.0f) == 0xFE);
    CHECK(e4m3_from_float(0.015625f) == 0x08);              // 2^-6, smallest normal
    CHECK(e4m3_from_float(std::ldexp(1.0f, -9)) == 0x01);   // smallest subnormal
    CHECK(e4m3_from_float(7 * std::ldexp(1.0f, -9)) == 0x07);
}

TEST_CASE("e4m3 rounds to nearest, ties to even, and saturates", "[fp8]") {
    // Ties: 1 + 1/16 lies halfway between 1 (mantissa 0, even) and 1.125 (mantissa 1).
    CHECK(e4m3_from_float(1.0625f) == 0x38);
    CHECK(e4m3_from_float(1.1875f) == 0x3A);  // halfway 1.125 / 1.25: to 1.25 (mantissa 2, even)
    CHECK(e4m3_from_float(1.07f) == 0x39);
    CHECK(e4m3_from_float(std::ldexp(1.0f, -10)) == 0x00);       // half the smallest subnormal: to 0 (even)
    CHECK(e4m3_from_float(3 * std::ldexp(1.0f, -10)) == 0x02);   // 1.5 steps: to 2 (even)
    CHECK(e4m3_from_float(1.9375f) == 0x40);  // rounds up into the next binade: 2.0
    // Beyond 448: 464 is halfway to the (NaN) 480 and rounds to even 448; anything larger saturates.
    CHECK(e4m3_from_float(464.0f) == 0x7E);
    CHECK(e4m3_from_float(500.0f) == 0x7E);
    CHECK(e4m3_from_float(1e30f) == 0x7E);
    CHECK(e4m3_from_float(-1e30f) == 0xFE);
    CHECK(e4m3_from_float(std::numeric_limits<float>::infinity()) == 0x7E);
    CHECK(e4m3_from_float(-std::numeric_limits<float>::infinity()) == 0xFE);
    CHECK(e4m3_from_float(std::numeric_limits<float>::quiet_NaN()) == 0x7F);
    CHECK(e4m3_from_float(-std::numeric_limits<float>::quiet_NaN()) == 0x7F);
}

TEST_CASE("every e4m3 code decodes and encodes back to itself; nearest-code rounding holds between codes", "[fp8]") {
    for (int c = 0; c < 256; ++c) {
        const auto code = static_cast<std::uint8_t>(c);
        const double v = e4m3_to_double(code);
        if ((c & 0x7F) == 0x7F) {
            CHECK(std::isnan(v));
            continue;
        }
        CAPTURE(c, v);
        CHECK(e4m3_from_float(static_cast<float>(v)) == code);
        // A value a quarter of the way to the next code up still rounds to this code.
        if ((c & 0x7F) < 0x7E) {
            const double next = e4m3_to_double(static_cast<std::uint8_t>(c + 1));
            CHECK(e4m3_from_float(static_cast<float>(v + (next - v) / 4)) == code);
            CHECK(e4m3_from_float(static_cast<float>(v + 3 * (next - v) / 4)) == static_cast<std::uint8_t>(c + 1));
        }
    }
}

TEST_CASE("block scales are amax / 448 over finite elements, 1 for blocks without a non-zero one", "[fp8]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> x{1.0f, -896.0f, inf, nan, 0.5f};
    CHECK(e4m3_block_scale(x.data(), x.size()) == 2.0f);
    const std::vector<float> z{0.0f, -0.0f, nan};
    CHECK(e4m3_block_scale(z.data(), z.size()) == 1.0f);

    // Rows: 2 x 5 with blocks of 4: the second block of each row is partial.
    std::vector<std::uint8_t> codes;
    std::vector<float> scales;
    quantize_e4m3_rows({448, 224, 1, 0, 8, -896, 1, 1, 1, 0}, 2, 5, 4, codes, scales);
    REQUIRE(scales.size() == 4);
    CHECK(scales[0] == 1.0f);
    CHECK(scales[1] == 8.0f / 448.0f);
    CHECK(scales[2] == 2.0f);
    CHECK(codes[0] == 0x7E);                 // 448 / 1
    CHECK(codes[4] == 0x7E);                 // 8 / (8/448) = 448
    CHECK(codes[5] == 0xFE);                 // -896 / 2 = -448
    CHECK(codes[6] == e4m3_from_float(0.5f));

    // Tiles: a 3 x 3 matrix in 2 x 2 blocks.
    quantize_e4m3_tiles({1, 2, 4, 3, 448, 8, 16, 32, 0}, 3, 3, 2, codes, scales);
    REQUIRE(scales.size() == 4);
    CHECK(scales[0] == 1.0f);                // max(1, 2, 3, 448)
    CHECK(scales[1] == 8.0f / 448.0f);       // max(4, 8)
    CHECK(scales[2] == 32.0f / 448.0f);      // max(16, 32)
    CHECK(scales[3] == 1.0f);                // only 0
    CHECK(codes[8] == 0x00);
}

#include "harness/dtype.hpp"

#include <random>

TEST_CASE("two independent E4M3 encoders agree: the reference's and the harness dtype's", "[fp8]") {
    // The harness stores and loads fp8_e4m3 tensors with its own codec (harness/dtype.cpp); the
    // quantization reference has another. Same code for every value tried, or one of them is wrong.
    std::mt19937 gen(42);
    std::uniform_real_distribution<double> exponent(-14.0, 10.0), unit(-1.0, 1.0);
    std::size_t checked = 0;
    for (int i = 0; i < 200000; ++i) {
        const float v = static_cast<float>(unit(gen) * std::exp2(exponent(gen)));
        CAPTURE(v);
        REQUIRE(e4m3_from_float(v) == fusebench::double_to_e4m3_bits(v));
        ++checked;
    }
    for (float v : {0.0f, -0.0f, 448.0f, 464.0f, 465.0f, -1e30f, std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), std::ldexp(1.0f, -10), 3 * std::ldexp(1.0f, -10)}) {
        CAPTURE(v);
        CHECK(e4m3_from_float(v) == fusebench::double_to_e4m3_bits(v));
    }
    CHECK(fusebench::double_to_e4m3_bits(std::numeric_limits<double>::quiet_NaN()) == 0x7F);
    for (int c = 0; c < 256; ++c) {
        const auto b = static_cast<std::uint8_t>(c);
        const double a = e4m3_to_double(b), h = fusebench::e4m3_bits_to_double(b);
        CHECK(((std::isnan(a) && std::isnan(h)) || a == h));
        if (!std::isnan(h)) CHECK(fusebench::round_to_dtype(h, fusebench::dtype::e4m3) == h);
    }
    CHECK(fusebench::dtype_size(fusebench::dtype::e4m3) == 1);
    CHECK(fusebench::dtype_name(fusebench::dtype::e4m3) == "fp8_e4m3");
    CHECK(fusebench::parse_dtype("e4m3") == fusebench::dtype::e4m3);
    CHECK(fusebench::dtype_max_finite(fusebench::dtype::e4m3) == 448.0);
    CHECK(fusebench::ulp_distance(fusebench::dtype::e4m3, 1.0, 1.125) == 1);
    CHECK(checked == 200000);
}
