// Fused softmax + top-k, v6 `fused_radix`: a radix select whose work does not depend on the order
// or the distribution of the logits (the threshold designs v1-v5 let more candidates through when
// the row rises along its index, and their compactions multiply with ties).
//
// One thread-block cluster of C blocks per row (C = row bytes / 48 KB, 1 to 8); block r of the
// cluster owns a contiguous chunk of the row. Per row:
// 1. one read of the chunk from DRAM: online max / sum of exp per thread, and a 2048-bin histogram
//    of the top 11 bits of each logit's order-preserving key (warp-aggregated shared atomics);
// 2. the blocks add their histograms through distributed shared memory (each block sums 1/C of the
//    bins over the cluster and writes the sums into every block), then every block scans the same
//    sums for the bin that holds the K-th largest;
// 3. when the elements at or above that bin fit the candidate buffer (2048), a second read of the
//    chunk (from L2: at most ~25 MB of rows are in flight, C x 48 KB each) appends them;
//    otherwise the next 11 and then 10 bits are histogrammed among the bin's elements (one read of
//    the chunk each), and after the last digit the K-th key is exact: the elements above it are
//    appended and the ties equal to it are taken in index order (each block takes its share, lower
//    chunks first, with an early exit);
// 4. block 0 gathers the clusters' candidates (at most 2048) through distributed shared memory,
//    selects the exact top K of (value, ~index) composites and sorts them.
// Random logits take passes 1 and 3 (one DRAM read, one L2 read); all-equal rows or rows of few
// distinct values take at most three L2 reads more, however the values are ordered.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/launch_check.hpp"
#include "kernels/softmax_topk/select.cuh"
#include "kernels/softmax_topk/softmax_topk.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

