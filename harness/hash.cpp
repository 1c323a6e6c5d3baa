#include "harness/hash.hpp"

#include "harness/parallel.hpp"
#include "harness/rng.hpp"

#include <cstring>
#include <vector>

namespace fusebench {

namespace {
constexpr std::size_t chunk_bytes = 1 << 20;

std::uint64_t hash_chunk(const unsigned char* p, std::size_t n, std::uint64_t seed) {
    std::uint64_t h = splitmix64(seed ^ n);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = splitmix64(h ^ w);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, p + i, n - i);
    return splitmix64(h ^ tail ^ (static_cast<std::uint64_t>(n - i) << 56));
}
}  // namespace

std::uint64_t hash_bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    const std::size_t chunks = (n + chunk_bytes - 1) / chunk_bytes;
    std::vector<std::uint64_t> parts(chunks);
    parallel_for(chunks, [&](std::size_t b, std::size_t e) {
        for (std::size_t c = b; c < e; ++c) {
            const std::size_t off = c * chunk_bytes;
            parts[c] = hash_chunk(p + off, std::min(chunk_bytes, n - off), c);
        }
    }, 4);
    std::uint64_t h = splitmix64(0x6A09E667F3BCC908ull ^ n);
    for (auto v : parts) h = splitmix64(h ^ v);
    return h;
}

}  // namespace fusebench
