// Fused softmax + top-k in one read of the logits. One block of 256 threads per row walks the row
// in tiles of 4096 elements (16 per thread, 16-byte loads). Each thread keeps an online (max,
// sum of exp) pair. After tile 0 a block-wide binary search over the top 16 key bits gives the
// first threshold: a value at least K elements of tile 0 reach, hence a lower bound of the row's
// K-th largest. Elements at or above the threshold are appended to a shared-memory buffer of
// 64-bit (value key, inverted index) composites; once K + max(K, 64) have piled up (or the buffer
// overflows), an exact radix select keeps the K largest and the threshold rises to them. A final
// select and a bitonic sort give the K winners in order; probabilities use the block-merged max
// and sum. Design notes and measurements: NOTES.md beside this file.
//
// Leftovers of a tile that overflowed are retried against the kept composites (value, then lower
// index), so ties are broken exactly as the semantics say.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/mbarrier.cuh"
#include "kernels/softmax_topk/select.cuh"

#include <cfloat>
#include <type_traits>

namespace fusebench::kernels {
namespace {

using namespace topk_detail;

constexpr int elems_per_thread = 16;                      // per tile
// Candidate buffer = K + slack entries [8 bytes each]: the slack absorbs the candidates of
// several tiles between compactions (about K ln(V / 4096) for random rows).
constexpr int candidate_slack = 2048;

template <class T> struct vec_traits {
    static constexpr int width = 16 / sizeof(T);                 // elements per 16-byte vector
    static constexpr int per_thread = elems_per_thread / width;  // vectors per thread per tile
};

// 16 bytes of T to 16/sizeof(T) floats (exact widening).
template <class T>
__device__ __forceinline__ void widen(const uint4& v, float* f) {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
    if constexpr (sizeof(T) == 4) {
#pragma unroll
        for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(w[i]);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            f[2 * i] = __uint_as_float(w[i] << 16);
            f[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float2 h = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
            f[2 * i] = h.x;
            f[2 * i + 1] = h.y;
        }
    }
}

// Element e (compile-time) of a thread's tile registers, widened to float.
template <class T, int NV>
__device__ __forceinline__ float element(const uint4 (&buf)[NV], int e) {
    constexpr int W = vec_traits<T>::width;
    const uint4& v = buf[e / W];
    const int c = e % W;
    if constexpr (sizeof(T) == 4) {
        return __uint_as_float(c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w);
    } else {
        const unsigned w = (c >> 1) == 0 ? v.x : (c >> 1) == 1 ? v.y : (c >> 1) == 2 ? v.z : v.w;
        if constexpr (std::is_same_v<T, __nv_bfloat16>) {
            return __uint_as_float((c & 1) ? (w & 0xFFFF0000u) : (w << 16));
        } else {
            return __half2float(__ushort_as_half(static_cast<unsigned short>((c & 1) ? (w >> 16) : (w & 0xFFFFu))));
        }
    }
}

struct fused_smem {
    select_smem sel;
    unsigned count;              // appends attempted since the last compaction (may exceed C)
    unsigned kept;               // survivors written to the side array by a compaction
    float threshold;             // x >= threshold may still be in the top K (later tiles)
    std::uint32_t floor_key;     // every buffered key is >= this (the threshold at the last reset)
    std::uint64_t keep_prefix, keep_mask;  // last compaction kept (c & mask) >= prefix
    unsigned bound_count[16][warps_per_block];  // tile-0 binary search, one row per step
    float red_m[warps_per_block], red_s[warps_per_block];
};

// Appends the thread's items whose bit is set (item(e) gives the composite of item e, e < 17)
// with one shared atomic per warp; returns the bits that did not fit in C slots. All 32 lanes call.
template <class Item>
__device__ __forceinline__ unsigned append_items(unsigned bits, Item item, std::uint64_t* cand,
                                                 fused_smem& sm, unsigned C) {
    const int lane = threadIdx.x & 31;
    const unsigned n = __popc(bits);
    unsigned incl = n;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned o = __shfl_up_sync(full_mask, incl, d);
        if (lane >= d) incl += o;
    }
    const unsigned total = __shfl_sync(full_mask, incl, 31);
    if (total == 0) return 0;
    unsigned pos = 0;
    if (lane == 31) pos = atomicAdd(&sm.count, total);
    pos = __shfl_sync(full_mask, pos, 31) + incl - n;
    unsigned left = 0;
#pragma unroll
    for (int e = 0; e <= elems_per_thread; ++e) {
        if ((bits >> e) & 1u) {
            if (pos < C) cand[pos] = item(e);
            else left |= 1u << e;
            ++pos;
        }
    }
    return left;
}

// Keeps exactly the K largest of cand[0, n) (moved to the front, unordered) and raises the
// thresholds. `side` holds K entries; every buffered key is <= max_key. All threads call it.
// Inlined: a call would make the tile loop keep its live values in local memory.
__device__ __forceinline__ void compact(std::uint64_t* cand, std::uint64_t* side, int n, int K, fused_smem& sm,
                                        std::uint32_t max_key = 0xFFFFFFFFu) {
    // Every thread's appends (and reads of the thresholds) before the select reads the buffer:
    // compute-sanitizer racecheck reported read-after-write hazards here without this barrier.
    __syncthreads();
    // Every buffered key lies in [floor_key, max_key]: their common leading bits are known, and the
    // first digit examined is the one right below them.
    const std::uint32_t lo = sm.floor_key, hi = max(max_key, lo);
    const int common = lo == hi ? 32 : __clz(lo ^ hi);
    std::uint64_t mask = common == 0 ? 0ull : ~0ull << (64 - common);
    std::uint64_t prefix = (static_cast<std::uint64_t>(lo) << 32) & mask;
    if (threadIdx.x == 0) sm.kept = 0;  // visible after the select's first barrier
    const auto items = make_strided(n, [cand](int i) { return cand[i]; });
    block_radix_select(K, items, sm.sel, prefix, mask, max(0, 56 - common));
    const int lane = threadIdx.x & 31;
    items([&](std::uint64_t c, bool valid) {
        const bool keep = valid && (c & mask) >= prefix;
        const unsigned b = __ballot_sync(full_mask, keep);
        if (b == 0) return;
        const int leader = __ffs(b) - 1;
        unsigned base = 0;
        if (lane == leader) base = atomicAdd(&sm.kept, static_cast<unsigned>(__popc(b)));
        base = __shfl_sync(full_mask, base, leader);
        if (keep) side[base + __popc(b & ((1u << lane) - 1u))] = c;
    });
    __syncthreads();
    for (int i = threadIdx.x; i < K; i += block_threads) cand[i] = side[i];
    if (threadIdx.x == 0) {
        sm.count = static_cast<unsigned>(K);
        sm.threshold = threshold_from(prefix);
        sm.floor_key = float_key(sm.threshold);
        sm.keep_prefix = prefix;
        sm.keep_mask = mask;
    }
    __syncthreads();
}

// Largest key T (low 16 bits zero) such that at least K of the block's items have key >= T, as a
// float threshold; -inf when fewer than K items are valid. One barrier per bit, no atomics.
template <class Values>
__device__ float block_kth_bound(int K, Values values, fused_smem& sm) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    std::uint32_t lo = 0;
    for (int it = 0; it < 16; ++it) {
        const std::uint32_t cand = lo | (0x80000000u >> it);
        const float cf = threshold_from(static_cast<std::uint64_t>(cand) << 32);
        unsigned n = 0;
        values([&](float v, bool valid) { n += static_cast<unsigned>(valid && v >= cf); });
        n = __reduce_add_sync(full_mask, n);
        if (lane == 0) sm.bound_count[it][warp] = n;
        __syncthreads();
        unsigned total = 0;
#pragma unroll
        for (int w = 0; w < warps_per_block; ++w) total += sm.bound_count[it][w];
        if (total >= static_cast<unsigned>(K)) lo = cand;
    }
    return threshold_from(static_cast<std::uint64_t>(lo) << 32);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Tile ring of v3: one mbarrier per stage, filled by the bulk-copy engine (one arrival: the
// issuing thread's expect_tx; the copy completes the transaction bytes).
__device__ __forceinline__ void stage_issue(std::uint64_t* bar, void* dst, const void* src, unsigned bytes) {
    sm90::mbar_expect_tx(smem_addr(bar), bytes);
    sm90::bulk_copy(smem_addr(dst), src, bytes, smem_addr(bar));
}

__device__ __forceinline__ void stage_wait(std::uint64_t* bar, unsigned parity) {
    asm volatile(
        "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}\n" ::"r"(
            smem_addr(bar)),
        "r"(parity)
        : "memory");
}

enum class load_mode { registers, registers_prefetch, bulk_ring };

template <class T> constexpr int ring_stages = sizeof(T) == 4 ? 3 : 4;  // tiles in flight + 1
// Register cap: 3 blocks of 256 threads per SM (80 registers). With 4 (64 registers) the tile
// path spills; the ring keeps enough bytes in flight with 3.
template <class T> constexpr int min_blocks_per_sm = 3;

template <class T, load_mode Mode>
__global__ void __launch_bounds__(block_threads, min_blocks_per_sm<T>)
    fused_softmax_topk_kernel(const T* __restrict__ logits, float* __restrict__ out_p,
                              std::int32_t* __restrict__ out_i, int V, int K, int C) {
    using traits = vec_traits<T>;
    constexpr int W = traits::width;
    constexpr int NV = traits::per_thread;
    constexpr int tile_vecs = block_threads * NV;
    constexpr int S = ring_stages<T>;
    extern __shared__ __align__(128) std::uint64_t smem_dyn[];
    // [ring of S tiles (bulk_ring only)][C candidate composites][K survivors of a compaction]
    uint4* ring = reinterpret_cast<uint4*>(smem_dyn);
    std::uint64_t* cand = smem_dyn + (Mode == load_mode::bulk_ring ? S * tile_vecs * 2 : 0);
    std::uint64_t* side = cand + C;
    __shared__ fused_smem sm;
    __shared__ std::uint64_t ring_bar[S];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const T* x = logits + static_cast<std::int64_t>(blockIdx.x) * V;
    // Scalar head up to the first 16-byte boundary, whole vectors, scalar tail (< W each).
    const int mis = static_cast<int>(reinterpret_cast<std::uintptr_t>(x) % 16);
    const int head = min(V, mis ? (16 - mis) / static_cast<int>(sizeof(T)) : 0);
    const int nvec = (V - head) / W;
    const int tail_start = head + nvec * W;
    const int tail = V - tail_start;
    const int ntiles = max(1, (nvec + tile_vecs - 1) / tile_vecs);
    const uint4* xv = reinterpret_cast<const uint4*>(x + head);
    // Head elements go to threads [0, head) in tile 0, tail elements to threads [128, 128 + tail)
    // in the last tile: both keep tiles in index order.
    int extra_index = -1;
    if (tid < head) extra_index = tid;
    if (tid >= 128 && tid - 128 < tail) extra_index = tail_start + tid - 128;
    const int extra_tile = extra_index < 0 ? -1 : (extra_index < head ? 0 : ntiles - 1);
    const int refresh_at = K + max(K, 64);  // <= C

    clear_select_smem(sm.sel);
    if (tid == 0) {
        sm.count = 0;
        sm.threshold = -INFINITY;
        sm.floor_key = float_key(-INFINITY);
        if constexpr (Mode == load_mode::bulk_ring) {
            for (int st = 0; st < S; ++st)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&ring_bar[st])) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
    }
    __syncthreads();

    const auto tile_bytes = [&](int t) { return static_cast<unsigned>(min(tile_vecs, nvec - t * tile_vecs)) * 16u; };
    const auto issue = [&](int t) {
        if (nvec > t * tile_vecs) stage_issue(&ring_bar[t % S], ring + (t % S) * tile_vecs, xv + t * tile_vecs, tile_bytes(t));
    };
    if constexpr (Mode == load_mode::bulk_ring) {
        if (tid == 0)
            for (int t = 0; t < min(S, ntiles); ++t) issue(t);
    }

    float m = -INFINITY, s = 0.0f;

    const auto load = [&](uint4 (&buf)[NV], int t) {
        if constexpr (Mode == load_mode::bulk_ring) {
            if (nvec > t * tile_vecs) stage_wait(&ring_bar[t % S], static_cast<unsigned>((t / S) & 1));
            // Unconditional: slots past the end read stale stage bytes, masked by valid(); a
            // conditional load would make the registers loop-carried (and spilled).
            const uint4* st = ring + (t % S) * tile_vecs;
#pragma unroll
            for (int j = 0; j < NV; ++j) buf[j] = st[j * block_threads + tid];
        } else if (nvec > 0) {
#pragma unroll
            for (int j = 0; j < NV; ++j) buf[j] = __ldg(xv + min(t * tile_vecs + j * block_threads + tid, nvec - 1));
        }
    };

    // first: tile 0, passed as a constant at the call sites (peeled out of the loop) so the bound
    // search inlines only there and stays out of the loop body's registers.
    const auto process = [&](bool first, const uint4 (&buf)[NV], int t) {
        const bool last = t == ntiles - 1;
        const bool has_extra = extra_tile == t;
        const float xe = has_extra ? to_f32(x[extra_index]) : -INFINITY;
        // Vectors past the end (last tile only) are not loaded.
        const auto valid = [&](int e) {
            return e == elems_per_thread ? has_extra : (!last || t * tile_vecs + (e / W) * block_threads + tid < nvec);
        };
        float mx = xe;
        {
            float f[elems_per_thread];
#pragma unroll
            for (int j = 0; j < NV; ++j) widen<T>(buf[j], f + j * W);
            if (last) {
#pragma unroll
                for (int e = 0; e < elems_per_thread; ++e) f[e] = valid(e) ? f[e] : -INFINITY;
            }
            // Trees, not chains: 4 levels of dependent latency instead of 16.
            float t8[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) t8[e] = fmaxf(f[e], f[e + 8]);
#pragma unroll
            for (int w = 4; w > 0; w >>= 1) {
#pragma unroll
                for (int e = 0; e < w; ++e) t8[e] = fmaxf(t8[e], t8[e + w]);
            }
            mx = fmaxf(mx, t8[0]);
            if (mx > m) {
                s = s * fast_exp2((m - mx) * log2e);
                m = mx;
            }
            // x - m first, then the scale: a fused x*log2e - m*log2e loses everything at |x| ~ 1e30.
            const float ms = m == -INFINITY ? 0.0f : m;
            float p4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int e = 0; e < elems_per_thread; ++e) p4[e & 3] += fast_exp2((f[e] - ms) * log2e);
            s += (p4[0] + p4[1]) + (p4[2] + p4[3]);
            if (has_extra) s += fast_exp2((xe - ms) * log2e);
        }

        const auto value = [&](int e) { return e == elems_per_thread ? xe : element<T>(buf, e); };
        const auto item = [&](int e) {
            const std::uint32_t idx = e == elems_per_thread
                                          ? static_cast<std::uint32_t>(extra_index)
                                          : static_cast<std::uint32_t>(head + (t * tile_vecs + (e / W) * block_threads + tid) * W + e % W);
            return composite(float_key(value(e)), idx);
        };
        const unsigned C_u = static_cast<unsigned>(C);
        if (first) {
            // The K-th largest of the 256 thread maxima is a lower bound too (K distinct elements
            // reach it) and, for K <= 64, nearly as tight: few of the top K share a thread.
            const float th0 = K <= 64 ? block_kth_bound(K, [&](auto&& f) { f(mx, true); }, sm)
                                      : block_kth_bound(
                                            K,
                                            [&](auto&& f) {
#pragma unroll
                                                for (int e = 0; e <= elems_per_thread; ++e) f(value(e), valid(e));
                                            },
                                            sm);
            if (tid == 0) {  // read by the other threads only after the barrier that ends this tile
                sm.threshold = th0;
                sm.floor_key = float_key(th0);
            }
            unsigned bits = 0;
#pragma unroll
            for (int e = 0; e <= elems_per_thread; ++e) bits |= static_cast<unsigned>(valid(e) && value(e) >= th0) << e;
            unsigned pending = append_items(bits, item, cand, sm, C_u);
            while (__syncthreads_or(pending != 0)) {
                compact(cand, side, C, K, sm);
                const std::uint64_t kp = sm.keep_prefix, km = sm.keep_mask;
                unsigned retry = 0;
#pragma unroll
                for (int e = 0; e <= elems_per_thread; ++e)
                    retry |= static_cast<unsigned>(((pending >> e) & 1u) && (item(e) & km) >= kp) << e;
                pending = append_items(retry, item, cand, sm, C_u);
            }
        } else {
        const float th = sm.threshold;
        unsigned pending = 0;  // bit e: item e of this tile (bit 16: the extra element) did not fit
        if (__any_sync(full_mask, mx >= th)) {
            unsigned bits = 0;
#pragma unroll
            for (int e = 0; e <= elems_per_thread; ++e) bits |= static_cast<unsigned>(valid(e) && value(e) >= th) << e;
            pending = append_items(bits, item, cand, sm, C_u);
        }
        // Overflow: compact, then retry this tile's leftovers against what the compaction kept
        // (indices within a tile are not ordered, so the test is on full composites).
        while (__syncthreads_or(pending != 0)) {
            compact(cand, side, C, K, sm);
            const std::uint64_t kp = sm.keep_prefix, km = sm.keep_mask;
            unsigned retry = 0;
#pragma unroll
            for (int e = 0; e <= elems_per_thread; ++e)
                retry |= static_cast<unsigned>(((pending >> e) & 1u) && (item(e) & km) >= kp) << e;
            pending = append_items(retry, item, cand, sm, C_u);
        }
        // Threshold refresh: once max(K, 64) candidates have piled up, keep the K largest so the
        // threshold follows the running K-th largest (about K / t candidates in tile t, instead
        // of K per tile against the tile-0 bound). The decision goes through a barrier: after the
        // one above, a warp that skips the refresh may run into the next tile and atomicAdd to
        // sm.count before a slower warp has read it, and the two would then disagree about the
        // compaction and its __syncthreads (seen under racecheck as cudaErrorIllegalInstruction).
        const int count = static_cast<int>(sm.count);
        if (__syncthreads_or(count >= refresh_at)) compact(cand, side, min(count, C), K, sm);
        }
    };

