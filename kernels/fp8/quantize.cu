// FP8 E4M3 block quantization kernels (see quantize.hpp for the exact semantics).
#include "kernels/common/elem_io.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/fp8/quantize.hpp"

#include <cuda_fp8.h>

#include <stdexcept>

namespace fusebench::kernels {

namespace {

// fp32 -> E4M3 as cvt.rn.satfinite (nearest even, +-inf and overflow to +-448); NaN -> 0x7F.
__device__ __forceinline__ std::uint8_t encode(float v) {
    if (isnan(v)) return 0x7F;
    return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

__device__ __forceinline__ float finite_abs(float v) { return isfinite(v) ? fabsf(v) : 0.0f; }

__device__ __forceinline__ float scale_of(float amax) { return amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 1.0f; }

// One warp per (row, block): lanes stride over the block's columns.
template <typename T>
__global__ void quantize_rows(const T* __restrict__ x, std::size_t rows, std::size_t cols, int block,
                              std::uint8_t* __restrict__ codes, float* __restrict__ scales) {
    const std::size_t blocks_per_row = (cols + block - 1) / block;
    const std::size_t warp_id = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (warp_id >= rows * blocks_per_row) return;
    const std::size_t r = warp_id / blocks_per_row, b = warp_id % blocks_per_row;
    const std::size_t c0 = b * block;
    const std::size_t n = cols - c0 < static_cast<std::size_t>(block) ? cols - c0 : static_cast<std::size_t>(block);
    const T* p = x + r * cols + c0;
    float amax = 0.0f;
    for (std::size_t i = lane; i < n; i += 32) amax = fmaxf(amax, finite_abs(to_f32(p[i])));
    for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    const float scale = scale_of(amax);
    if (lane == 0) scales[r * blocks_per_row + b] = scale;
    std::uint8_t* q = codes + r * cols + c0;
    for (std::size_t i = lane; i < n; i += 32) q[i] = encode(__fdiv_rn(to_f32(p[i]), scale));
}

// One thread block (256 threads) per tile.
template <typename T>
__global__ void __launch_bounds__(256) quantize_tiles(const T* __restrict__ x, std::size_t rows, std::size_t cols, int block,
                                                      std::uint8_t* __restrict__ codes, float* __restrict__ scales) {
    const std::size_t tiles_c = (cols + block - 1) / block;
    const std::size_t ti = blockIdx.x / tiles_c, tj = blockIdx.x % tiles_c;
    const std::size_t r0 = ti * block, c0 = tj * block;
    const std::size_t nr = rows - r0 < static_cast<std::size_t>(block) ? rows - r0 : static_cast<std::size_t>(block);
    const std::size_t nc = cols - c0 < static_cast<std::size_t>(block) ? cols - c0 : static_cast<std::size_t>(block);
    float amax = 0.0f;
    for (std::size_t k = threadIdx.x; k < nr * nc; k += blockDim.x) {
        amax = fmaxf(amax, finite_abs(to_f32(x[(r0 + k / nc) * cols + c0 + k % nc])));
    }
    for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    __shared__ float warp_max[8];
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = amax;
    __syncthreads();
    amax = 0.0f;
    for (int w = 0; w < 8; ++w) amax = fmaxf(amax, warp_max[w]);
    const float scale = scale_of(amax);
    if (threadIdx.x == 0) scales[ti * tiles_c + tj] = scale;
    for (std::size_t k = threadIdx.x; k < nr * nc; k += blockDim.x) {
        const std::size_t idx = (r0 + k / nc) * cols + c0 + k % nc;
        codes[idx] = encode(__fdiv_rn(to_f32(x[idx]), scale));
    }
}

}  // namespace

void launch_quantize_e4m3_rows(elem type, const void* x, std::size_t rows, std::size_t cols, int block,
                               std::uint8_t* codes, float* scales, cudaStream_t stream) {
    if (block < 32 || block > 1024 || block % 32 != 0) throw std::invalid_argument("quantize_e4m3_rows: block must be a multiple of 32 in [32, 1024]");
    if (rows == 0 || cols == 0) return;
    const std::size_t warps = rows * ((cols + block - 1) / block);
    const unsigned grid = static_cast<unsigned>((warps * 32 + 255) / 256);
    dispatch_elem(type, [&](auto tag) {
        using T = decltype(tag);
        quantize_rows<T><<<grid, 256, 0, stream>>>(static_cast<const T*>(x), rows, cols, block, codes, scales);
    });
    check_launch("quantize_e4m3_rows");
}

void launch_quantize_e4m3_tiles(elem type, const void* x, std::size_t rows, std::size_t cols, int block,
                                std::uint8_t* codes, float* scales, cudaStream_t stream) {
    if (block < 32 || block > 256 || block % 32 != 0) throw std::invalid_argument("quantize_e4m3_tiles: block must be a multiple of 32 in [32, 256]");
    if (rows == 0 || cols == 0) return;
    const std::size_t tiles = ((rows + block - 1) / block) * ((cols + block - 1) / block);
    dispatch_elem(type, [&](auto tag) {
        using T = decltype(tag);
        quantize_tiles<T><<<static_cast<unsigned>(tiles), 256, 0, stream>>>(static_cast<const T*>(x), rows, cols, block, codes, scales);
    });
    check_launch("quantize_e4m3_tiles");
}

}  // namespace fusebench::kernels
