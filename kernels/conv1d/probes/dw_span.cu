// Diagnostic (not part of the build): where the time of the depthwise conv1d at b1 c2048 L4096 w4
// (issue 20(b), 33.6 MB) goes, timed by the suite's own timer (harness time_with_tracer: cold L2 by
// the harness's l2_flusher, KIND_KERNEL records, the launch behind a stream gate), beside plain
// copies of the same bytes in several shapes, cudaMemcpyAsync of sizes from 16.8 MB to 1 GiB, and
// per-block %globaltimer stamps of the library kernel's configuration and of a copy (the launch
// ramp, the blocks per SM, the completion rate over time, the tail).
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. \
//        kernels/conv1d/probes/dw_span.cu <build>/libfusebench_harness.a -lcupti -lcuda -lcublas \
//        -lcublasLt -o dw_span && ./dw_span          (./dw_span ncu: one launch each, no tracer, for ncu;
//        ./dw_span configs: the library kernel in other launch configurations at the target case)
#include "kernels/conv1d/conv1d.cu"

#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/stats.hpp"
#include "harness/timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace fusebench;
namespace fk = fusebench::kernels;

namespace {

__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned smid() {
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

constexpr int stamp_words = 10;  // per block: start, smid, the end of each of 8 warps

// The library's configuration at b1 c2048 L4096 16-bit (rows_spans grid, 256 threads, 1 vector per
// thread, WHOLE, batch 1: the row is the channel), its own device functions, plus stamps: thread 0
// the block's start and SM, each warp's lane 0 the time its store was issued.
template <typename T, int W>
__global__ void __launch_bounds__(256, 8) dw_stamped(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                                    T* __restrict__ y, int vecs_per_row, unsigned long long* st) {
    const unsigned b = blockIdx.x + blockIdx.y * gridDim.x;
    if (threadIdx.x == 0) {
        st[b * stamp_words] = gtimer();
        st[b * stamp_words + 1] = smid();
    }
    const unsigned span = blockIdx.y, r = blockIdx.x;
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    const unsigned j = span * blockDim.x + threadIdx.x;
    const unsigned i = r * static_cast<unsigned>(vecs_per_row) + j;
    const bool lane0 = (threadIdx.x & 31u) == 0;
    const uint4 cur = __ldg(xv + i);
    fk::dw_halo_t<T> prev{};
    if (lane0 && j > 0) prev = __ldg(reinterpret_cast<const fk::dw_halo_t<T>*>(xv + i) - 1);
    float wv[W], bc;
    fk::dw_weights<T, W>(w, bias, static_cast<int>(r), wv, bc);
    reinterpret_cast<uint4*>(y)[i] = fk::dw_outputs<T, W, true>(cur, prev, lane0, wv, bc);
    if (lane0) st[b * stamp_words + 2 + threadIdx.x / 32] = gtimer();
}

// A 16-byte copy, one vector per thread, 256 threads (the conv1d probes' copy), stamped as above.
__global__ void copy_stamped(const uint4* __restrict__ x, uint4* __restrict__ y, unsigned long long* st) {
    const unsigned b = blockIdx.x;
    if (threadIdx.x == 0) {
        st[b * stamp_words] = gtimer();
        st[b * stamp_words + 1] = smid();
    }
    const std::size_t i = b * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    y[i] = __ldg(x + i);
    if ((threadIdx.x & 31u) == 0) st[b * stamp_words + 2 + threadIdx.x / 32] = gtimer();
}

// Copy shapes. copyV: V vectors per thread, each block one contiguous stretch of V x blockDim.x
// vectors (thread tid: tid + k blockDim.x), all V loads issued before the first store.
template <int V>
__global__ void copy_block(const uint4* __restrict__ x, uint4* __restrict__ y, std::size_t n) {
    const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * V + threadIdx.x;
    uint4 v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
        if (i < n) v[k] = __ldg(x + i);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
        if (i < n) y[i] = v[k];
    }
}

// Persistent, equal bytes per block: grid = resident blocks (SMs x 8 of 256), block b the
// contiguous vectors [n b / G, n (b + 1) / G), up to MAXV per thread, all loads first.
template <int MAXV>
__global__ void __launch_bounds__(256, 8) copy_persistent_contig(const uint4* __restrict__ x, uint4* __restrict__ y, std::size_t n) {
    const std::size_t lo = n * blockIdx.x / gridDim.x, hi = n * (blockIdx.x + 1) / gridDim.x;
    uint4 v[MAXV];
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
        const std::size_t i = lo + threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
        if (i < hi) v[k] = __ldg(x + i);
    }
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
        const std::size_t i = lo + threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
        if (i < hi) y[i] = v[k];
    }
}