    if constexpr (Mode == load_mode::bulk_ring) {
        const auto step = [&](bool first, int t) {
            uint4 buf[NV];
            load(buf, t);
            process(first, buf, t);  // ends with a barrier: stage t % S is free
            if (tid == 0 && t + S < ntiles) {
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // our reads before the copy's writes
                issue(t + S);
            }
        };
        step(true, 0);
        for (int t = 1; t < ntiles; ++t) step(false, t);
    } else {
        constexpr bool prefetch = Mode == load_mode::registers_prefetch;
        uint4 a[NV], b[NV];
        load(a, 0);
        if (prefetch && ntiles > 1) load(b, 1);
        process(true, a, 0);
        for (int t = 1; t < ntiles; t += 2) {
            if (!prefetch) load(b, t);
            if (prefetch && t + 1 < ntiles) load(a, t + 1);
            process(false, b, t);
            if (t + 1 >= ntiles) break;
            if (!prefetch) load(a, t + 1);
            if (prefetch && t + 2 < ntiles) load(b, t + 2);
            process(false, a, t + 1);
        }
    }

    // Row max and sum: warp shuffles, then the 8 warp partials.
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        const float om = __shfl_xor_sync(full_mask, m, d);
        const float os = __shfl_xor_sync(full_mask, s, d);
        merge_max_sum(m, s, om, os);
    }
    if (lane == 0) {
        sm.red_m[warp] = m;
        sm.red_s[warp] = s;
    }
    const int n = static_cast<int>(min(sm.count, static_cast<unsigned>(C)));  // stable since the last barrier
    __syncthreads();
    float M = sm.red_m[0], S_ = sm.red_s[0];
