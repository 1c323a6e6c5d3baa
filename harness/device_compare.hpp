// Device-side comparison of two buffers, so that checking a variant left its inputs alone costs
// a pass over device memory instead of a download and a host hash of every input (gigabytes for
// the largest cases).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fusebench {

// Whether the n bytes at a and b (device memory, any alignment) differ anywhere. Runs on
// `stream` and synchronizes it. Throws cuda_error on a CUDA failure.
bool device_bytes_differ(const void* a, const void* b, std::size_t n, cudaStream_t stream);

}  // namespace fusebench
