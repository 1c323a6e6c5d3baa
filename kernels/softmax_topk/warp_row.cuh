// The end of a row in the warp-per-row designs (v4 fused_warp.cu, v5 fused_stream.cu): the writes
// for a row without a finite softmax, and for the kept top K with the -inf entries that complete it.
#pragma once

#include "kernels/common/elem_io.cuh"
#include "kernels/softmax_topk/select.cuh"

#include <cstdint>

namespace fusebench::kernels::topk_detail {

// Sorts keys[0, P) descending in shared memory with one warp (P a power of two, at least 2).
template <class Key> __device__ void warp_bitonic_sort_desc_smem(Key* keys, int P, int lane) {
    __syncwarp();
    for (int k = 2; k <= P; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = lane; t < P; t += 32) {
                const int u = t ^ j;
                if (u > t) {
                    const Key a = keys[t], b = keys[u];
                    if ((a < b) == ((t & k) == 0)) {
                        keys[t] = b;
                        keys[u] = a;
                    }
                }
            }
            __syncwarp();
        }
    }
}

// NaN, +inf or an all -inf row has no finite softmax (PyTorch gives NaN): NaN probabilities and
// indices 0..K-1.
__device__ __forceinline__ void warp_write_no_softmax(float* p_out, std::int32_t* i_out, int K, int lane) {
    for (int t = lane; t < K; t += 32) {
        p_out[t] = __int_as_float(0x7FC00000);
        i_out[t] = t;
    }
}

// keys[0, n) (n <= K, room for K) hold the row's kept (value, ~index) composites sorted
// descending. With fewer than K, every entry above -inf is among them (the threshold never rose),
// so the rest of the top K are -inf entries (probability 0), lowest indices first: they are
// appended from a scan of the row. Then probabilities exp(x - M) / S and indices are written.
template <class T, class Key>
__device__ void warp_write_topk(Key* keys, int n, const T* row, std::int64_t V, int K, float M, float S,
                                float* p_out, std::int32_t* i_out, int lane) {
    int filled = n;
    for (std::int64_t b = 0; b < V && filled < K; b += 32) {
        const bool ninf = b + lane < V && to_f32(row[b + lane]) == -INFINITY;
        const unsigned m = __ballot_sync(full_mask, ninf);
        const int pos = filled + __popc(m & ((1u << lane) - 1u));
        if (ninf && pos < K) keys[pos] = composite(float_key(-INFINITY), static_cast<std::uint32_t>(b + lane));
        filled += __popc(m);
    }
    __syncwarp();
    const float inv_S = 1.0f / S;
    for (int t = lane; t < K; t += 32) {
        const std::uint64_t c = keys[t];
        p_out[t] = expf(composite_value(c) - M) * inv_S;
        i_out[t] = static_cast<std::int32_t>(composite_index(c));
    }
}

}  // namespace fusebench::kernels::topk_detail