#pragma unroll
    for (int w = 1; w < warps_per_block; ++w) merge_max_sum(M, S_, sm.red_m[w], sm.red_s[w]);
    const std::int64_t out0 = static_cast<std::int64_t>(blockIdx.x) * K;
    // No finite softmax (NaN or +inf present: the sum is NaN; all -inf: M is -inf): NaN, indices 0..K-1.
    if (isnan(S_) || M == -INFINITY || M == INFINITY) {
        for (int k = tid; k < K; k += block_threads) {
            out_p[out0 + k] = __int_as_float(0x7FC00000);
            out_i[out0 + k] = k;
        }
        return;
    }
    if (n > K) compact(cand, side, n, K, sm, float_key(M));
    const float inv = 1.0f / S_;
    const auto write = [&](int k, std::uint64_t c) {
        out_p[out0 + k] = expf(composite_value(c) - M) * inv;
        out_i[out0 + k] = static_cast<std::int32_t>(composite_index(c));
    };
    if (K <= 32) {  // one warp sorts in registers: no block barriers
        if (warp == 0) {
            std::uint64_t c = lane < K ? cand[lane] : 0;
            c = warp_bitonic_sort_desc(c);
            if (lane < K) write(lane, c);
        }
        return;
    }
    const int P = 1 << (32 - __clz(K - 1));
    for (int i = K + tid; i < P; i += block_threads) cand[i] = 0;
    __syncthreads();
    block_bitonic_sort_desc(cand, P);
    for (int k = tid; k < K; k += block_threads) write(k, cand[k]);
}

