// Content hashes of host buffers, to prove a variant left its inputs alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fusebench {

// 64-bit hash of n bytes. Fixed 1 MiB chunks hashed in parallel and combined in order, so the
// value depends on the bytes only (not on the thread count). Any single-bit change alters it.
std::uint64_t hash_bytes(const void* data, std::size_t n);

}  // namespace fusebench
