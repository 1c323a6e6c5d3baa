// The E4M3 quantize kernels against the CPU reference, byte for byte and scale for scale.
#include "kernels/fp8/quantize.hpp"
#include "references/fp8_reference.hpp"
#include "support/gpu.hpp"

#include <cuda_runtime_api.h>

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using fusebench::kernels::elem;

// Host values in each storage type (bf16 / fp16 by truncation of the bits: the reference sees
// exactly what the kernel reads).
std::uint16_t bf16_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t b) {
    const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

void check_cuda(cudaError_t e) { REQUIRE(e == cudaSuccess); }

}  // namespace

TEST_CASE("E4M3 quantize kernels match the CPU reference bit for bit", "[gpu][fp8]") {
    FUSEBENCH_REQUIRE_GPU();
    const std::size_t rows = 37, cols = 300;  // partial blocks in both directions
    std::mt19937 gen(2026);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> x(rows * cols);
    for (auto& v : x) v = normal(gen);
    // Specials: NaN, +-inf (ignored by the scale, saturated to +-448), -0, a block of zeros (scale
    // 1), tiny values in a block with a large one (subnormal codes).
    x[0] = std::numeric_limits<float>::quiet_NaN();
    x[1] = std::numeric_limits<float>::infinity();
    x[2] = -std::numeric_limits<float>::infinity();
    x[3] = -0.0f;
    for (std::size_t c = 128; c < 256; ++c) x[cols + c] = 0.0f;
    x[2 * cols + 5] = 1e4f;
    x[2 * cols + 6] = 1e-3f;
    for (elem t : {elem::f32, elem::bf16}) {
        CAPTURE(static_cast<int>(t));
        std::vector<float> host = x;
        std::vector<std::uint16_t> bits(x.size());
        if (t == elem::bf16) {
            for (std::size_t i = 0; i < x.size(); ++i) {
                bits[i] = bf16_bits(x[i]);
                host[i] = from_bf16(bits[i]);
            }
        }
        void* d_x = nullptr;
        std::uint8_t* d_codes = nullptr;
        float* d_scales = nullptr;
        const std::size_t in_bytes = t == elem::f32 ? x.size() * 4 : x.size() * 2;
        check_cuda(cudaMalloc(&d_x, in_bytes));
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&d_codes), x.size()));
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&d_scales), x.size() * 4));
        check_cuda(cudaMemcpy(d_x, t == elem::f32 ? static_cast<const void*>(host.data()) : bits.data(), in_bytes, cudaMemcpyHostToDevice));
        for (int tiles = 0; tiles < 2; ++tiles) {
            CAPTURE(tiles);
            std::vector<std::uint8_t> want_codes, got_codes(x.size());
            std::vector<float> want_scales;
            if (tiles) {
                fusebench::references::quantize_e4m3_tiles(host, rows, cols, 128, want_codes, want_scales);
                fusebench::kernels::launch_quantize_e4m3_tiles(t, d_x, rows, cols, 128, d_codes, d_scales, nullptr);
            } else {
                fusebench::references::quantize_e4m3_rows(host, rows, cols, 128, want_codes, want_scales);
                fusebench::kernels::launch_quantize_e4m3_rows(t, d_x, rows, cols, 128, d_codes, d_scales, nullptr);
            }
            std::vector<float> got_scales(want_scales.size());
            check_cuda(cudaDeviceSynchronize());
            check_cuda(cudaMemcpy(got_codes.data(), d_codes, got_codes.size(), cudaMemcpyDeviceToHost));
            check_cuda(cudaMemcpy(got_scales.data(), d_scales, got_scales.size() * 4, cudaMemcpyDeviceToHost));
            std::size_t code_diff = 0, scale_diff = 0;
            for (std::size_t i = 0; i < want_codes.size(); ++i) code_diff += want_codes[i] != got_codes[i];
            for (std::size_t i = 0; i < want_scales.size(); ++i) scale_diff += std::memcmp(&want_scales[i], &got_scales[i], 4) != 0;
            CHECK(code_diff == 0);
            CHECK(scale_diff == 0);
        }
        cudaFree(d_x);
        cudaFree(d_codes);
        cudaFree(d_scales);
    }
}
