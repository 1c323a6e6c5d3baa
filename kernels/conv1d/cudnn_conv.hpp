// cuDNN 9 as the peer of the dense conv1d (kernel 3, padding 1, stride 1 or 2, bias + GELU (erf)),
// layout [batch, channels, length], seen by cuDNN as NCHW with H = 1.
//
// Built on the backend (graph) API. Per (shape, element type, device) the first of these graphs
// for which an engine finalizes is kept, with the fastest of its first engine configurations
// (timed once, on scratch buffers, when the plan is built: outside any timed window):
//   fused     conv -> + bias -> GELU_FWD in one cuDNN execution (fp32 virtual intermediates);
//   conv_f32  cuDNN's convolution to an fp32 buffer (in the workspace), then bias + GELU by
//             launch_conv1d_bias_gelu (kernels/conv1d/conv1d.hpp): two launches;
// Engines whose numerical notes say reduced-precision reduction, down-converted inputs or (for
// fp32 data) tensor cores (TF32) are never chosen: the suite's fp32 bound is for fp32 arithmetic.
// A pre-activation rounded to bf16 / fp16 before GELU would not meet the suite's tolerance for
// those types, so a storage-type intermediate is not offered: such a case reports unsupported.
// Compiled without cuDNN (FUSEBENCH_HAVE_CUDNN 0 or undefined) the same functions exist:
// available() is false, unsupported() says why, launch throws.
#pragma once

#include "kernels/common/elem.hpp"
#include "kernels/conv1d/conv1d.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace fusebench::kernels {

bool cudnn_conv_available();

// "cuDNN 9.19.0 (runtime), built against 9.19.0", or why it is unavailable.
std::string cudnn_conv_describe();

// nullptr when the case runs, else the reason (lives as long as the program). Builds (and tunes)
// the plan for the current device on first call and caches the outcome.
const char* cudnn_conv_unsupported(const conv1d_dense_shape& s, elem type);

// Workspace the cached plan needs (cuDNN's own plus the fp32 intermediate where there is one).
std::size_t cudnn_conv_workspace_bytes(const conv1d_dense_shape& s, elem type);

// y = gelu_erf(conv(x, w) + bias). x, w, bias, y device pointers, 16-byte aligned.
void launch_cudnn_conv(const conv1d_dense_shape& s, elem type, const void* x, const void* w, const void* bias, void* y,
                       void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

// The cached plan in words: graph (fused | conv_f32), engine index, configs timed (the chosen one starred) and their
// times, workspace, build time; or "unsupported: <reason>".
std::string cudnn_conv_plan_describe(const conv1d_dense_shape& s, elem type);

void cudnn_conv_clear_cache();

}  // namespace fusebench::kernels