namespace fusebench::kernels {
namespace {

using namespace topk_detail;
namespace cg = cooperative_groups;

constexpr int radix_bins = 2048;           // 11-bit digits (the last digit has 10 bits: 1024 bins)
constexpr int radix_cap = 2048;            // candidates the final select holds [composites]
constexpr int radix_max_cluster = 8;       // portable cluster size
constexpr int radix_chunk_bytes = 48 << 10;  // bytes of a row per block [bytes]
constexpr int radix_blocks_per_sm = 4;     // 64 registers per thread
// 16-byte loads in flight per thread: 4 for fp32, 2 for 16-bit logits (4 spilled: 8 floats a vector)
template <class T> constexpr int radix_unroll = sizeof(T) == 4 ? 4 : 2;

static_assert(radix_cap * sizeof(std::uint64_t) == 2 * radix_bins * sizeof(unsigned),
              "block 0 gathers the candidates into the two local histograms");

struct radix_smem {
    unsigned local_hist[2][radix_bins];  // this block's counts, by level parity (read by the cluster)
    unsigned global_hist[radix_bins];    // the cluster's counts (written by the cluster)
    std::uint64_t cand[radix_cap];       // this block's candidates, then block 0's winners
    select_smem sel;                     // block 0's final select
    float red[warps_per_block];
    unsigned scan_warp[warps_per_block];
    float m, s;  // this block's max and sum of exp(x - m)
    unsigned cand_count;
    unsigned digit, above, in_bin;
};

template <class T> struct alignas(16) vec16 {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
};

// Calls on_vec(x, j0, nvalid) for the chunk [lo, hi) of the row: x holds 16 bytes of elements
// (as float, j0 the index of x[0]), the first nvalid of them real, the rest -inf. The scalar head
// (up to a 16-byte boundary) and tail come one element per call. Trip counts are uniform across
// each warp (on_vec may use warp votes); radix_unroll<T> loads per thread are issued before use.
template <class T, class F>
__device__ __forceinline__ void for_vectors(const T* row, int lo, int hi, F&& on_vec) {
    constexpr int W = vec16<T>::n;
    const T* p = row + lo;
    const int n = hi - lo;
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    int head = static_cast<int>(((16 - addr % 16) % 16) / sizeof(T));
    if (addr % sizeof(T) != 0) head = n;
    if (head > n) head = n;
    const int nvec = (n - head) / W;
    const int tail = head + nvec * W;
    float x[W];
    const auto scalars = [&](int b0, int b1) {
        for (int b = b0; b < b1; b += block_threads) {
            const int i = b + static_cast<int>(threadIdx.x);
            const bool ok = i < b1;
            x[0] = ok ? to_f32(p[i]) : -INFINITY;
#pragma unroll
            for (int e = 1; e < W; ++e) x[e] = -INFINITY;
            on_vec(x, lo + i, ok ? 1 : 0);
        }
    };
    scalars(0, head);
    const auto* v = reinterpret_cast<const vec16<T>*>(p + head);
    for (int b = 0; b < nvec; b += radix_unroll<T> * block_threads) {
        vec16<T> r[radix_unroll<T>];
#pragma unroll
        for (int u = 0; u < radix_unroll<T>; ++u) {
            const int i = b + u * block_threads + static_cast<int>(threadIdx.x);
            if (i < nvec) r[u] = v[i];
        }
#pragma unroll
        for (int u = 0; u < radix_unroll<T>; ++u) {
            const int i = b + u * block_threads + static_cast<int>(threadIdx.x);
            const bool ok = i < nvec;
#pragma unroll
            for (int e = 0; e < W; ++e) x[e] = ok ? to_f32(r[u].v[e]) : -INFINITY;
            on_vec(x, lo + head + i * W, ok ? W : 0);
        }
    }
    scalars(tail, n);
}

// Scans hist[0, nbins) from the top for the bin where the count of larger items reaches `need`
// (the bins hold at least `need`): sm.digit, sm.above (count in higher bins), sm.in_bin. All
// threads call it; the results are visible to all on return.
__device__ __forceinline__ void scan_digit(const unsigned* hist, int nbins, unsigned need, radix_smem& sm) {
    const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
    const int per = nbins / block_threads;  // 8 or 4
    const int top = nbins - 1 - t * per;    // this thread's bins: top, top - 1, ..., top - per + 1
    unsigned cnt[radix_bins / block_threads], tot = 0;
#pragma unroll
    for (int i = 0; i < radix_bins / block_threads; ++i) {
        cnt[i] = i < per ? hist[top - i] : 0u;
        tot += cnt[i];
    }
    unsigned incl = tot;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned o = __shfl_up_sync(full_mask, incl, d);
        if (lane >= d) incl += o;
    }
    if (lane == 31) sm.scan_warp[warp] = incl;
    __syncthreads();
    for (int w = 0; w < warp; ++w) incl += sm.scan_warp[w];
    unsigned above = incl - tot;
    if (above < need && incl >= need) {
#pragma unroll
        for (int i = 0; i < radix_bins / block_threads; ++i) {
            if (i < per && above < need && above + cnt[i] >= need) {
                sm.digit = static_cast<unsigned>(top - i);
                sm.above = above;
                sm.in_bin = cnt[i];
            }
            above += cnt[i];
        }
    }
    __syncthreads();
}

// The cluster's histogram: block `rank` sums bins b = rank (mod C) over the C blocks' local_hist[par]
// and writes each sum into every block's global_hist. Between two cluster barriers.
__device__ __forceinline__ void cluster_reduce_hist(cg::cluster_group& cl, radix_smem& sm, int par, int nbins, int C,
                                                    int rank) {
    for (int b = static_cast<int>(threadIdx.x) * C + rank; b < nbins; b += block_threads * C) {
        unsigned s = 0;
        for (int c = 0; c < C; ++c) s += *cl.map_shared_rank(&sm.local_hist[par][b], c);
        for (int c = 0; c < C; ++c) *cl.map_shared_rank(&sm.global_hist[b], c) = s;
    }
}

__device__ __forceinline__ void append(radix_smem& sm, std::uint32_t key, int j) {
    const unsigned pos = atomicAdd(&sm.cand_count, 1u);
    sm.cand[pos] = composite(key, static_cast<std::uint32_t>(j));
}

template <class T>
__global__ void __launch_bounds__(block_threads, radix_blocks_per_sm)
    softmax_topk_radix_kernel(const T* __restrict__ logits, float* __restrict__ probs,
                              std::int32_t* __restrict__ indices, int V, int K, int chunk, std::int64_t row0) {
    constexpr int W = vec16<T>::n;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    radix_smem& sm = *reinterpret_cast<radix_smem*>(smem_raw);
    cg::cluster_group cl = cg::this_cluster();
    const int C = static_cast<int>(cl.num_blocks());
    const int rank = static_cast<int>(cl.block_rank());
    const int tid = static_cast<int>(threadIdx.x);
    const std::int64_t row = row0 + blockIdx.x / C;
    const T* x = logits + row * V;
    const int lo = min(V, rank * chunk), hi = min(V, lo + chunk);

    // 1. One read: max / sum and the top-digit histogram.
    for (int b = tid; b < radix_bins; b += block_threads) sm.local_hist[0][b] = 0;
    __syncthreads();
    float m = -INFINITY, s = 0.0f;
    for_vectors(x, lo, hi, [&](const float (&v)[W], int, int nvalid) {
        float vm = v[0];
#pragma unroll
        for (int e = 1; e < W; ++e) vm = fmaxf(vm, v[e]);
        if (vm > m) {
            s = s == 0.0f ? 0.0f : s * fast_exp2((m - vm) * log2e);
            m = vm;
        }
        // -inf adds nothing (and -inf - -inf would be NaN); NaN and +inf - +inf make the sum NaN.
#pragma unroll
        for (int e = 0; e < W; ++e) s += v[e] == -INFINITY ? 0.0f : fast_exp2((v[e] - m) * log2e);
#pragma unroll
        for (int e = 0; e < W; ++e) hist_add(sm.local_hist[0], float_key(v[e]) >> 21, e < nvalid);
    });
    const float mb = block_reduce_max(m, sm.red);
    float sb = s == 0.0f ? 0.0f : s * fast_exp2((m - mb) * log2e);
    sb = block_reduce_sum(sb, sm.red);
    if (tid == 0) {
        sm.m = mb;
        sm.s = sb;
    }
    cl.sync();
    float M = -INFINITY, S = 0.0f;
    for (int c = 0; c < C; ++c) merge_max_sum(M, S, *cl.map_shared_rank(&sm.m, c), *cl.map_shared_rank(&sm.s, c));
    // Same inputs in the same order in every block: the branch is uniform over the cluster.
    const bool finite = !(S != S || M == INFINITY || M == -INFINITY);
    if (finite) {
        cluster_reduce_hist(cl, sm, 0, radix_bins, C, rank);
        cl.sync();

        // 2. Digits from the top until the candidates fit or the K-th key is exact.
        unsigned need = static_cast<unsigned>(K), above_all = 0;
        std::uint32_t prefix = 0;
        int shift = 21, nbins = radix_bins, par = 0;
        bool exact = false;
        unsigned d_last = 0;
        for (;;) {
            scan_digit(sm.global_hist, nbins, need, sm);
            const unsigned d = sm.digit, above = sm.above, in_bin = sm.in_bin;
            need -= above;
            above_all += above;
            prefix |= d << shift;
            if (above_all + in_bin <= static_cast<unsigned>(radix_cap)) break;
            if (shift == 0) {
                exact = true;
                d_last = d;
                break;
            }
            const int next_shift = shift == 21 ? 10 : 0;
            const int next_bins = shift == 21 ? radix_bins : radix_bins / 2;
            const std::uint32_t hi_prefix = prefix >> shift;
            const int np = par ^ 1;  // its last readers finished before the previous level's barrier
            for (int b = tid; b < next_bins; b += block_threads) sm.local_hist[np][b] = 0;
            __syncthreads();
            for_vectors(x, lo, hi, [&](const float (&v)[W], int, int nvalid) {
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const std::uint32_t k = float_key(v[e]);
                    hist_add(sm.local_hist[np], (k >> next_shift) & static_cast<unsigned>(next_bins - 1),
                             e < nvalid && (k >> shift) == hi_prefix);
                }
            });
            cl.sync();
            cluster_reduce_hist(cl, sm, np, next_bins, C, rank);
            cl.sync();
            par = np;
            shift = next_shift;
            nbins = next_bins;
        }

        // 3. Candidates into this block's buffer.
        if (tid == 0) sm.cand_count = 0;
        __syncthreads();
        if (!exact || above_all > 0) {
            // Keys at or above the bin (prefix's lower bits are zero), or strictly above the exact K-th.
            const std::uint32_t lowest = exact ? prefix + 1 : prefix;
            for_vectors(x, lo, hi, [&](const float (&v)[W], int j0, int nvalid) {
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const std::uint32_t k = float_key(v[e]);
                    if (e < nvalid && k >= lowest) append(sm, k, j0 + e);
                }
            });
        }
        if (exact) {
            // `need` ties equal to the K-th key, lowest indices first: lower chunks give theirs first.
            unsigned before = 0;
            for (int c = 0; c < rank; ++c) before += *cl.map_shared_rank(&sm.local_hist[par][d_last], c);
            const unsigned mine = sm.local_hist[par][d_last];
            const unsigned take = before >= need ? 0u : min(mine, need - before);
            const int lane = tid & 31, warp = tid >> 5;
            unsigned taken = 0;
            for (int b = lo; b < hi && taken < take; b += block_threads) {
                const int j = b + tid;
                const bool tie = j < hi && float_key(to_f32(x[j])) == prefix;
                const unsigned bal = __ballot_sync(full_mask, tie);
                if (lane == 0) sm.scan_warp[warp] = static_cast<unsigned>(__popc(bal));
                __syncthreads();
                unsigned before_w = 0, tile = 0;
                for (int w = 0; w < warps_per_block; ++w) {
                    const unsigned c = sm.scan_warp[w];
                    before_w += w < warp ? c : 0u;
                    tile += c;
                }
                const unsigned r = taken + before_w + static_cast<unsigned>(__popc(bal & ((1u << lane) - 1u)));
                if (tie && r < take) append(sm, prefix, j);
                taken += tile;
                __syncthreads();
            }
        }
        __syncthreads();
    }
    cl.sync();  // every block's candidates are in place, the tie counts read

    // 4. Block 0 gathers, selects and sorts.
    auto* gathered = reinterpret_cast<std::uint64_t*>(&sm.local_hist[0][0]);
    unsigned n = 0;
    if (rank == 0 && finite) {
        for (int c = 0; c < C; ++c) {
            const unsigned nc = *cl.map_shared_rank(&sm.cand_count, c);
            const std::uint64_t* src = cl.map_shared_rank(&sm.cand[0], c);
            for (unsigned i = static_cast<unsigned>(tid); i < nc; i += block_threads) gathered[n + i] = src[i];
            n += nc;
        }
    }
    cl.sync();  // no block leaves while block 0 reads its shared memory
    if (rank != 0) return;
    float* p_out = probs + row * K;
    std::int32_t* i_out = indices + row * K;
    if (!finite) {
        // No finite softmax (PyTorch gives NaN): NaN probabilities, indices 0..K-1.
        for (int t = tid; t < K; t += block_threads) {
            p_out[t] = __int_as_float(0x7FC00000);
            i_out[t] = t;
        }
        return;
    }
    std::uint64_t* win = sm.cand;
    if (n > static_cast<unsigned>(K)) {
        clear_select_smem(sm.sel);
        __syncthreads();
        std::uint64_t sel_prefix = 0, sel_mask = 0;
        block_radix_select(K, make_strided(static_cast<int>(n), [gathered](int i) { return gathered[i]; }), sm.sel,
                           sel_prefix, sel_mask);
        if (tid == 0) sm.cand_count = 0;
        __syncthreads();
        for (unsigned i = static_cast<unsigned>(tid); i < n; i += block_threads) {
            if ((gathered[i] & sel_mask) >= sel_prefix) win[atomicAdd(&sm.cand_count, 1u)] = gathered[i];
        }
    } else {
        for (unsigned i = static_cast<unsigned>(tid); i < n; i += block_threads) win[i] = gathered[i];
    }
    const int P = 1 << (32 - __clz((K - 1) | 1));  // next power of two >= K (K = 1 gives 2)
    for (int i = K + tid; i < P; i += block_threads) win[i] = 0;
    __syncthreads();
    block_bitonic_sort_desc(win, P);
    const float inv_S = 1.0f / S;
    for (int t = tid; t < K; t += block_threads) {
        const std::uint64_t c = win[t];
        p_out[t] = expf(composite_value(c) - M) * inv_S;
        i_out[t] = static_cast<std::int32_t>(composite_index(c));
    }
}

