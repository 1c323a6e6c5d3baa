// Diagnostic: what fills a K block of the block-scaled FP8 GEMM (wgmma_block) on DeepSeek-V3 kv_a
// (M 4096, N 576, K 7168), against healthy 4096^3 runs (kernels/fp8/NOTES.md, run 10). Not part of
// the build. It compiles gemm_wgmma.cu with FUSEBENCH_FP8_WGMMA_TRACE: per CTA and per K block it
// consumes, the producer thread, a landing watcher (an idle producer warp waiting on every fill's
// full barrier) and thread 0 of each consumer warpgroup write clock64 stamps (the trace_* slots in
// gemm_wgmma.cu). Each case is launched `reps` times with the trace off and on, alternating, each
// launch after a 256 MB memset (cold L2, as the suite), timed with events (median); the outputs of
// the traced and untraced launches must be bitwise equal; the stamps of every traced launch are
// pooled into per-phase percentiles (cycles of the SM clock). Build by hand on a GPU machine from the
// repository root:
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo \
//        -gencode arch=compute_90a,code=sm_90a -I. kernels/fp8/probes/kv_trace.cu -o kv_trace
//   ./kv_trace [reps] [raw-prefix] [case-substring]
// -DFUSEBENCH_FP8_WGMMA_STAGES_N144=N / _N192=N build the 144- / 192-wide kernels with another ring
// depth (gemm_wgmma.cu's defaults: 4 and 4) to see what the ring's depth is worth; gemm_wgmma.cu's
// other switches (FUSEBENCH_FP8_WGMMA_N144_RS, _N144_SCALES, _EARLY_FILLS, _STORE_WAIT_READ) likewise, e.g.
// -DFUSEBENCH_FP8_WGMMA_N144_RS=0 -DFUSEBENCH_FP8_WGMMA_STAGES_N144=5 is the 144-wide kernel before
// run 11 (NOTES.md). The per-phase split of the halves' consumers (c.a .. c.g) follows run_tile's
// order; the 144-wide consumer with A from registers (run_tile_rs) orders a K block differently, so
// for it only the periods, the CTA totals and the TMA figures read as labelled.
// raw-prefix: the last traced launch of each case is written raw to <prefix><case>.bin (uint64: per
// CTA trace_header + fills x trace_slots words, as in gemm_wgmma.cu) for offline analysis.
// KV_TRACE_DUMP=<prefix> in the environment: each case's D (untraced launches) is written to
// <prefix><case>.d, so that builds of different kernel code can be compared bitwise.
// Built with -DKV_TRACE_PLAIN instead, the kernels are the library's (no hooks: the same machine
// code as the library build) and only the untraced times are printed: the hooks' cost is the
// traced build's "trace off" time against this one's, on the same machine.
#if !defined(KV_TRACE_PLAIN)
#define FUSEBENCH_FP8_WGMMA_TRACE 1
#endif
#include "kernels/fp8/gemm_wgmma.cu"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/common/probe_check.hpp"

namespace fk = fusebench::kernels;
namespace fw = fusebench::kernels::fp8_wgmma;

namespace {

__device__ __forceinline__ std::uint32_t mix32(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>(z ^ (z >> 31));
}
// E4M3 codes, any but the two NaNs (0x7F, 0xFF).
__global__ void fill_codes(std::uint8_t* x, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        std::uint8_t b = static_cast<std::uint8_t>(mix32(seed ^ i));
        if ((b & 0x7F) == 0x7F) b &= 0xF0;
        x[i] = b;
    }
}
// Scales 2^-2 .. 2^2.
__global__ void fill_scales(float* x, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        x[i] = exp2f(static_cast<float>(static_cast<int>(mix32(seed ^ i) % 5u) - 2));
    }
}

double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}
double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

struct trace_case {
    const char* name;
    std::size_t m, n, k;
    fk::fp8_gemm_wgmma_options opt;
    int stages;
    bool pieces;  // consume_pieces form 2 (256), else the halves (144, 192)
};

fk::fp8_gemm_wgmma_options options(int tile_n, bool lookahead) {
    fk::fp8_gemm_wgmma_options o;
    o.overlap = true;
    o.tile_n = tile_n;
    o.pieces_lookahead = lookahead;
    return o;
}

