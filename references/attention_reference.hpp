// fp64 reference of scaled-dot-product attention forward for one head:
//   s[i][j] = scale * dot(q[i], k[j])                          (masked when causal and j > i + seq_kv - seq_q)
//   lse[i]  = log(sum over visible j of exp(s[i][j]))          (natural log)
//   o[i]    = sum over visible j of exp(s[i][j] - lse[i]) * v[j]
// Causal masking is bottom-right aligned (FlashAttention / PyTorch "causal_lower_right"): the last
// query row sees every key, so decoding one query against a KV cache (seq_q = 1) sees all keys.
// Causal requires seq_q <= seq_kv, so every row sees at least one key.
// Everything is fp64: the caller converts q, k, v from the input dtype and compares o and lse
// (unrounded) against the kernel's outputs. The softmax is max-subtracted (logits of any finite
// size, e.g. 1e4, neither overflow nor lose the result). Non-finite values in visible positions
// give non-finite outputs in the affected rows, as the formulas do; masked keys never affect a row
// (not even non-finite values in their k or v rows).
// Memory is bounded regardless of sequence length: query rows are processed in blocks against
// blocks of keys, combined with a running max / running sum (the same online softmax as the
// kernels), using Eigen matrix products. The functions are thread-safe and single-threaded: the
// caller parallelizes over heads and row ranges.
#pragma once

#include <cstdint>

namespace fusebench::references {

struct attention_problem {
    std::int64_t seq_q = 0, seq_kv = 0, head_dim = 0;
    bool causal = false;  // bottom-right aligned: query row i sees keys j <= i + (seq_kv - seq_q); requires seq_q <= seq_kv when causal
    double scale = 0;     // multiplies q.k before the softmax (normally 1/sqrt(head_dim))
};

// Query rows are processed in blocks of this many rows, aligned to multiples of it: a caller that
// splits the rows of a head at multiples of it gets results bitwise identical to one call.
inline constexpr std::int64_t attention_reference_row_block = 64;

// Throws std::invalid_argument when the sizes are not positive, when causal has seq_q > seq_kv, or
// when scale is not finite.
void validate_attention_problem(const attention_problem& p);

// Number of keys query row i sees (seq_kv when not causal). Throws std::invalid_argument for an
// invalid problem or a row outside [0, seq_q).
std::int64_t attention_visible_keys(const attention_problem& p, std::int64_t row);

// One head: q is [seq_q, head_dim], k and v are [seq_kv, head_dim], all row-major, given as
// const double* (already converted from the input dtype). Computes rows [row_begin, row_end)
// of o ([seq_q, head_dim] row-major, only those rows written) and lse (natural-log logsumexp
// of the scaled, masked logits of each row; only those rows written). An empty range writes
// nothing. o and lse may not overlap the inputs. Throws std::invalid_argument for an invalid
// problem, a row range outside [0, seq_q] or with row_begin > row_end, or a null pointer.
// weighted (optional, laid out like lse): the rows' softmax-weighted score magnitude
//   weighted[i] = |scale| * sum over the keys j row i sees of p_ij * sum_k |q_ik| |k_jk|,
// p_ij = exp(s_ij - lse_i): the scale the lse's rounding error has when its scores are summed in
// fp32. lse's gradient in the scores is the softmax, so |d lse_i| <= sum_j p_ij |d s_ij|, and a
// recursive sum of D products in unit roundoff u errs by at most gamma_D sum_k |q_ik k_jk| (gamma_D =
// D u / (1 - D u), Higham, sec. 3.1): |d lse_i| <= gamma_D * weighted[i] to first order. Computed
// with the same online softmax as o (one more product |Q| |K|^T per block).
void attention_reference_rows(const attention_problem& p, const double* q, const double* k, const double* v,
                              std::int64_t row_begin, std::int64_t row_end, double* o, double* lse,
                              double* weighted = nullptr);

}  // namespace fusebench::references

namespace fusebench::references {

// The magnitude of each row's largest score term, for an error bound on scores summed in a
// reduced-precision accumulator: a recursive sum of head_dim products in an accumulator of unit
// roundoff u errs by at most gamma_D * sum_k |q_ik k_jk| (gamma_D = D u / (1 - D u), Higham,
// "Accuracy and Stability of Numerical Algorithms", sec. 3.1), so the scaled score s_ij errs by at
// most gamma_D * |scale| * sum_k |q_ik| |k_jk|. Writes, for rows [row_begin, row_end),
//   magnitude[i] = |scale| * max over the keys j row i sees of sum_k |q_ik| |k_jk|
// (layouts, masking, blocking and exceptions as attention_reference_rows; only those rows written).
void attention_score_magnitude_rows(const attention_problem& p, const double* q, const double* k, std::int64_t row_begin,
                                    std::int64_t row_end, double* magnitude);

}  // namespace fusebench::references
