// Diagnostic: the per-phase timeline of fused_radix (kernels/softmax_topk/NOTES.md, "v6 step 3").
// Not part of the build. It compiles fused_radix.cu with FUSEBENCH_RADIX_TIMELINE (thread 0 of each
// block writes %globaltimer at each phase boundary), launches it on N(0, std^2) logits with a cold
// L2 (a 256 MB memset before each launch), and prints per-phase durations over the blocks, the
// share of the SM slots' time each phase takes (phases in stamp order; each is the time since the
// block's previous stamp), how long each SM has no block streaming, and the
// gap between a block's end and the next block's start on the same SM. Build by hand on a GPU
// machine from the repository root:
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. \
//        kernels/softmax_topk/probes/radix_timeline.cu -o radix_timeline
//   ./radix_timeline f32 4096 50257 10 1.0 [raw.csv]
// Environment: FUSEBENCH_RADIX_VERIFY_ROWS (default 32) rows are checked against a host top-K;
// FUSEBENCH_RADIX_DUMP=file writes the last launch's indices then probabilities (rows x K int32,
// rows x K float32, raw): two builds of the kernel on the same arguments give the same file iff
// their outputs are bit-identical. std 0 gives all-equal rows; a small std in bf16 gives many ties
// at the K-th key. FUSEBENCH_RADIX_PF=pct,at,kb, only in a probe built against the v6 step 4
// experiment (-Idev/prefetch before -I.: its fused_radix.cu defines FUSEBENCH_RADIX_PREFETCH),
// replaces that launcher's L2 prefetch of later rows: pct % of the resident clusters rows ahead (0:
// none), at 0 (after the block's read) or 1 (at its start), at most kb KB of the chunk.
#define FUSEBENCH_RADIX_TIMELINE 1
#include "kernels/softmax_topk/fused_radix.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fk = fusebench::kernels;

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: %s f32|bf16|f16 rows V K std [raw.csv]\n", argv[0]);
        return 2;
    }
    const std::string dt = argv[1];
    const std::int64_t rows = std::atoll(argv[2]), V = std::atoll(argv[3]), K = std::atoll(argv[4]);
    const float sd = static_cast<float>(std::atof(argv[5]));
    const probe_problem pr = make_problem(dt, rows, V, K, sd);
    const fk::elem type = pr.args.type;
    const std::size_t esz = type == fk::elem::f32 ? 4 : 2;
    const std::size_t flush_bytes = probe_problem::flush_bytes;
    void* d_flush = pr.flush;
    const void* d_x = pr.args.d_logits;
    const float* d_p = pr.args.d_probs;
    const std::int32_t* d_i = pr.args.d_indices;
    const std::size_t tl_n = static_cast<std::size_t>(rows) * fk::radix_max_cluster * fk::radix_tl_points;
    unsigned long long* d_tl = nullptr;
    CK(cudaMalloc(&d_tl, tl_n * 8));
    CK(cudaMemcpyToSymbol(fk::radix_timeline, &d_tl, sizeof d_tl));

    const fk::softmax_topk_args a = pr.args;
    // The launcher, or (FUSEBENCH_RADIX_PF) the kernel's launch with a given prefetch.
    std::function<void(const fk::softmax_topk_args&)> launch = [](const fk::softmax_topk_args& x) {
        fk::launch_softmax_topk_fused_radix(x, nullptr);
    };