// Pooled samples by metric name, in the order first seen.
struct samples {
    std::vector<std::string> order;
    std::map<std::string, std::vector<double>> v;
    [[maybe_unused]] void add(const std::string& k, double x) {
        auto it = v.find(k);
        if (it == v.end()) {
            order.push_back(k);
            it = v.emplace(k, std::vector<double>{}).first;
        }
        it->second.push_back(x);
    }
};

#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
// One traced launch's stamps into `s` (cycles; ns where named so).
void analyse(const trace_case& c, const std::vector<unsigned long long>& tr, int grid, int max_fills, int k_blocks, samples& s) {
    const std::size_t row = fw::trace_header + static_cast<std::size_t>(max_fills) * fw::trace_slots;
    unsigned long long gt_min = ~0ull;
    for (int b = 0; b < grid; ++b) gt_min = std::min(gt_min, tr[b * row + fw::trace_hdr_gt0]);
    for (int b = 0; b < grid; ++b) {
        const unsigned long long* h = &tr[b * row];
        const unsigned long long* st = h + fw::trace_header;
        auto S = [&](int f, int slot) -> double { return static_cast<double>(st[static_cast<std::size_t>(f) * fw::trace_slots + slot]); };
        auto W = [&](int f, int w, int what) { return S(f, fw::trace_wg + fw::trace_wg_n * w + what); };
        const int fills = static_cast<int>(h[fw::trace_hdr_fills]);
        if (fills <= 0 || fills > max_fills) continue;
        const double clk0 = static_cast<double>(h[fw::trace_hdr_clk0]), clk1 = static_cast<double>(h[fw::trace_hdr_clk1]);
        const double gt0 = static_cast<double>(h[fw::trace_hdr_gt0] - gt_min), gt1 = static_cast<double>(h[fw::trace_hdr_gt1] - gt_min);
        s.add("cta.ghz (clock64 / globaltimer)", (clk1 - clk0) / (gt1 - gt0));
        s.add("cta.start_ns (after the first CTA's)", gt0);
        s.add("cta.end_ns (from the first CTA's start)", gt1);
        s.add("cta.total", clk1 - clk0);
        s.add("cta.start_to_first_land", S(0, fw::trace_land) - clk0);
        s.add("cta.start_to_first_issue (producer)", S(0, fw::trace_p_issued) - clk0);
        s.add("cta.first_tma_latency", S(0, fw::trace_land) - S(0, fw::trace_p_issued));
        s.add("cta.k_loop (wg0 first full-wait end .. last drain)", W(fills - 1, 0, fw::trace_c_d) - W(0, 0, fw::trace_c_fw1));
        s.add("cta.per_block (k_loop / (fills - 1))", (W(fills - 1, 0, fw::trace_c_d) - W(0, 0, fw::trace_c_fw1)) / std::max(1, fills - 1));
        s.add("cta.last_drain_to_epilogue", static_cast<double>(h[fw::trace_hdr_epi0]) - W(fills - 1, 0, fw::trace_c_d));
        s.add("cta.epilogue (wg0 store_block)", static_cast<double>(h[fw::trace_hdr_epi1] - h[fw::trace_hdr_epi0]));
        s.add("cta.epilogue_end_to_exit", clk1 - static_cast<double>(h[fw::trace_hdr_epi1]));
        int waited = 0, counted = 0;
        for (int f = 0; f < fills; ++f) {
            const bool steady = f >= c.stages && f + 1 < fills && (f % k_blocks) + 1 < k_blocks;  // f + 1 in the same tile
            if (f >= c.stages) {
                s.add("p.empty_wait", S(f, fw::trace_p_wait1) - S(f, fw::trace_p_wait0));
                const double rel = std::max(W(f - c.stages, 0, fw::trace_c_d), W(f - c.stages, 1, fw::trace_c_d));
                s.add("p.last_wg_drain(f-STAGES) -> producer wakes", S(f, fw::trace_p_wait1) - rel);
                s.add("p.ring_round (issue f-STAGES -> issue f)", S(f, fw::trace_p_issued) - S(f - c.stages, fw::trace_p_issued));
            }
            s.add("p.issue (2 TMA)", S(f, fw::trace_p_issued) - S(f, fw::trace_p_wait1));
            s.add("tma.latency (issue -> land)", S(f, fw::trace_land) - S(f, fw::trace_p_issued));
            if (f > 0) s.add("land.period", S(f, fw::trace_land) - S(f - 1, fw::trace_land));
            for (int w = 0; w < 2; ++w) {
                const double fw0 = W(f, w, fw::trace_c_fw0), fw1 = W(f, w, fw::trace_c_fw1), land = S(f, fw::trace_land);
                s.add("c.full_wait", fw1 - fw0);
                ++counted;
                if (fw0 < land) {
                    ++waited;
                    s.add("c.land -> consumer wakes (when waiting)", fw1 - land);
                    s.add("c.consumer waited for land by", land - fw0);
                } else {
                    s.add("c.data ready ahead of the consumer by", fw0 - land);
                }
            }
            if (!steady) continue;
            s.add("c.wg_skew (wg1 - wg0 first issue)", W(f, 1, fw::trace_c_i0) - W(f, 0, fw::trace_c_i0));
            double idle_lo[2], idle_hi[2];
            for (int w = 0; w < 2; ++w) {
                if (!c.pieces) {
                    // Order: I1[f], promote h0 -> P0[f], FW0[f+1], FW1[f+1], I0[f+1], wait 0 -> D[f],
                    // release + promote h1 -> P1[f], issue h1 -> I1[f+1].
                    s.add("c.a promote h0 (under h1)", W(f, w, fw::trace_c_p0) - W(f, w, fw::trace_c_i1));
                    s.add("c.b scales, loop", W(f + 1, w, fw::trace_c_fw0) - W(f, w, fw::trace_c_p0));
                    s.add("c.c full wait (f+1)", W(f + 1, w, fw::trace_c_fw1) - W(f + 1, w, fw::trace_c_fw0));
                    s.add("c.d issue h0 (f+1)", W(f + 1, w, fw::trace_c_i0) - W(f + 1, w, fw::trace_c_fw1));
                    s.add("c.e drain wait (h1 f, h0 f+1)", W(f, w, fw::trace_c_d) - W(f + 1, w, fw::trace_c_i0));
                    s.add("c.f release + promote h1 (queue empty)", W(f, w, fw::trace_c_p1) - W(f, w, fw::trace_c_d));
                    s.add("c.g issue h1 (f+1) (queue empty)", W(f + 1, w, fw::trace_c_i1) - W(f, w, fw::trace_c_p1));
                    s.add("c.period (I1 f -> I1 f+1)", W(f + 1, w, fw::trace_c_i1) - W(f, w, fw::trace_c_i1));
                    s.add("c.in flight (I1 f -> D f)", W(f, w, fw::trace_c_d) - W(f, w, fw::trace_c_i1));
                    idle_lo[w] = W(f, w, fw::trace_c_d);
                    idle_hi[w] = W(f + 1, w, fw::trace_c_i1);
                } else {
                    // Order: FW0[f], FW1[f], piece 0 -> I0[f], pieces 1-3 (I1 after 3), promote 0-2 ->
                    // P0[f], wait 0 -> D[f], promote 3 -> P1[f], FW0[f+1].
                    s.add("c.a full wait", W(f, w, fw::trace_c_fw1) - W(f, w, fw::trace_c_fw0));
                    s.add("c.b issue piece 0", W(f, w, fw::trace_c_i0) - W(f, w, fw::trace_c_fw1));
                    s.add("c.c pieces 1-3 issued, promote 0-1", W(f, w, fw::trace_c_i1) - W(f, w, fw::trace_c_i0));
                    s.add("c.d promote 2", W(f, w, fw::trace_c_p0) - W(f, w, fw::trace_c_i1));
                    s.add("c.e drain wait (piece 3)", W(f, w, fw::trace_c_d) - W(f, w, fw::trace_c_p0));
                    s.add("c.f release + promote 3 (queue empty)", W(f, w, fw::trace_c_p1) - W(f, w, fw::trace_c_d));
                    s.add("c.g scales, loop (queue empty)", W(f + 1, w, fw::trace_c_fw0) - W(f, w, fw::trace_c_p1));
                    s.add("c.period (FW0 f -> FW0 f+1)", W(f + 1, w, fw::trace_c_fw0) - W(f, w, fw::trace_c_fw0));
                    s.add("c.in flight (I0 f -> D f)", W(f, w, fw::trace_c_d) - W(f, w, fw::trace_c_i0));
                    idle_lo[w] = W(f, w, fw::trace_c_d);
                    idle_hi[w] = W(f + 1, w, fw::trace_c_i0);
                }
                s.add("c.queue empty (D f -> next issue)", idle_hi[w] - idle_lo[w]);
            }
            // Neither warpgroup has a wgmma in flight: the tensor cores are idle for certain.
            s.add("tc.both queues empty", std::max(0.0, std::min(idle_hi[0], idle_hi[1]) - std::max(idle_lo[0], idle_lo[1])));
        }
        s.add("cta.share of blocks a consumer waited for its stage", counted ? static_cast<double>(waited) / counted : 0.0);
    }
}