// Persistent, grid-stride (thread g: g + k T), up to MAXV per thread, all loads first.
template <int MAXV>
__global__ void __launch_bounds__(256, 8) copy_persistent_stride(const uint4* __restrict__ x, uint4* __restrict__ y, std::size_t n) {
    const std::size_t T = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t g = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    uint4 v[MAXV];
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
        const std::size_t i = g + k * T;
        if (i < n) v[k] = __ldg(x + i);
    }
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
        const std::size_t i = g + k * T;
        if (i < n) y[i] = v[k];
    }
}

__global__ void read_only(const uint4* __restrict__ x, std::size_t n, unsigned* sink) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const uint4 v = __ldg(x + i);
        if ((v.x ^ v.y ^ v.z ^ v.w) == 0x12345679u && v.x == 0x9u) sink[0] = v.y;
    }
}
__global__ void write_only(uint4* __restrict__ y, std::size_t n) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const unsigned u = static_cast<unsigned>(i);
        y[i] = make_uint4(u, u ^ 0x55555555u, u + 0x9e3779b9u, ~u);
    }
}
__global__ void fill_f32(float* p, std::size_t n, unsigned seed) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = static_cast<float>(h & 0xffffff) / 8388608.0f - 1.0f;
    }
}

struct kern {
    std::string name;
    double traffic;  // bytes the floor charges [B]
    std::function<void(cudaStream_t)> launch;
};

