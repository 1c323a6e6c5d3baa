#include "references/fp8_gemm_reference.hpp"

#include "references/fp8_reference.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace fusebench::references {

namespace {

// The 256 codes decoded once.
const std::array<double, 256>& e4m3_table() {
    static const std::array<double, 256> table = [] {
        std::array<double, 256> t{};
        for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = e4m3_to_double(static_cast<std::uint8_t>(c));
        return t;
    }();
    return table;
}

void check(const fp8_gemm_operands& op) {
    if (!op.a || !op.a_scale || !op.b || !op.b_scale) throw std::invalid_argument("fp8 gemm reference: null operand");
    if (op.block == 0) throw std::invalid_argument("fp8 gemm reference: block must be positive");
}

}  // namespace

Eigen::MatrixXd fp8_dequantize_b(const fp8_gemm_operands& op) {
    check(op);
    const auto& dec = e4m3_table();
    const std::size_t kb = (op.k + op.block - 1) / op.block;
    Eigen::MatrixXd out(static_cast<Eigen::Index>(op.n), static_cast<Eigen::Index>(op.k));
    for (std::size_t r = 0; r < op.n; ++r) {
        const float* tile_scales = op.b_scale + (r / op.block) * kb;
        for (std::size_t c = 0; c < op.k; ++c) {
            out(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) =
                dec[op.b[r * op.k + c]] * static_cast<double>(tile_scales[c / op.block]);
        }
    }
    return out;
}

void fp8_block_gemm_rows(const fp8_gemm_operands& op, const Eigen::MatrixXd& b_deq, std::span<const std::size_t> rows,
                         double* d) {
    check(op);
    if (static_cast<std::size_t>(b_deq.rows()) != op.n || static_cast<std::size_t>(b_deq.cols()) != op.k) {
        throw std::invalid_argument("fp8 gemm reference: dequantized B is " + std::to_string(b_deq.rows()) + " x " +
                                    std::to_string(b_deq.cols()) + ", expected n x k");
    }
    const auto& dec = e4m3_table();
    const std::size_t kb = (op.k + op.block - 1) / op.block;
    Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(op.k));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::size_t r = rows[i];
        if (r >= op.m) throw std::out_of_range("fp8 gemm reference: row " + std::to_string(r) + " of " + std::to_string(op.m));
        for (std::size_t c = 0; c < op.k; ++c) {
            a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) =
                dec[op.a[r * op.k + c]] * static_cast<double>(op.a_scale[r * kb + c / op.block]);
        }
    }
    using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<row_major> out(d, static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(op.n));
    out.noalias() = a * b_deq.transpose();
}

}  // namespace fusebench::references
