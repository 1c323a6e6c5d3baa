// Carving a launcher's workspace into regions.
#pragma once

#include <cstddef>

namespace fusebench::kernels {

// n rounded up to 256 bytes: each region of a workspace starts as aligned as cudaMalloc's memory.
constexpr std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }

}  // namespace fusebench::kernels
