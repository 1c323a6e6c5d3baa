// fp64 reference of fused softmax + top-k, one row at a time. Semantics (those of PyTorch's
// softmax followed by topk where PyTorch defines them):
// - probabilities p_i = exp(x_i - max x) / sum_j exp(x_j - max x), evaluated in fp64 for the K
//   selected entries, sorted descending; equal logits are ordered by lower index first;
// - -inf entries are valid (masked vocabulary) and have probability 0;
// - a row with a NaN, a row with +inf, or a row of all -inf has no finite softmax (PyTorch's
//   softmax gives NaN everywhere: +inf - +inf and -inf - -inf are NaN): all K probabilities are
//   NaN and, since NaN ranks above every number and ties keep the lower index, indices are 0..K-1.
#pragma once

#include <cstdint>
#include <span>

namespace fusebench {

// True when the row has a finite softmax: no NaN, no +inf, and at least one entry above -inf.
bool softmax_row_is_finite(std::span<const double> logits);

// Writes the row's top K (K = probs.size() = indices.size()) probabilities and indices.
// Throws std::invalid_argument when the sizes differ, K < 1 or K > logits.size().
void softmax_topk_row_reference(std::span<const double> logits, std::span<double> probs,
                                std::span<std::int64_t> indices);

}  // namespace fusebench
