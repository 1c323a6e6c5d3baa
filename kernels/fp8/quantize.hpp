// bf16 / fp16 / fp32 -> FP8 E4M3 block quantization (the DeepSeek-V3 layout), bit-exact with
// references/fp8_reference.hpp: a block's scale is amax / 448 in fp32 (amax over the finite
// elements; 1 when none is non-zero), each element e4m3(x / scale) rounded to nearest even with
// saturation to +-448, NaN -> 0x7F.
#pragma once

#include "kernels/common/elem.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fusebench::kernels {

// x [rows, cols] row-major, blocks of 1 x block along rows: codes [rows, cols],
// scales [rows, ceil(cols / block)]. block: a multiple of 32, at most 1024.
void launch_quantize_e4m3_rows(elem type, const void* x, std::size_t rows, std::size_t cols, int block,
                               std::uint8_t* codes, float* scales, cudaStream_t stream);

// x [rows, cols] row-major, blocks of block x block: codes [rows, cols],
// scales [ceil(rows / block), ceil(cols / block)]. block: 32 .. 256, a multiple of 32.
void launch_quantize_e4m3_tiles(elem type, const void* x, std::size_t rows, std::size_t cols, int block,
                                std::uint8_t* codes, float* scales, cudaStream_t stream);

}  // namespace fusebench::kernels