template <class T, load_mode Mode>
void launch_mode(const softmax_topk_args& a, cudaStream_t stream) {
    const int K = static_cast<int>(a.K);
    const int C = K + candidate_slack;
    // [ring] + candidates + side [bytes]
    const std::size_t ring_bytes = Mode == load_mode::bulk_ring
                                       ? static_cast<std::size_t>(ring_stages<T>) * block_threads * elems_per_thread * sizeof(T)
                                       : 0;
    const std::size_t smem = ring_bytes + static_cast<std::size_t>(C + K) * sizeof(std::uint64_t);
    const auto kernel = fused_softmax_topk_kernel<T, Mode>;
    if (smem > 48 * 1024) {
        const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            throw std::runtime_error(std::string("cudaFuncSetAttribute(fused_softmax_topk_kernel): ") + cudaGetErrorName(e));
        }
    }
    kernel<<<static_cast<unsigned>(a.rows), block_threads, smem, stream>>>(
        static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices, static_cast<int>(a.V), K, C);
    check_launch("fused_softmax_topk_kernel");
}

template <class T>
void launch_typed(const softmax_topk_args& a, fused_version version, cudaStream_t stream) {
    switch (version) {
        case fused_version::v1: launch_mode<T, load_mode::registers>(a, stream); break;
        case fused_version::v2: launch_mode<T, load_mode::registers_prefetch>(a, stream); break;
        case fused_version::v3: launch_mode<T, load_mode::bulk_ring>(a, stream); break;
    }
}

}  // namespace

void launch_softmax_topk_fused(const softmax_topk_args& a, fused_version version,
                               cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_fused");
    if (a.rows == 0) return;
    const std::size_t es = a.type == elem::f32 ? 4 : 2;
    if (reinterpret_cast<std::uintptr_t>(a.d_logits) % es != 0)
        throw std::invalid_argument("launch_softmax_topk_fused: logits not aligned to their element size");
    switch (a.type) {
        case elem::f32: launch_typed<float>(a, version, stream); break;
        case elem::f16: launch_typed<__half>(a, version, stream); break;
        case elem::bf16: launch_typed<__nv_bfloat16>(a, version, stream); break;
    }
}

}  // namespace fusebench::kernels
