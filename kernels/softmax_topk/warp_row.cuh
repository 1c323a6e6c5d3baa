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

// Sorts keys[0, n) descending in shared memory: pads with 0 (below every real composite) up to the
// next power of two, which the buffer must hold.
__device__ __forceinline__ void warp_sort_desc_smem_padded(std::uint64_t* keys, int n, int lane) {
    int P = 32;
    while (P < n) P <<= 1;
    for (int t = n + lane; t < P; t += 32) keys[t] = 0ull;
    warp_bitonic_sort_desc_smem(keys, P, lane);
}

// One compare-exchange of a bitonic network: afterwards a >= b when `desc`, a <= b otherwise.
__device__ __forceinline__ void bitonic_cmpswap(std::uint64_t& a, std::uint64_t& b, bool desc) {
    const bool swap = desc ? (a < b) : (a > b);
    const std::uint64_t t = a;
    a = swap ? b : a;
    b = swap ? t : b;
}

// Sorts keys[0, n) (n <= 32 KPL) descending with one warp in registers and writes keys[0, 32 KPL)
// back (entries from n on are padded with 0, below every real composite). Lane l holds positions
// l KPL .. l KPL + KPL - 1: the first log2(KPL) levels sort within a lane, and each later level
// exchanges through shuffles (distances KPL and up) and then finishes within the lane. The levels
// from 2 KPL on are a loop, not unrolled: a fully unrolled 256-key sort (36 stages, ~2.4k
// instructions of straight code) missed the instruction cache on every row (H100 ncu: most of its
// stall samples were "no instruction"). Against the shared-memory sort (warp_bitonic_sort_desc_smem,
// ~5.4k instructions per 256 keys, each stage a load, compare, store and __syncwarp), ~2.2k.
template <int KPL> __device__ __forceinline__ void warp_sort_desc_regs(std::uint64_t* keys, int n, int lane) {
    std::uint64_t x[KPL];
#pragma unroll
    for (int r = 0; r < KPL; ++r) {
        const int i = lane * KPL + r;
        x[r] = i < n ? keys[i] : 0ull;
    }
#pragma unroll
    for (int k = 2; k <= KPL; k <<= 1)
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1)
#pragma unroll
            for (int r = 0; r < KPL; ++r)
                if (!(r & j)) bitonic_cmpswap(x[r], x[r | j], ((lane * KPL + r) & k) == 0);
#pragma unroll 1
    for (int k = 2 * KPL; k <= 32 * KPL; k <<= 1) {
        const bool desc = ((lane * KPL) & k) == 0;  // the run this lane's positions belong to
#pragma unroll 1
        for (int j = k >> 1; j >= KPL; j >>= 1) {
            const int d = j / KPL;                          // partner lane distance
            const bool keep_max = ((lane & d) == 0) == desc;  // lower position of a descending pair
#pragma unroll
            for (int r = 0; r < KPL; ++r) {
                const std::uint64_t o = __shfl_xor_sync(full_mask, x[r], d);
                x[r] = keep_max ? (o > x[r] ? o : x[r]) : (o < x[r] ? o : x[r]);
            }
        }
#pragma unroll
        for (int j = KPL >> 1; j > 0; j >>= 1)
#pragma unroll
            for (int r = 0; r < KPL; ++r)
                if (!(r & j)) bitonic_cmpswap(x[r], x[r | j], desc);
    }
    __syncwarp();  // every lane has read its keys before any lane writes
#pragma unroll
    for (int r = 0; r < KPL; ++r) keys[lane * KPL + r] = x[r];
    __syncwarp();
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
