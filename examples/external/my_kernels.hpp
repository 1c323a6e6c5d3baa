// The example's kernels: plain CUDA, nothing from fusebench. Element type codes: 0 fp32, 1 bf16,
// 2 fp16. Launchers enqueue on `stream` and return the launch's error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace example {

enum class elem { f32 = 0, bf16 = 1, f16 = 2 };

// y = silu(gate) * up, silu(x) = x / (1 + exp(-x)) in fp32.
cudaError_t launch_my_swiglu(elem t, const void* gate, const void* up, void* y, std::size_t n, cudaStream_t stream);

// Squared ReLU, y = max(x, 0)^2 in fp32: fused in one pass, or unfused (relu to `tmp`, then square).
cudaError_t launch_squared_relu_fused(elem t, const void* x, void* y, std::size_t n, cudaStream_t stream);
cudaError_t launch_squared_relu_unfused(elem t, const void* x, void* tmp, void* y, std::size_t n, cudaStream_t stream);

}  // namespace example
