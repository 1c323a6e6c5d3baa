// FP8 E4M3 quantization, the bit-exact CPU reference for the quantize kernels (kernels/fp8/).
//
// E4M3 (OCP FP8, as on Hopper): sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities;
// S.1111.111 is NaN; the largest finite magnitude is 448 (S.1111.110), the smallest normal 2^-6,
// the subnormal step 2^-9.
//
// Conversion from fp32 (as cvt.rn.satfinite.e4m3x2.f32): round to nearest, ties to even; finite
// values whose rounding exceeds 448, and +-inf, saturate to +-448; NaN becomes 0x7F (the sign of a
// NaN is not kept); -0 stays -0 (0x80).
//
// Block quantization (the DeepSeek-V3 layout): a block's scale is amax / 448 in fp32, amax the
// largest finite |x| of the block (NaN and +-inf ignored; a block without a non-zero finite
// element has scale 1); each element becomes e4m3(x / scale) with the division in fp32 (round to
// nearest even), so x = scale * decoded value within E4M3's rounding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusebench::references {

std::uint8_t e4m3_from_float(float x);
double e4m3_to_double(std::uint8_t code);  // NaN for 0x7F / 0xFF

// Scale of a block of values (fp32, as above).
float e4m3_block_scale(const float* x, std::size_t n, std::size_t stride = 1);

// Activations [rows, cols], row-major, blocks of 1 x block along each row (the last block of a row
// may be partial): codes [rows, cols], scales [rows, ceil(cols / block)].
void quantize_e4m3_rows(const std::vector<float>& x, std::size_t rows, std::size_t cols, std::size_t block,
                        std::vector<std::uint8_t>& codes, std::vector<float>& scales);

// Weights [rows, cols], row-major, blocks of block x block (edge blocks may be partial): codes
// [rows, cols], scales [ceil(rows / block), ceil(cols / block)] row-major.
void quantize_e4m3_tiles(const std::vector<float>& x, std::size_t rows, std::size_t cols, std::size_t block,
                         std::vector<std::uint8_t>& codes, std::vector<float>& scales);

}  // namespace fusebench::references