#ifdef FUSEBENCH_RADIX_PREFETCH
    if (const char* pf_env = std::getenv("FUSEBENCH_RADIX_PF")) {
        int pct_rows = 0, at = 0, kb = 0;
        if (std::sscanf(pf_env, "%d,%d,%d", &pct_rows, &at, &kb) != 3) {
            std::fprintf(stderr, "FUSEBENCH_RADIX_PF=pct,at,kb\n");
            return 2;
        }
        // The resident clusters as the launcher counts them (same C, same configuration).
        const std::int64_t row_bytes = V * static_cast<std::int64_t>(esz);
        const std::int64_t by_bytes = (row_bytes + fk::radix_chunk_bytes - 1) / fk::radix_chunk_bytes;
        const std::int64_t by_k = (4 * K + fk::radix_slots_per_block - 1) / fk::radix_slots_per_block;
        const int Cc = static_cast<int>(std::clamp<std::int64_t>(std::max(by_bytes, by_k), 1, fk::radix_max_cluster));
        int resident = 0;
        fk::dispatch_elem(type, [&](auto v) {
            using T = decltype(v);
            cudaLaunchConfig_t cfg{};
            cfg.gridDim = dim3(static_cast<unsigned>(rows * Cc));
            cfg.blockDim = dim3(fk::block_threads);
            cfg.dynamicSmemBytes = sizeof(fk::radix_smem);
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim = {static_cast<unsigned>(Cc), 1, 1};
            cfg.attrs = attr;
            cfg.numAttrs = 1;
            CK(cudaFuncSetAttribute(fk::softmax_topk_radix_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(sizeof(fk::radix_smem))));
            CK(cudaOccupancyMaxActiveClusters(&resident, fk::softmax_topk_radix_kernel<T>, &cfg));
        });
        fk::radix_prefetch pf;
        pf.ahead = static_cast<int>(static_cast<std::int64_t>(resident) * pct_rows / 100);
        pf.at = at;
        pf.max_bytes = kb << 10;
        std::printf("prefetch: %d rows ahead (%d%% of %d resident clusters of %d), at %s, at most %d KB of the chunk\n", pf.ahead,
                    pct_rows, resident, Cc, at ? "the block's start" : "the read's end", kb);
        launch = [pf](const fk::softmax_topk_args& x) {
            fk::dispatch_elem(x.type, [&](auto v) { fk::launch_radix<decltype(v)>(x, nullptr, &pf); });
        };
    }