#endif

void print(const samples& s) {
    std::printf("  %-58s %9s %9s %9s %9s %9s %8s\n", "metric (cycles unless named)", "p10", "p50", "p90", "p99", "mean", "n");
    for (const std::string& k : s.order) {
        const std::vector<double>& v = s.v.at(k);
        std::printf("  %-58s %9.1f %9.1f %9.1f %9.1f %9.1f %8zu\n", k.c_str(), pct(v, 0.10), pct(v, 0.50), pct(v, 0.90), pct(v, 0.99), mean(v),
                    v.size());
    }
}

}  // namespace

#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
constexpr bool traced = true;
constexpr int tr_header = fw::trace_header, tr_slots = fw::trace_slots;
#else
constexpr bool traced = false;
constexpr int tr_header = 0, tr_slots = 0;
#endif

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
    const std::string raw = argc > 2 ? argv[2] : "";
    const std::string only = argc > 3 ? argv[3] : "";  // run only the cases whose name contains it
    int dev = 0;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, dev));
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x", static_cast<unsigned char>(prop.uuid.bytes[0]), static_cast<unsigned char>(prop.uuid.bytes[1]),
                  static_cast<unsigned char>(prop.uuid.bytes[2]), static_cast<unsigned char>(prop.uuid.bytes[3]));
    std::printf("device %s (%s), %d SMs; reps %d; %s build; ring stages: 144-wide %d, 192-wide %d, 256-wide %d\n", prop.name, uuid,
                prop.multiProcessorCount, reps, traced ? "traced" : "plain (library machine code)", fw::stages_n144, fw::stages_n192, fw::stages_n256);

    const trace_case cases[] = {
        {"kv_a_n144", 4096, 576, 7168, options(144, false), fw::stages_n144, false},
        {"kv_a_n192", 4096, 576, 7168, options(192, false), fw::stages_n192, false},
        {"sq4096_n192", 4096, 4096, 4096, options(192, false), fw::stages_n192, false},
        {"sq4096_n256la", 4096, 4096, 4096, options(256, true), fw::stages_n256, true},
    };
    void* flush = nullptr;
    const std::size_t flush_bytes = 256u << 20;
    CK(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (const trace_case& c : cases) {
        if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
        const std::size_t kb = (c.k + 127) / 128, mb = (c.m + 127) / 128, nsb = (c.n + 127) / 128;
        std::uint8_t *a = nullptr, *b = nullptr;
        float *as = nullptr, *bs = nullptr;
        void *d0 = nullptr, *d1 = nullptr;
        CK(cudaMalloc(&a, c.m * c.k));
        CK(cudaMalloc(&b, c.n * c.k));
        CK(cudaMalloc(&as, c.m * kb * 4));
        CK(cudaMalloc(&bs, nsb * kb * 4));
        CK(cudaMalloc(&d0, c.m * c.n * 2));
        CK(cudaMalloc(&d1, c.m * c.n * 2));
        fill_codes<<<1024, 256>>>(a, c.m * c.k, 1);
        fill_codes<<<1024, 256>>>(b, c.n * c.k, 2);
        fill_scales<<<256, 256>>>(as, c.m * kb, 3);
        fill_scales<<<256, 256>>>(bs, nsb * kb, 4);
        CK(cudaGetLastError());
        const fk::fp8_gemm_shape sh{c.m, c.n, c.k};
        const int tiles = static_cast<int>(mb * ((c.n + c.opt.tile_n - 1) / c.opt.tile_n));
        const int grid = std::min(tiles, prop.multiProcessorCount);
        const int max_fills = static_cast<int>(((tiles + grid - 1) / grid) * kb);
        const std::size_t words = static_cast<std::size_t>(grid) * (tr_header + static_cast<std::size_t>(max_fills) * tr_slots) + 1;
        unsigned long long* dtr = nullptr;
        CK(cudaMalloc(&dtr, words * 8));
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
        CK(cudaMemcpyToSymbol(fw::fp8_trace_max_fills, &max_fills, sizeof max_fills));
#endif
        std::vector<unsigned long long> tr(words);
        samples s;
        std::vector<double> t_off, t_on;
        for (int r = 0; r < reps + 1; ++r) {  // launch 0 of each mode: warm-up, not counted
            for (int q = 0; q < (traced ? 2 : 1); ++q) {
                const bool on = traced && (q == 0) == (r % 2 == 0);
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
                unsigned long long* ptr = on ? dtr : nullptr;
                CK(cudaMemcpyToSymbol(fw::fp8_trace, &ptr, sizeof ptr));
#endif
                if (on) CK(cudaMemset(dtr, 0, words * 8));
                CK(cudaMemset(flush, r + q, flush_bytes));
                CK(cudaEventRecord(e0));
                fk::launch_fp8_gemm_wgmma(sh, a, as, b, bs, on ? d1 : d0, nullptr, 0, nullptr, c.opt);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r == 0) continue;
                (on ? t_on : t_off).push_back(ms * 1e3);
#if defined(FUSEBENCH_FP8_WGMMA_TRACE)
                if (on) {
                    CK(cudaMemcpy(tr.data(), dtr, words * 8, cudaMemcpyDeviceToHost));
                    analyse(c, tr, grid, max_fills, static_cast<int>(kb), s);
                }
#endif
            }
        }
        CK(cudaGetLastError());
        std::vector<unsigned char> h0(c.m * c.n * 2), h1(c.m * c.n * 2);
        CK(cudaMemcpy(h0.data(), d0, h0.size(), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h1.data(), d1, h1.size(), cudaMemcpyDeviceToHost));
        const bool same = !traced || std::memcmp(h0.data(), h1.data(), h0.size()) == 0;
        if (const char* dump = std::getenv("KV_TRACE_DUMP")) {
            // D of the untraced launches, for a bitwise comparison between builds (same inputs).
            if (FILE* fo = std::fopen((std::string(dump) + c.name + ".d").c_str(), "wb")) {
                std::fwrite(h0.data(), 1, h0.size(), fo);
                std::fclose(fo);
            }
        }
        const double flops = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
        const double m_off = pct(t_off, 0.5), m_on = pct(t_on, 0.5);
        std::printf("\n== %s: M %zu N %zu K %zu, tile 128 x %d, %d stages, %d CTAs, %d K blocks per CTA (max)\n", c.name, c.m, c.n, c.k, c.opt.tile_n,
                    c.stages, grid, max_fills);
        std::printf("  events, cold L2, median of %d: trace off %.2f us (%.1f TFLOP/s; p10-p90 %.2f-%.2f), trace on %.2f us (%+.1f%%); D traced == untraced: %s\n",
                    reps, m_off, flops / m_off * 1e-6, pct(t_off, 0.1), pct(t_off, 0.9), m_on, 100.0 * (m_on / m_off - 1.0), same ? "yes" : "NO");
        print(s);
        if (traced && !raw.empty()) {
            const std::string path = raw + c.name + ".bin";
            if (FILE* fo = std::fopen(path.c_str(), "wb")) {
                const int hdr[4] = {grid, max_fills, tr_header, tr_slots};
                std::fwrite(hdr, sizeof hdr, 1, fo);
                std::fwrite(tr.data(), 8, tr.size(), fo);
                std::fclose(fo);
            }
        }
        CK(cudaFree(dtr));
        CK(cudaFree(a));
        CK(cudaFree(b));
        CK(cudaFree(as));
        CK(cudaFree(bs));
        CK(cudaFree(d0));
        CK(cudaFree(d1));
        if (!same) return 1;
    }
    return 0;
}
