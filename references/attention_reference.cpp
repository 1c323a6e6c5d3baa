#include "references/attention_reference.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace fusebench::references {

namespace {

// Query rows per block and keys per block: the work space is O(block_rows * (block_keys + head_dim))
// whatever the sequence lengths are (about 0.3 MiB at head_dim 128).
constexpr std::int64_t block_rows = attention_reference_row_block;
constexpr std::int64_t block_keys = 512;

using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::string describe(const attention_problem& p) {
    return "(seq_q " + std::to_string(p.seq_q) + ", seq_kv " + std::to_string(p.seq_kv) + ", head_dim " +
           std::to_string(p.head_dim) + (p.causal ? ", causal)" : ", not causal)");
}

// Keys row sees, for a valid problem and row (causal rows see at least one key since seq_q <= seq_kv).
std::int64_t visible_keys(const attention_problem& p, std::int64_t row) {
    return p.causal ? std::min(p.seq_kv, row + (p.seq_kv - p.seq_q) + 1) : p.seq_kv;
}

}  // namespace

void validate_attention_problem(const attention_problem& p) {
    if (p.seq_q <= 0 || p.seq_kv <= 0 || p.head_dim <= 0) {
        throw std::invalid_argument("attention_reference: sizes must be positive " + describe(p));
    }
    if (p.causal && p.seq_q > p.seq_kv) {
        throw std::invalid_argument("attention_reference: causal attention needs seq_q <= seq_kv " + describe(p));
    }
    if (!std::isfinite(p.scale)) {
        throw std::invalid_argument("attention_reference: scale is not finite " + describe(p));
    }
}

std::int64_t attention_visible_keys(const attention_problem& p, std::int64_t row) {
    validate_attention_problem(p);
    if (row < 0 || row >= p.seq_q) {
        throw std::invalid_argument("attention_visible_keys: row " + std::to_string(row) + " outside [0, " +
                                    std::to_string(p.seq_q) + ")");
    }
    return visible_keys(p, row);
}

void attention_reference_rows(const attention_problem& p, const double* q, const double* k, const double* v,
                              std::int64_t row_begin, std::int64_t row_end, double* o, double* lse, double* weighted) {
    validate_attention_problem(p);
    if (row_begin < 0 || row_end > p.seq_q || row_begin > row_end) {
        throw std::invalid_argument("attention_reference_rows: row range [" + std::to_string(row_begin) + ", " +
                                    std::to_string(row_end) + ") is not inside [0, " + std::to_string(p.seq_q) +
                                    "]");
    }
    if (q == nullptr || k == nullptr || v == nullptr || o == nullptr || lse == nullptr) {
        throw std::invalid_argument("attention_reference_rows: null pointer (q, k, v, o and lse are all required)");
    }
    if (row_begin == row_end) return;

    const Eigen::Index d = p.head_dim;
    const Eigen::Index rows_cap = std::min(block_rows, row_end - row_begin);
    row_major s(rows_cap, std::min(block_keys, p.seq_kv));  // logits, then probabilities
    row_major acc(rows_cap, d);                            // unnormalized output
    Eigen::VectorXd run_max(rows_cap), run_sum(rows_cap);
    // weighted: |q| |k|^T of the block, |Q|'s block rows and |K|'s block, and the unnormalized sum.
    row_major mag, qa, ka;
    Eigen::VectorXd acc_w;
    if (weighted != nullptr) {
        mag.resize(rows_cap, std::min(block_keys, p.seq_kv));
        qa.resize(rows_cap, d);
        ka.resize(std::min(block_keys, p.seq_kv), d);
        acc_w.resize(rows_cap);
    }
    constexpr double neg_inf = -std::numeric_limits<double>::infinity();

    // Row blocks are aligned to multiples of block_rows of the whole sequence, so a row's result
    // does not depend on how the caller splits the rows when it splits at multiples of block_rows.
    for (std::int64_t r0 = row_begin; r0 < row_end; r0 = (r0 / block_rows + 1) * block_rows) {
        const Eigen::Index nr = std::min((r0 / block_rows + 1) * block_rows, row_end) - r0;
        const Eigen::Map<const row_major> qb(q + r0 * d, nr, d);
        acc.topRows(nr).setZero();
        run_max.head(nr).setConstant(neg_inf);
        run_sum.head(nr).setZero();
        if (weighted != nullptr) {
            qa.topRows(nr) = qb.cwiseAbs();
            acc_w.head(nr).setZero();
        }
        // Keys beyond the last row's horizon are masked for the whole block: never visited.
        const std::int64_t key_end = visible_keys(p, r0 + nr - 1);

        for (std::int64_t c0 = 0; c0 < key_end; c0 += block_keys) {
            const Eigen::Index nc = std::min(block_keys, key_end - c0);
            const Eigen::Map<const row_major> kb(k + c0 * d, nc, d);
            const Eigen::Map<const row_major> vb(v + c0 * d, nc, d);
            auto sb = s.topLeftCorner(nr, nc);
            sb.noalias() = qb * kb.transpose();
            sb *= p.scale;
            if (weighted != nullptr) {
                ka.topRows(nc) = kb.cwiseAbs();
                mag.topLeftCorner(nr, nc).noalias() = qa.topRows(nr) * ka.topRows(nc).transpose();
            }

            bool masked_keys = false;
            for (Eigen::Index r = 0; r < nr; ++r) {
                // Visible keys of this row inside [c0, c0 + nc): a prefix, empty or partial at the diagonal.
                const Eigen::Index n = std::clamp<std::int64_t>(visible_keys(p, r0 + r) - c0, 0, nc);
                masked_keys = masked_keys || n < nc;
                auto srow = sb.row(r);
                if (n == 0) {
                    srow.setZero();
                    continue;
                }
                const double block_max = srow.head(n).maxCoeff();
                const double new_max = std::max(run_max[r], block_max);
                // exp(-inf) = 0 on the first visited block; NaN logits propagate through the sums.
                const double alpha = std::exp(run_max[r] - new_max);
                double sum = 0;
                for (Eigen::Index j = 0; j < n; ++j) {
                    const double e = std::exp(srow[j] - new_max);
                    srow[j] = e;
                    sum += e;
                }
                srow.tail(nc - n).setZero();
                if (weighted != nullptr) acc_w[r] = acc_w[r] * alpha + srow.head(n).dot(mag.row(r).head(n));
                run_sum[r] = run_sum[r] * alpha + sum;
                run_max[r] = new_max;
                if (alpha != 1.0) acc.row(r) *= alpha;
            }
            if (!masked_keys || vb.allFinite()) {
                acc.topRows(nr).noalias() += sb * vb;
            } else {
                // A masked key's non-finite value row would give 0 * inf = NaN in the product: leave
                // masked keys out, row by row (only where such values occur).
                for (Eigen::Index r = 0; r < nr; ++r) {
                    const Eigen::Index n = std::clamp<std::int64_t>(visible_keys(p, r0 + r) - c0, 0, nc);
                    if (n > 0) acc.row(r).noalias() += sb.row(r).head(n) * vb.topRows(n);
                }
            }
        }

        Eigen::Map<row_major> ob(o + r0 * d, nr, d);
        for (Eigen::Index r = 0; r < nr; ++r) {
            ob.row(r) = acc.row(r) / run_sum[r];
            lse[r0 + r] = run_max[r] + std::log(run_sum[r]);
            if (weighted != nullptr) weighted[r0 + r] = std::abs(p.scale) * acc_w[r] / run_sum[r];
        }
    }
}

}  // namespace fusebench::references