#endif
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms;
    const int reps = 9;
    for (int r = 0; r < reps; ++r) {
        CK(cudaMemsetAsync(d_flush, r & 0xFF, flush_bytes));
        CK(cudaMemsetAsync(d_tl, 0, tl_n * 8));
        CK(cudaEventRecord(e0));
        launch(a);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
    }
    // Exactness on the first rows (indices against a host top-K of the same values, ties by lower
    // index): the probe also runs reworked kernels before the GPU tests see them.
    {
        const char* vr_env = std::getenv("FUSEBENCH_RADIX_VERIFY_ROWS");
        const std::int64_t vr = std::min<std::int64_t>(rows, vr_env ? std::atoll(vr_env) : 32);
        std::vector<unsigned char> hx(static_cast<std::size_t>(vr * V) * esz);
        std::vector<std::int32_t> hi(static_cast<std::size_t>(vr * K));
        CK(cudaMemcpy(hx.data(), d_x, hx.size(), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hi.data(), d_i, hi.size() * 4, cudaMemcpyDeviceToHost));
        std::int64_t bad = 0;
        std::vector<std::pair<float, std::int32_t>> v(static_cast<std::size_t>(V));
        for (std::int64_t r = 0; r < vr; ++r) {
            for (std::int64_t j = 0; j < V; ++j) {
                const std::size_t o = static_cast<std::size_t>(r * V + j);
                float f;
                if (esz == 4) {
                    std::memcpy(&f, &hx[o * 4], 4);
                } else {
                    std::uint16_t h;
                    std::memcpy(&h, &hx[o * 2], 2);
                    if (type == fk::elem::bf16) {
                        const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
                        std::memcpy(&f, &u, 4);
                    } else {
                        f = __half2float(*reinterpret_cast<const __half*>(&h));
                    }
                }
                v[static_cast<std::size_t>(j)] = {f, static_cast<std::int32_t>(j)};
            }
            std::partial_sort(v.begin(), v.begin() + K, v.end(), [](const auto& p, const auto& q) {
                return p.first > q.first || (p.first == q.first && p.second < q.second);
            });
            for (std::int64_t q = 0; q < K; ++q) bad += hi[static_cast<std::size_t>(r * K + q)] != v[static_cast<std::size_t>(q)].second;
        }
        std::printf("verify: %lld of %lld indices differ from the host top-K (first %lld rows)%s\n", static_cast<long long>(bad),
                    static_cast<long long>(vr * K), static_cast<long long>(vr), bad ? "  <-- WRONG" : "");
    }
    if (const char* dump = std::getenv("FUSEBENCH_RADIX_DUMP")) {
        std::vector<std::int32_t> hi(static_cast<std::size_t>(rows * K));
        std::vector<float> hp(static_cast<std::size_t>(rows * K));
        CK(cudaMemcpy(hi.data(), d_i, hi.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hp.data(), d_p, hp.size() * 4, cudaMemcpyDeviceToHost));
        std::FILE* f = std::fopen(dump, "wb");
        bool ok = f != nullptr && std::fwrite(hi.data(), 4, hi.size(), f) == hi.size() &&
                  std::fwrite(hp.data(), 4, hp.size(), f) == hp.size();
        if (f != nullptr) ok = std::fclose(f) == 0 && ok;
        if (!ok) {
            std::fprintf(stderr, "cannot write %s\n", dump);
            return 1;
        }
        std::printf("dump: %s (%zu indices, %zu probabilities)\n", dump, hi.size(), hp.size());
    }
    std::vector<unsigned long long> tl(tl_n);
    CK(cudaMemcpy(tl.data(), d_tl, tl_n * 8, cudaMemcpyDeviceToHost));
    std::vector<float> sorted_ms = ms;
    std::sort(sorted_ms.begin(), sorted_ms.end());
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

    std::size_t nb = 0;
    while (nb < rows * static_cast<std::size_t>(fk::radix_max_cluster) && tl[nb * fk::radix_tl_points + fk::tl_start] != 0) ++nb;
    const int C = static_cast<int>(nb / rows);
    unsigned long long t0 = ~0ull, t1 = 0;
    for (std::size_t b = 0; b < nb; ++b) {
        const unsigned long long* s = &tl[b * fk::radix_tl_points];
        t0 = std::min(t0, s[fk::tl_start]);
        for (int p = 0; p < fk::tl_info; ++p) t1 = std::max(t1, s[p]);
    }
    std::printf("radix_timeline %s rows %lld V %lld K %lld std %.2f: C = %d, %zu blocks, %d SMs; event median %.1f us (min %.1f); stamped span %.1f us; blocks per slot %.2f\n",
                dt.c_str(), static_cast<long long>(rows), static_cast<long long>(V), static_cast<long long>(K), sd, C, nb,
                sms, sorted_ms[reps / 2] * 1e3, sorted_ms[0] * 1e3, (t1 - t0) * 1e-3, nb / (sms * static_cast<double>(fk::radix_blocks_per_sm)));

    // Phase durations (us) per block: each phase from the previous stamp present.
    const char* names[] = {"start",   "stream+reduce", "cluster merge", "bound (step 2)", "L2 re-read", "count exch+ties",
                           "digit path",   "in-place barrier", "gather+barrier", "select (blk0)", "sort (blk0)", "write (blk0)"};
    std::vector<std::vector<double>> dur(fk::tl_info);
    std::vector<double> sum_phase(fk::tl_info, 0.0), post, post0;
    std::map<int, int> modes, levels;
    std::map<int, std::vector<std::pair<double, double>>> per_sm_stream, per_sm_life;
    std::FILE* raw = argc > 6 ? std::fopen(argv[6], "w") : nullptr;
    if (raw) std::fprintf(raw, "block,rank,sm,mode,levels,ncand,start,streamed,row_stats,bound,reread,counts,digits,in_place,gathered,selected,sorted,written\n");
    for (std::size_t b = 0; b < nb; ++b) {
        const unsigned long long* s = &tl[b * fk::radix_tl_points];
        const int rank = static_cast<int>(b % C);
        const unsigned long long info = s[fk::tl_info];
        const int sm = static_cast<int>(info & 0xFF), mode = static_cast<int>((info >> 8) & 0xF), lev = static_cast<int>((info >> 12) & 0xF);
        ++modes[mode];
        ++levels[lev];
        // The stamps present, in time order; each duration is named by the stamp that ends it.
        std::vector<std::pair<unsigned long long, int>> order;
        for (int p = 1; p < fk::tl_info; ++p)
            if (s[p] != 0) order.push_back({s[p], p});
        std::stable_sort(order.begin(), order.end());
        unsigned long long prev = s[fk::tl_start], last = prev;
        for (auto& [t, p] : order) {
            const double d = (t - prev) * 1e-3;
            dur[p].push_back(d);
            sum_phase[p] += d;
            prev = t;
            last = std::max(last, t);
        }
        const double st = (s[fk::tl_start] - t0) * 1e-3, sd_ = (s[fk::tl_streamed] - t0) * 1e-3, en = (last - t0) * 1e-3;
        (rank == 0 ? post0 : post).push_back(en - sd_);
        per_sm_stream[sm].push_back({st, sd_});
        per_sm_life[sm].push_back({st, en});
        if (raw) {
            std::fprintf(raw, "%zu,%d,%d,%d,%d,%llu", b, rank, sm, mode, lev, info >> 32);
            for (int p = 0; p < fk::tl_info; ++p) std::fprintf(raw, ",%.3f", s[p] ? (s[p] - t0) * 1e-3 : -1.0);
            std::fprintf(raw, "\n");
        }
    }
    if (raw) std::fclose(raw);
    double total = 0;
    for (int p = 1; p < fk::tl_info; ++p) total += sum_phase[p];
    std::printf("%-18s %7s %7s %7s %7s %7s %8s %s\n", "phase", "blocks", "mean", "p10", "p50", "p90", "share", "slot-us");
    for (int p = 1; p < fk::tl_info; ++p) {
        if (dur[p].empty()) continue;
        double mean = sum_phase[p] / dur[p].size();
        std::printf("%-18s %7zu %7.2f %7.2f %7.2f %7.2f %7.1f%% %8.1f\n", names[p], dur[p].size(), mean, pct(dur[p], 0.1),
                    pct(dur[p], 0.5), pct(dur[p], 0.9), 100.0 * sum_phase[p] / total, sum_phase[p] / (sms * static_cast<double>(fk::radix_blocks_per_sm)));
    }
    std::printf("after the stream, per block: rank 0 p50 %.2f us (p90 %.2f), other ranks p50 %.2f us (p90 %.2f)\n", pct(post0, 0.5),
                pct(post0, 0.9), pct(post, 0.5), pct(post, 0.9));
    std::printf("(slot-us: the phase's summed block time over %d SMs x %d slots: the kernel time it takes if the slots are the bottleneck)\n", sms,
                fk::radix_blocks_per_sm);
    std::printf("take modes (0 all, 1 above, 2 exact_ties, 3 digits):");
    for (auto& kv : modes) std::printf(" %d:%d", kv.first, kv.second);
    std::printf("; bound digit levels:");
    for (auto& kv : levels) std::printf(" %d:%d", kv.first, kv.second);
    std::printf("\n");
    // Per SM: time with no block streaming (inside the SM's first start .. last end), and the refill
    // gap (a block's start minus the latest end on its SM before it, for blocks after the first wave).
    std::vector<double> idle_frac, gaps, resident;
    for (auto& kv : per_sm_stream) {
        auto iv = kv.second;
        std::sort(iv.begin(), iv.end());
        auto life = per_sm_life[kv.first];
        double lo = 1e30, hi = 0;
        for (auto& q : life) {
            lo = std::min(lo, q.first);
            hi = std::max(hi, q.second);
        }
        double covered = 0, cs = -1, ce = -1;
        for (auto& q : iv) {
            if (q.first > ce) {
                if (ce > cs) covered += ce - cs;
                cs = q.first;
                ce = q.second;
            } else {
                ce = std::max(ce, q.second);
            }
        }
        if (ce > cs) covered += ce - cs;
        idle_frac.push_back(1.0 - covered / (hi - lo));
        std::sort(life.begin(), life.end());
        std::vector<double> ends;
        for (auto& q : life) {
            int alive = 0;
            double latest_end = -1;
            for (auto& o : life) {
                if (o.first <= q.first && o.second > q.first) ++alive;
                if (o.second <= q.first) latest_end = std::max(latest_end, o.second);
            }
            resident.push_back(alive);
            if (latest_end >= 0) gaps.push_back(q.first - latest_end);
        }
    }
    std::printf("per SM: no block streaming %.1f%% of its busy time (p50 over SMs; p10 %.1f%%, p90 %.1f%%); blocks resident at a block's start p50 %.0f; refill gap p50 %.2f us, p90 %.2f us (%zu refills)\n",
                100 * pct(idle_frac, 0.5), 100 * pct(idle_frac, 0.1), 100 * pct(idle_frac, 0.9), pct(resident, 0.5), pct(gaps, 0.5),
                pct(gaps, 0.9), gaps.size());
    return 0;
}
