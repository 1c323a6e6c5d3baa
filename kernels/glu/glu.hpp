// Gated linear units: y = act(gate) * up, element-wise over [tokens, inter]. gate, up and y are
// separate tensors of the same shape and element type; math in fp32.
#pragma once

#include "kernels/common/elem.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fusebench::kernels {

enum class glu_act {
    silu,       // SwiGLU: x * sigmoid(x)
    gelu_tanh,  // GeGLU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    gelu_erf,   // GeGLU, exact: 0.5 x (1 + erf(x / sqrt(2)))
};

// Naive unfused baseline, as an unfused framework runs it: an activation kernel writes act(gate)
// to `intermediate` (n elements of `type`, rounded to that type), then a multiply kernel reads it
// back with `up`. Five passes over n elements.
void launch_glu_naive(glu_act act, elem type, const void* d_gate, const void* d_up, void* d_y,
                      void* d_intermediate, std::size_t n, cudaStream_t stream);

// v1 fused scalar: one element per thread, the intermediate stays in a register. Three passes.
void launch_glu_fused_scalar(glu_act act, elem type, const void* d_gate, const void* d_up,
                             void* d_y, std::size_t n, cudaStream_t stream);

// v2 fused vectorized: 16-byte loads and stores (4 fp32 or 8 fp16/bf16 per access, 2 accesses in
// flight per thread) for 4-8x fewer memory instructions; a scalar head brings the pointers to a
// 16-byte boundary when they share the same misalignment, a scalar tail covers n % vector width,
// and pointers misaligned differently fall back to the scalar kernel.
void launch_glu_fused_vec(glu_act act, elem type, const void* d_gate, const void* d_up, void* d_y,
                          std::size_t n, cudaStream_t stream);

}  // namespace fusebench::kernels