namespace fusebench::references {

void attention_score_magnitude_rows(const attention_problem& p, const double* q, const double* k, std::int64_t row_begin,
                                    std::int64_t row_end, double* magnitude) {
    validate_attention_problem(p);
    if (row_begin < 0 || row_end > p.seq_q || row_begin > row_end) {
        throw std::invalid_argument("attention_score_magnitude_rows: row range [" + std::to_string(row_begin) + ", " +
                                    std::to_string(row_end) + ") is not inside [0, " + std::to_string(p.seq_q) + "]");
    }
    if (q == nullptr || k == nullptr || magnitude == nullptr) {
        throw std::invalid_argument("attention_score_magnitude_rows: null pointer (q, k and magnitude are all required)");
    }
    if (row_begin == row_end) return;
    const Eigen::Index d = p.head_dim;
    const Eigen::Index rows_cap = std::min(block_rows, row_end - row_begin);
    row_major qa(rows_cap, d), ka(block_keys, d), sb(rows_cap, block_keys);
    for (std::int64_t r0 = row_begin; r0 < row_end; r0 = (r0 / block_rows + 1) * block_rows) {
        const Eigen::Index nr = std::min((r0 / block_rows + 1) * block_rows, row_end) - r0;
        qa.topRows(nr) = Eigen::Map<const row_major>(q + r0 * d, nr, d).cwiseAbs();
        for (Eigen::Index r = 0; r < nr; ++r) magnitude[r0 + r] = 0;
        const std::int64_t key_end = visible_keys(p, r0 + nr - 1);
        for (std::int64_t c0 = 0; c0 < key_end; c0 += block_keys) {
            const Eigen::Index nc = std::min(block_keys, key_end - c0);
            ka.topRows(nc) = Eigen::Map<const row_major>(k + c0 * d, nc, d).cwiseAbs();
            auto s = sb.topLeftCorner(nr, nc);
            s.noalias() = qa.topRows(nr) * ka.topRows(nc).transpose();
            for (Eigen::Index r = 0; r < nr; ++r) {
                const Eigen::Index n = std::clamp<std::int64_t>(visible_keys(p, r0 + r) - c0, 0, nc);
                if (n > 0) magnitude[r0 + r] = std::max(magnitude[r0 + r], s.row(r).head(n).maxCoeff());
            }
        }
        for (Eigen::Index r = 0; r < nr; ++r) magnitude[r0 + r] *= std::abs(p.scale);
    }
}

}  // namespace fusebench::references