void summarize_stamps(const char* name, const std::vector<unsigned long long>& st, unsigned blocks, double x_bytes_per_block,
                      int resident_per_sm) {
    unsigned long long t0 = ~0ull, t1 = 0;
    std::vector<unsigned long long> starts(blocks), ends(blocks);
    int max_sm = 0;
    for (unsigned b = 0; b < blocks; ++b) {
        starts[b] = st[b * stamp_words];
        unsigned long long e = 0;
        for (int k = 0; k < 8; ++k) e = std::max(e, st[b * stamp_words + 2 + k]);
        ends[b] = e;
        t0 = std::min(t0, starts[b]);
        t1 = std::max(t1, e);
        max_sm = std::max(max_sm, static_cast<int>(st[b * stamp_words + 1]));
    }
    std::vector<int> per_sm(max_sm + 1, 0);
    std::vector<unsigned long long> sm_first(max_sm + 1, ~0ull), sm_last_end(max_sm + 1, 0);
    for (unsigned b = 0; b < blocks; ++b) {
        const int s = static_cast<int>(st[b * stamp_words + 1]);
        ++per_sm[s];
        sm_first[s] = std::min(sm_first[s], starts[b]);
        sm_last_end[s] = std::max(sm_last_end[s], ends[b]);
    }
    std::vector<unsigned long long> ss = starts;
    std::sort(ss.begin(), ss.end());
    const int sms_used = static_cast<int>(std::count_if(per_sm.begin(), per_sm.end(), [](int c) { return c > 0; }));
    const unsigned wave = std::min<unsigned>(blocks, static_cast<unsigned>(sms_used * resident_per_sm));
    unsigned long long first_all = 0, sm_end_min = ~0ull;
    for (int s = 0; s <= max_sm; ++s)
        if (per_sm[s] > 0) {
            first_all = std::max(first_all, sm_first[s] - t0);
            sm_end_min = std::min(sm_end_min, sm_last_end[s]);
        }
    int mn = 1 << 30, mx = 0;
    for (int c : per_sm)
        if (c > 0) mn = std::min(mn, c), mx = std::max(mx, c);
    double life_sum[4] = {0, 0, 0, 0};
    int life_n[4] = {0, 0, 0, 0};
    for (unsigned b = 0; b < blocks; ++b) {
        const int q = std::min(3, static_cast<int>(4.0 * (starts[b] - t0) / std::max(1.0, static_cast<double>(t1 - t0))));
        life_sum[q] += static_cast<double>(ends[b] - starts[b]);
        ++life_n[q];
    }
    std::printf("STAMP %-14s span %.2f us | SMs %d, blocks per SM %d..%d | every SM started %.2f us, block #%u (first wave full) %.2f us, "
                "last block start %.2f us (then %.2f us to the end) | first SM idle for good %.2f us before the end\n",
                name, (t1 - t0) / 1e3, sms_used, mn, mx, first_all / 1e3, wave, (ss[wave - 1] - t0) / 1e3, (ss.back() - t0) / 1e3,
                (t1 - ss.back()) / 1e3, (t1 - sm_end_min) / 1e3);
    std::printf("STAMP %-14s block lifetime (start -> last warp's store issued) by quarter of the span: %.2f / %.2f / %.2f / %.2f us (n %d/%d/%d/%d)\n",
                name, life_sum[0] / std::max(1, life_n[0]) / 1e3, life_sum[1] / std::max(1, life_n[1]) / 1e3,
                life_sum[2] / std::max(1, life_n[2]) / 1e3, life_sum[3] / std::max(1, life_n[3]) / 1e3, life_n[0], life_n[1], life_n[2],
                life_n[3]);
    // x bytes whose block ended in each 0.5 us bin, as GB/s of x (reads) and of x + y (traffic).
    const int bins = static_cast<int>((t1 - t0) / 500) + 1;
    std::vector<double> done(bins, 0), started(bins, 0);
    for (unsigned b = 0; b < blocks; ++b) {
        done[std::min(bins - 1, static_cast<int>((ends[b] - t0) / 500))] += x_bytes_per_block;
        started[std::min(bins - 1, static_cast<int>((starts[b] - t0) / 500))] += 1;
    }
    std::printf("STAMP %-14s per 0.5 us bin: x+y traffic completed [GB/s] / blocks started:", name);
    for (int k = 0; k < bins; ++k) std::printf(" %.0f/%.0f", 2 * done[k] / 500.0, started[k]);
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    const bool ncu_mode = argc > 1 && std::strcmp(argv[1], "ncu") == 0;
    const bool configs_mode = argc > 1 && std::strcmp(argv[1], "configs") == 0;
    std::string reason;
    std::unique_ptr<activity_tracer> tracer;
    if (!ncu_mode) {
        tracer = activity_tracer::create(reason);  // before the modules load (CUPTI instruments at load)
        if (!tracer) {
            std::fprintf(stderr, "no CUPTI tracer: %s\n", reason.c_str());
            return 1;
        }
    }
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    const device_info di = query_device(dev);
    const int sms = di.sm_count;
    std::printf("device %s (%s), %d SMs, L2 %zu B\n", di.name.c_str(), di.uuid.c_str(), sms, di.l2_bytes);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    l2_flusher flusher(di.l2_bytes, sms);

    double copy_gbps = 0;
    if (!ncu_mode) {
        const device_ceilings c = measure_ceilings(dev, s, false);
        copy_gbps = c.copy_gbps.value.value_or(0);
        std::printf("ceilings: copy %.1f GB/s (%s), read %.1f, write %.1f, copy kernel %.1f GB/s\n", copy_gbps, c.copy_gbps.method.c_str(),
                    c.read_gbps.value.value_or(0), c.write_gbps.value.value_or(0), c.copy_kernel_gbps.value.value_or(0));
    }

    const std::size_t big = std::size_t{1} << 30;
    device_buffer xb(big), yb(big), yref(std::size_t{64} << 20), sink(16);
    const fk::conv1d_depthwise_shape dws{1, 2048, 4096, 4}, dws4{1, 4096, 4096, 4};
    device_buffer wb(4096 * 4 * 4), bb(4096 * 4);
    detail::launch_fill_random_16bit(xb.get(), big / 2, true, 20, s);
    fill_f32<<<64, 256, 0, s>>>(static_cast<float*>(wb.get()), 4096 * 4, 7);
    fill_f32<<<16, 256, 0, s>>>(static_cast<float*>(bb.get()), 4096, 9);
    CUDA_CHECK(cudaStreamSynchronize(s));
    // 16-bit weights: the fp32 buffers' first halves reinterpreted (finite small values either way
    // for fp16; for bf16 the high halves of fp32 values in [-1, 1) are the same numbers rounded).
    device_buffer w16(4096 * 4 * 2), b16(4096 * 2);
    detail::launch_fill_random_16bit(w16.get(), 4096 * 4, true, 21, s);
    detail::launch_fill_random_16bit(b16.get(), 4096, true, 22, s);
    device_buffer w16h(4096 * 4 * 2), b16h(4096 * 2), xh(std::size_t{16777216});
    detail::launch_fill_random_16bit(w16h.get(), 4096 * 4, false, 23, s);
    detail::launch_fill_random_16bit(b16h.get(), 4096, false, 24, s);
    detail::launch_fill_random_16bit(xh.get(), std::size_t{16777216} / 2, false, 25, s);
    device_buffer xc(std::size_t{16777216});
    CUDA_CHECK(cudaMemset(xc.get(), 0x3C, std::size_t{16777216}));
    device_buffer xf(std::size_t{33554432});
    fill_f32<<<static_cast<unsigned>(33554432 / 4 / 256), 256, 0, s>>>(static_cast<float*>(xf.get()), 33554432 / 4, 11);
    CUDA_CHECK(cudaStreamSynchronize(s));

    const std::size_t x16 = std::size_t{16777216};  // x bytes of the target case, 16-bit
    const double wbias16 = 2048.0 * 4 * 2 + 2048.0 * 2;
    const double t16 = 2.0 * x16 + wbias16, t32 = 4.0 * x16 + 2 * wbias16;
    const std::size_t nv = x16 / 16;
    const uint4* X = static_cast<const uint4*>(xb.get());
    uint4* Y = static_cast<uint4*>(yb.get());
    const unsigned resident = static_cast<unsigned>(sms) * 8;
    device_buffer stamps(std::size_t{8192} * stamp_words * 8);
    auto* ST = static_cast<unsigned long long*>(stamps.get());

    std::vector<kern> ks{
        {"dw_lib bf16", t16,
         [&](cudaStream_t st) { fk::launch_conv1d_depthwise_fused(fk::elem::bf16, xb.get(), w16.get(), b16.get(), yb.get(), dws, st); }},
        {"dw_lib fp16", t16,
         [&](cudaStream_t st) { fk::launch_conv1d_depthwise_fused(fk::elem::f16, xh.get(), w16h.get(), b16h.get(), yb.get(), dws, st); }},
        {"dw_lib fp32", t32,
         [&](cudaStream_t st) { fk::launch_conv1d_depthwise_fused(fk::elem::f32, xf.get(), wb.get(), bb.get(), yb.get(), dws, st); }},
        {"dw_stamped bf16", t16,
         [&](cudaStream_t st) {
             dw_stamped<__nv_bfloat16, 4><<<dim3(2048, 2), 256, 0, st>>>(static_cast<const __nv_bfloat16*>(xb.get()),
                                                                       static_cast<const __nv_bfloat16*>(w16.get()),
                                                                       static_cast<const __nv_bfloat16*>(b16.get()),
                                                                       static_cast<__nv_bfloat16*>(yb.get()), 512, ST);
         }},
        {"copy1 (256 thr)", t16, [&](cudaStream_t st) { copy_block<1><<<static_cast<unsigned>(nv / 256), 256, 0, st>>>(X, Y, nv); }},
        {"copy_stamped", t16, [&](cudaStream_t st) { copy_stamped<<<static_cast<unsigned>(nv / 256), 256, 0, st>>>(X, Y, ST); }},
        {"memcpy D2D", t16, [&](cudaStream_t st) { CUDA_CHECK(cudaMemcpyAsync(Y, X, x16, cudaMemcpyDeviceToDevice, st)); }},
        {"harness copy kernel", t16, [&](cudaStream_t st) { detail::launch_stream_copy(X, Y, x16, st); }},
        {"copy2 (8 KB/blk)", t16, [&](cudaStream_t st) { copy_block<2><<<static_cast<unsigned>(nv / 512), 256, 0, st>>>(X, Y, nv); }},
        {"copy4 (16 KB/blk)", t16, [&](cudaStream_t st) { copy_block<4><<<static_cast<unsigned>(nv / 1024), 256, 0, st>>>(X, Y, nv); }},
        {"copy1 (128 thr)", t16, [&](cudaStream_t st) { copy_block<1><<<static_cast<unsigned>(nv / 128), 128, 0, st>>>(X, Y, nv); }},
        {"copy1 (1024 thr)", t16, [&](cudaStream_t st) { copy_block<1><<<static_cast<unsigned>(nv / 1024), 1024, 0, st>>>(X, Y, nv); }},
        {"copy pers contig", t16,
         [&](cudaStream_t st) { copy_persistent_contig<4><<<resident, 256, 0, st>>>(X, Y, nv); }},
        {"copy pers stride", t16,
         [&](cudaStream_t st) { copy_persistent_stride<4><<<resident, 256, 0, st>>>(X, Y, nv); }},
        {"read x only", t16 / 2,
         [&](cudaStream_t st) { read_only<<<static_cast<unsigned>(nv / 256), 256, 0, st>>>(X, nv, static_cast<unsigned*>(sink.get())); }},
        {"write y only", t16 / 2, [&](cudaStream_t st) { write_only<<<static_cast<unsigned>(nv / 256), 256, 0, st>>>(Y, nv); }},
        {"empty kernel", 0, [&](cudaStream_t st) { detail::launch_empty_kernel(st); }},
        {"dw_lib bf16 c4096", 2 * t16,
         [&](cudaStream_t st) { fk::launch_conv1d_depthwise_fused(fk::elem::bf16, xb.get(), w16.get(), b16.get(), yb.get(), dws4, st); }},
        {"copy1 x33.5MB", 2 * t16, [&](cudaStream_t st) { copy_block<1><<<static_cast<unsigned>(2 * nv / 256), 256, 0, st>>>(X, Y, 2 * nv); }},
        // The same on x of one repeated byte (the earlier probes' memset inputs) instead of random values.
        {"dw_lib bf16 const-x", t16,
         [&](cudaStream_t st) { fk::launch_conv1d_depthwise_fused(fk::elem::bf16, xc.get(), w16.get(), b16.get(), yb.get(), dws, st); }},
        {"copy1 const-x", t16,
         [&](cudaStream_t st) { copy_block<1><<<static_cast<unsigned>(nv / 256), 256, 0, st>>>(static_cast<const uint4*>(xc.get()), Y, nv); }},
    };
    // cudaMemcpyAsync and the 1-vector copy kernel by size (x bytes), up to the ceiling's 1 GiB.
    for (std::size_t mb : {32, 64, 128, 256, 1024}) {
        const std::size_t bytes = mb << 20;
        ks.push_back({"memcpy " + std::to_string(mb) + " MiB", 2.0 * bytes,
                      [=](cudaStream_t st) { CUDA_CHECK(cudaMemcpyAsync(Y, X, bytes, cudaMemcpyDeviceToDevice, st)); }});
        ks.push_back({"copy1 " + std::to_string(mb) + " MiB", 2.0 * bytes, [=](cudaStream_t st) {
                          copy_block<1><<<static_cast<unsigned>(bytes / 16 / 256), 256, 0, st>>>(X, Y, bytes / 16);
                      }});
    }

    // Outputs: the stamped kernel's y equals the library's (bit for bit); the copies copy.
    if (!ncu_mode) {
        std::vector<unsigned char> a(x16), b(x16), xin(x16);
        ks[0].launch(s);
        CUDA_CHECK(cudaMemcpyAsync(yref.get(), Y, x16, cudaMemcpyDeviceToDevice, s));
        ks[3].launch(s);
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaMemcpy(a.data(), yref.get(), x16, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(b.data(), Y, x16, cudaMemcpyDeviceToHost));
        std::printf("CHECK dw_stamped vs library y: %s\n", std::memcmp(a.data(), b.data(), x16) == 0 ? "equal" : "DIFFER");
        CUDA_CHECK(cudaMemcpy(xin.data(), X, x16, cudaMemcpyDeviceToHost));
        for (int k : {4, 8, 9, 12, 13}) {
            CUDA_CHECK(cudaMemset(Y, 0, x16));
            ks[k].launch(s);
            CUDA_CHECK(cudaStreamSynchronize(s));
            CUDA_CHECK(cudaMemcpy(b.data(), Y, x16, cudaMemcpyDeviceToHost));
            std::printf("CHECK %-18s copies x: %s\n", ks[k].name.c_str(), std::memcmp(xin.data(), b.data(), x16) == 0 ? "yes" : "NO");
        }
    }

    if (ncu_mode) {
        for (int k : {0, 1, 2, 4, 7, 8, 12, 14, 15}) {
            flusher.flush(s);
            CUDA_CHECK(cudaDeviceSynchronize());
            ks[k].launch(s);
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        return 0;
    }

    auto time_one = [&](const kern& k, bool serial) {
        timing_request req;
        req.launch = k.launch;
        req.mode = cache_mode::cold;
        req.policy.warmup = 3;
        req.policy.min_samples = 40;
        req.policy.noise_target = 0.001;
        req.policy.budget_s = 0.4;
        req.serial_kernel_records = serial;
        return time_with_tracer(req, s, flusher, *tracer, std::nullopt);
    };
    auto report = [&](const kern& k, const timed_run& r, const char* rec) {
        const double floor_us = copy_gbps > 0 ? k.traffic / (copy_gbps * 1e3) : 0;
        std::printf("RES %-20s %-10s median %8.2f us (p10 %.2f p90 %.2f, n %zu) | %% floor %6.1f | traffic %.1f MB at %.0f GB/s\n",
                    k.name.c_str(), rec, r.stats.median, r.stats.p10, r.stats.p90, r.stats.n,
                    floor_us > 0 ? 100.0 * floor_us / r.stats.median : 0.0, k.traffic / 1e6,
                    k.traffic > 0 ? k.traffic / (r.stats.median * 1e3) : 0.0);
        std::fflush(stdout);
    };
    if (configs_mode) {
        // The library kernel in other launch configurations at the target case (same template, same
        // outputs), beside the two best copy shapes, by the suite's timer, variants interleaved in
        // rounds. The outputs are compared with the library launcher's first.
        using fk::dw_config;
        using fk::dw_grid;
        auto cfg = [&](auto config, fk::elem t) {
            return [=, &xb, &xh, &w16, &b16, &w16h, &b16h, &yb](cudaStream_t st) {
                if (t == fk::elem::bf16)
                    fk::launch_dw_vec<__nv_bfloat16, 4>(config, static_cast<const __nv_bfloat16*>(xb.get()), static_cast<const __nv_bfloat16*>(w16.get()),
                                                       static_cast<const __nv_bfloat16*>(b16.get()), static_cast<__nv_bfloat16*>(yb.get()), dws, st);
                else
                    fk::launch_dw_vec<__half, 4>(config, static_cast<const __half*>(xh.get()), static_cast<const __half*>(w16h.get()),
                                                static_cast<const __half*>(b16h.get()), static_cast<__half*>(yb.get()), dws, st);
            };
        };
        std::vector<kern> cs;
        for (fk::elem t : {fk::elem::bf16, fk::elem::f16}) {
            const std::string n = t == fk::elem::bf16 ? " bf16" : " fp16";
            cs.push_back({"lib" + n, t16, t == fk::elem::bf16 ? ks[0].launch : ks[1].launch});
            cs.push_back({"rs256v1" + n, t16, cfg(dw_config<dw_grid::rows_spans, 256, 1>{}, t)});
            cs.push_back({"scb256v2" + n, t16, cfg(dw_config<dw_grid::spans_channels_batch, 256, 2>{}, t)});
            cs.push_back({"rs256v2" + n, t16, cfg(dw_config<dw_grid::rows_spans, 256, 2>{}, t)});
            cs.push_back({"rs128v2" + n, t16, cfg(dw_config<dw_grid::rows_spans, 128, 2>{}, t)});
            cs.push_back({"scb128v2" + n, t16, cfg(dw_config<dw_grid::spans_channels_batch, 128, 2>{}, t)});
            cs.push_back({"scb256v1" + n, t16, cfg(dw_config<dw_grid::spans_channels_batch, 256, 1>{}, t)});
        }
        cs.push_back(ks[4]);
        cs.push_back(ks[8]);
        for (std::size_t g = 0; g < 2; ++g) {
            std::vector<unsigned char> a(x16), b(x16);
            cs[g * 7].launch(s);
            CUDA_CHECK(cudaStreamSynchronize(s));
            CUDA_CHECK(cudaMemcpy(a.data(), Y, x16, cudaMemcpyDeviceToHost));
            for (std::size_t k = g * 7 + 1; k < g * 7 + 7; ++k) {
                CUDA_CHECK(cudaMemset(Y, 0, x16));
                cs[k].launch(s);
                CUDA_CHECK(cudaStreamSynchronize(s));
                CUDA_CHECK(cudaMemcpy(b.data(), Y, x16, cudaMemcpyDeviceToHost));
                std::printf("CHECK %-16s y equals the library's: %s\n", cs[k].name.c_str(), std::memcmp(a.data(), b.data(), x16) == 0 ? "yes" : "NO");
            }
        }
        std::fflush(stdout);
        for (int round = 0; round < 3; ++round)
            for (const auto& k : cs) report(k, time_one(k, true), ("serial r" + std::to_string(round + 1)).c_str());
        return 0;
    }
    // Round 1 and 2: every kernel by the suite's timer (serial KIND_KERNEL records); round 3: the
    // first ones by concurrent records (closer to the kernel's own span).
    for (int round = 0; round < 2; ++round)
        for (const auto& k : ks) report(k, time_one(k, true), "serial");
    for (int k = 0; k < 8; ++k) report(ks[k], time_one(ks[k], false), "concurrent");

    // Stamps: one cold launch each (after the flush), the median launch of 15 by span.
    auto stamp_run = [&](int k, const char* name, unsigned blocks) {
        std::vector<std::vector<unsigned long long>> runs;
        std::vector<std::pair<double, int>> spans;
        for (int r = 0; r < 15; ++r) {
            CUDA_CHECK(cudaMemsetAsync(ST, 0, std::size_t{8192} * stamp_words * 8, s));
            flusher.flush(s);
            CUDA_CHECK(cudaDeviceSynchronize());
            ks[k].launch(s);
            CUDA_CHECK(cudaDeviceSynchronize());
            std::vector<unsigned long long> h(static_cast<std::size_t>(blocks) * stamp_words);
            CUDA_CHECK(cudaMemcpy(h.data(), ST, h.size() * 8, cudaMemcpyDeviceToHost));
            unsigned long long t0 = ~0ull, t1 = 0;
            for (unsigned b = 0; b < blocks; ++b) {
                t0 = std::min(t0, h[b * stamp_words]);
                for (int w = 0; w < 8; ++w) t1 = std::max(t1, h[b * stamp_words + 2 + w]);
            }
            spans.push_back({static_cast<double>(t1 - t0), r});
            runs.push_back(std::move(h));
        }
        std::sort(spans.begin(), spans.end());
        std::printf("STAMP %-14s spans of 15 launches: min %.2f median %.2f max %.2f us\n", name, spans.front().first / 1e3,
                    spans[7].first / 1e3, spans.back().first / 1e3);
        summarize_stamps(name, runs[spans[7].second], blocks, 4096.0, 8);
    };
    tracer.reset();
    stamp_run(3, "dw bf16", 4096);
    stamp_run(5, "copy1", 4096);
    return 0;
}