template <class T> void launch_radix(const softmax_topk_args& a, cudaStream_t stream) {
    const std::int64_t row_bytes = a.V * static_cast<std::int64_t>(sizeof(T));
    const int C = static_cast<int>(
        std::clamp<std::int64_t>((row_bytes + radix_chunk_bytes - 1) / radix_chunk_bytes, 1, radix_max_cluster));
    std::int64_t chunk = (a.V + C - 1) / C;
    chunk = (chunk + 63) / 64 * 64;
    const auto smem = static_cast<int>(sizeof(radix_smem));
    auto* kern = softmax_topk_radix_kernel<T>;
    check_call(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "softmax_topk_radix_kernel: cudaFuncSetAttribute");
    const std::int64_t max_rows = 0x7FFFFFFF / C;  // grid.x holds rows x C blocks
    for (std::int64_t r0 = 0; r0 < a.rows; r0 += max_rows) {
        const std::int64_t nr = std::min(max_rows, a.rows - r0);
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(static_cast<unsigned>(nr * C));
        cfg.blockDim = dim3(block_threads);
        cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
        cfg.stream = stream;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = static_cast<unsigned>(C);
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        check_call(cudaLaunchKernelEx(&cfg, kern, static_cast<const T*>(a.d_logits), a.d_probs, a.d_indices,
                                      static_cast<int>(a.V), static_cast<int>(a.K), static_cast<int>(chunk), r0),
                   "softmax_topk_radix_kernel: launch");
        check_launch("softmax_topk_radix_kernel");
    }
}

}  // namespace

void launch_softmax_topk_fused_radix(const softmax_topk_args& a, cudaStream_t stream) {
    validate(a, softmax_topk_max_k, "launch_softmax_topk_fused_radix");
    if (a.rows == 0) return;
    dispatch_elem(a.type, [&](auto v) { launch_radix<decltype(v)>(a, stream); });
}

}  // namespace fusebench::kernels
