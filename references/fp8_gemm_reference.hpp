// fp64 reference of the block-scaled FP8 GEMM of issue 19 (the DeepSeek-V3 layout), on the
// dequantized inputs: D = (A * a_scale) (B * b_scale)^T with
//   A [M, K] E4M3 codes, row-major (activations), a_scale [M, ceil(K / block)] fp32: one scale per
//     1 x block run of a row;
//   B [N, K] E4M3 codes, row-major (weights stored N x K, so D = A B^T, the "TN" GEMM),
//     b_scale [ceil(N / block), ceil(K / block)] fp32, row-major: one scale per block x block tile;
//   edge blocks may be partial (K or N not a multiple of block).
// Each dequantized element e4m3(code) * scale is exact in double (4 significant bits times 24),
// and the dot products are summed in double, so the result is the exact product to about
// K * 2^-53 relative: the yardstick for a kernel's own error. A NaN code (0x7F, 0xFF) makes the
// row and column it meets NaN.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <span>

namespace fusebench::references {

struct fp8_gemm_operands {
    const std::uint8_t* a = nullptr;  // [m, k]
    const float* a_scale = nullptr;   // [m, ceil(k / block)]
    const std::uint8_t* b = nullptr;  // [n, k]
    const float* b_scale = nullptr;   // [ceil(n / block), ceil(k / block)]
    std::size_t m = 0, n = 0, k = 0;
    std::size_t block = 128;
};

// B dequantized, n x k (row n of the matrix is row n of B times its tiles' scales).
Eigen::MatrixXd fp8_dequantize_b(const fp8_gemm_operands& op);

// Rows `rows` of D (each < m), written row by row to d: rows.size() x n, row-major, fp64.
// b_deq: fp8_dequantize_b(op), computed once per case and shared by the calls (thread-safe: the
// calls only read it), so a suite can split the rows over threads or check a sample of them.
void fp8_block_gemm_rows(const fp8_gemm_operands& op, const Eigen::MatrixXd& b_deq, std::span<const std::size_t> rows,
                         double* d);

}  // namespace fusebench::references
