// Fused residual-add + RMSNorm over rows of `hidden` elements:
//   residual_out = x + residual, rounded to the storage type
//   y            = residual_out * rsqrt(mean(residual_out^2) + eps) * gamma
// The sum of squares is accumulated in fp32 over the rounded residual_out, so fp16 rows whose sum
// of squares exceeds the fp16 range stay finite. x, residual, residual_out and y are [tokens,
// hidden] row-major, gamma is [hidden]; all of `type`.
//
// In-place use is allowed: d_y may equal d_x and d_residual_out may equal d_residual (each element
// is read before it is written, by the same thread). d_gamma must not overlap an output. Pointers
// need only element alignment: the vectorized variants pick 16-byte accesses when every pointer and
// the row pitch allow it and element-wide accesses otherwise. Launchers never synchronize; they
// throw std::invalid_argument for a shape outside their domain and std::runtime_error when the
// launch fails.
#pragma once

#include "kernels/common/elem.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fusebench::kernels {

// Naive unfused baseline, as an unfused framework runs it: an element-wise add kernel writes
// residual_out, then a block-per-row RMSNorm kernel reads it back twice (sum of squares, then
// scale). Five passes over the rows from DRAM (the second read of a row mostly hits L2).
void launch_residual_rmsnorm_naive(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                   void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                   float eps, cudaStream_t stream);

// v1 fused, simple: one 256-thread block per row, element-wide accesses; the add, the store of
// residual_out and the sum of squares share one loop, then the row is read back from residual_out
// (L2-hot) to write y. Four DRAM passes instead of five.
void launch_residual_rmsnorm_block(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                   void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                   float eps, cudaStream_t stream);

// v2 fused, vectorized and register-resident: one block per row, 16-byte accesses, the row kept in
// registers (x and residual read once, no read-back), warp shuffle + cross-warp reduction, gamma
// loaded with the row so its latency hides behind the reduction.
void launch_residual_rmsnorm_vec(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                 void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                 float eps, cudaStream_t stream);

// v4 fused: v2 with 4 accesses per thread (blocks of hidden / (4 x vector width) threads, within
// v2's 512-thread cap): four independent 16-byte loads per operand in flight per thread and a
// quarter of the warps in the block barrier, at the price of more registers per thread. Same
// domain as v2.
void launch_residual_rmsnorm_vec4(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                  void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                  float eps, cudaStream_t stream);

// v3 fused, warp per row for small hidden: the v2 data path with one warp per row, so the
// reduction is shuffles only (no shared memory, no block barrier) and a block holds several rows.
void launch_residual_rmsnorm_warp(elem type, const void* d_x, const void* d_residual, const void* d_gamma,
                                  void* d_y, void* d_residual_out, std::size_t tokens, std::size_t hidden,
                                  float eps, cudaStream_t stream);

// Elements per 16-byte access of `type`.
std::size_t residual_rmsnorm_vector_width(elem type) noexcept;
// Largest hidden the register-resident variants hold, for rows that can use 16-byte accesses
// (`vectorizable`: every pointer 16-byte aligned, hidden a multiple of the vector width) or not.
std::size_t residual_rmsnorm_vec_max_hidden(elem type, bool vectorizable) noexcept;
std::size_t residual_rmsnorm_warp_max_hidden(elem type, bool vectorizable) noexcept;

}  // namespace fusebench::kernels
