// Diagnostic (not part of the build; no GPU): emulates, on the CPU, the bookkeeping of
// fused_stream_resample's sampled pass at K > 32 (big_pass<T, U, Sampled = true, ByMaxima = false,
// Mode = 1> in kernels/softmax_topk/fused_stream.cu, fp32) on the suite's exact inputs
// (softmax_topk_generate's formulas, harness/rng, case_seed), and says per row which way it ends:
// kept by the sampled pass, given up after phase 1 (read in order in the main kernel), or given a
// route for the retry kernel (route_safe after phase >= 2 or at the end, route_ties). Warp-level
// semantics: the vector vote (vector max > thr), the deferred list drained 32 vectors a round from
// its end, insert_round's compaction (warp_radix_select from the bits cthr and the running maximum
// share, relaxed to big_limit), end_sample, the phase-gain test and the final count.
// Assumes the logits' rows start at a 256-byte aligned base (cudaMalloc + the 256-byte guard band).
// Kinds: cluster256, cluster32, all_equal, ties, ascending, descending, stride_trap, random (std 1), plateau.
// Session m: the TIES / PARKED lines count, at the sample's end, the rows that the plateau tests of calls 4-6 and
// FUSEBENCH_RESAMPLE_PARKED_ROUTE (fused_stream.cu) would send to the retry kernel.
// Prints the rows not kept by the sampled pass (and those with >= print_at compactions), then a
// summary. base_off: the rows' base address mod 128 [bytes] (0: the suite's guarded buffers).
// prologue: the parked sample's steps read first (1: the committed one step; 3: before 6199adc, the
// last U steps). factor: the phase test's (4: the projection gain x 4 x (P - phi) < K - now, as
// before this branch; 0: a phase that gained nothing, as now).
//   g++ -O2 -std=c++20 -I. kernels/softmax_topk/probes/resample_emulation.cpp harness/rng.cpp -o /tmp/remu
//   /tmp/remu SEED [kind=cluster256] [K=256] [rows=4096] [V=50257] [print_at=1000] [base_off=0] [prologue=1] [factor=4]
//             [early_streak=1] [early_quiet_max=1] [early_mode=1: >= 29 U parked, no window; 0: the window's share]
//             (the defaults: fused_stream.cu's FUSEBENCH_RESAMPLE_PARKED_EARLY as committed)
//             [fp32|bf16]
#include "harness/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using u32 = std::uint32_t;
using u64 = std::uint64_t;

static u32 float_key(float x) {
    x += 0.0f;
    u32 b;
    std::memcpy(&b, &x, 4);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
static float key_float(u32 k) {
    const u32 b = (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
static u64 composite(u32 key, u32 idx) { return (static_cast<u64>(key) << 32) | static_cast<u32>(~idx); }
static float cval(u64 c) { return key_float(static_cast<u32>(c >> 32)); }
static u32 cidx(u64 c) { return ~static_cast<u32>(c); }
static const u64 cthr_start = (static_cast<u64>(0x007FFFFFu) << 32) | 0xFFFFFFFFull;
static bool beats(float x, u32 idx, u64 c) {
    const float cv = cval(c);
    return x > cv || (x == cv && idx < cidx(c));
}

// Session m: rows whose parked sample would take the three plateau tests of calls 4 / 5 / 6 (half of the kept keys
// at the threshold's value, 7/8, at most 8 above; each with 32 or more at it), and the mean kept / at-value counts.
// tie_tests[3]: 90% or more of the sample's vectors parked and 32 or more kept keys at the value (a candidate
// route for the next session); parked_pct_hist: rows by the sample's parked share, in tenths.
static long tie_tests[4] = {0, 0, 0, 0}, tie_rows = 0, tie_at_sum = 0, tie_count_sum = 0, parked_pct_hist[11] = {};
// Session n: an early form of the parked route, tested at every drain of the sample instead of at its end: a drain
// whose window (the vectors voted since the previous drain) parked 90% or more, once a compaction has set a threshold,
// and inserted at most early_quiet_max keys (no compaction) extends a streak; a streak of early_streak drains with 32 or more kept keys at the threshold's value would route the
// row. early_rows: rows it fires on; early_frac_sum: the share of the sample's steps read when it fires (the rest of
// the sample is what it saves); early_streak_max_hist: rows by their longest streak (0 .. 8+) where it never fires.
// Session n: bf16 rows (argv[13] = bf16): the values rounded to bf16, 8 elements a vector, U = 2 and the 16-bit
// launcher's cap; rising_ties: rows sent by the ties-at-the-top test whose kept keys' lowest index lies in the row's
// second half (FUSEBENCH_RESAMPLE_RISING_SAFE would send them to the safe sample instead).
static bool bf16_rows = false;
static long rising_ties = 0;
static int early_streak = 1, early_quiet_max = 1, early_mode = 1;  // early_quiet_max: a quiet drain inserts at most this many keys
static long early_rows = 0, early_streak_max_hist[9] = {};
static double early_frac_sum = 0;

struct emu {
    // parameters
    int K, cap, P, r_sample, U = 3, W = 4, L;
    // state
    std::vector<u64> keys;
    u64 cthr = cthr_start;
    float thr = -INFINITY;
    int count = 0;
    std::vector<std::pair<int, int>> list;  // (lane-vector index in row vectors, unused)
    float rmax = -INFINITY;                 // running max over everything consumed
    int compactions = 0, radix_passes = 0;
    long voted = 0, parked = 0;             // vectors voted / parked (session m: the sample's share parked)
    long voted_w = 0;                       // vectors voted since the last drain (session n: the early test's window)
    const float* x = nullptr;               // row
    u32 hd = 0;

    static int big_limit(int K, int cap, int room) { return std::max(K, std::min(K + std::min((cap - K) / 4, K / 2), cap - room)); }

    void compact(int Kc, int limit) {
        ++compactions;
        const u32 lo = static_cast<u32>(cthr >> 32);
        const u32 hi = float_key(rmax);
        const int common = lo == hi ? 32 : __builtin_clz(lo ^ hi);
        u64 mask = common == 0 ? 0ull : ~0ull << (64 - common);
        u64 prefix = (static_cast<u64>(lo) << 32) & mask;
        int shift = 56 - common;
        unsigned need = static_cast<unsigned>(Kc);
        for (;;) {
            ++radix_passes;
            unsigned h[256] = {};
            for (int t = 0; t < count; ++t)
                if ((keys[t] & mask) == prefix) ++h[(keys[t] >> shift) & 255u];
            unsigned above = 0, digit = 0, inb = 0;
            for (int b = 255; b >= 0; --b) {
                if (above < need && above + h[b] >= need) {
                    digit = b;
                    inb = h[b];
                    break;
                }
                above += h[b];
            }
            need -= above;
            prefix |= static_cast<u64>(digit) << shift;
            mask |= 0xFFull << shift;
            if (static_cast<int>(Kc - need + inb) <= limit || shift == 0) break;
            shift = shift > 8 ? shift - 8 : 0;
        }
        int out = 0;
        u64 kmin = ~0ull;
        for (int t = 0; t < count; ++t)
            if (keys[t] >= prefix) {
                keys[out++] = keys[t];
                kmin = std::min(kmin, keys[t]);
            }
        count = out;
        cthr = kmin;
        thr = std::nextafter(cval(kmin), -INFINITY);
    }
    float vmax(u32 v) const {  // v: vector index in the row's vector space
        float m = -INFINITY;
        for (int e = 0; e < W; ++e) m = std::fmax(m, x[hd + v * W + e]);
        return m;
    }
    // insert_round over the list entries [b, b + 32)
    void insert_round(const std::vector<int>& vecs, int Kc) {
        int cnt;
        for (;;) {
            cnt = 0;
            for (int v : vecs)
                for (int e = 0; e < W; ++e) cnt += beats(x[hd + v * W + e], hd + v * W + e, cthr);
            if (count + cnt <= cap) break;
            compact(Kc, big_limit(Kc, cap, 32 * W));
        }
        for (int v : vecs)
            for (int e = 0; e < W; ++e) {
                const u32 i = hd + v * W + e;
                if (beats(x[i], i, cthr)) keys[count++] = composite(float_key(x[i]), i);
            }
    }
    std::vector<int> lst;
    void drain(int Kc, bool whole) {
        const int vn = static_cast<int>(lst.size());
        const int first = whole ? 0 : vn % 32;
        for (int b = first; b < vn; b += 32) {
            std::vector<int> r(lst.begin() + b, lst.begin() + std::min(vn, b + 32));
            insert_round(r, Kc);
        }
        lst.resize(first);
    }
    // vote over one warp step: vectors s*32 + lane, lanes with ok
    void vote_step(u32 step, u32 nvec) {
        for (u32 l = 0; l < 32; ++l) {
            const u32 v = step * 32 + l;
            if (v >= nvec) continue;
            const float m = vmax(v);
            rmax = std::fmax(rmax, m);
            ++voted;
            ++voted_w;
            if (m > thr) {
                lst.push_back(static_cast<int>(v));
                ++parked;
            }
        }
    }
    void scalar(u32 begin, u32 end, int Kc) {
        for (u32 b = begin; b < end; b += 32) {
            bool any = false;
            for (u32 l = 0; l < 32 && b + l < end; ++l) {
                rmax = std::fmax(rmax, x[b + l]);
                any |= x[b + l] > thr;
            }
            if (!any) continue;
            if (count + 32 > cap) compact(Kc, big_limit(Kc, cap, 32));
            for (u32 l = 0; l < 32 && b + l < end; ++l)
                if (beats(x[b + l], b + l, cthr)) keys[count++] = composite(float_key(x[b + l]), b + l);
        }
    }
};

// 0: sampled pass kept; 1: given up after phase 1 (in order, main kernel); 2: route_safe after a
// phase >= 2; 3: route_safe at the end (count < K); 4: route_ties after the sample.
struct row_result {
    int outcome, phase, count_end, compactions, s0, gain1;
};

static int pre_steps = 1;
static int gain_factor = 4;  // the committed test: gain x 4 x (P - phi) < K - now
static row_result run_row(const float* x, u32 V, u32 hd, int K, int cap, int P, int r_sample) {
    emu m;
    m.K = K;
    m.cap = cap;
    m.P = P;
    m.r_sample = r_sample;
    if (bf16_rows) {
        m.U = 2;
        m.W = 8;
    }
    m.L = 32 * m.U + 32;
    m.keys.assign(cap + 64, 0);
    m.x = x;
    m.hd = hd;
    const int U = m.U, W = m.W;
    const u32 nvec = (V - hd) / W, nfull = nvec / 32;
    int Kc = r_sample;
    bool thresholded = false;
    int s0 = 0, gain1 = -1;
    auto end_sample = [&] {
        if (!m.lst.empty()) m.drain(Kc, true);
        if (m.count > Kc) m.compact(Kc, Kc + Kc / 2);
        thresholded = m.count >= Kc;
        Kc = K;
    };
    m.scalar(0, hd, Kc);
    const u32 stride = static_cast<u32>(P);
    int streak = 0, streak_max = 0;
    bool fired = false;
    // the early test at a drain of the sample (session n): the window's parked and voted vectors read before the
    // drain, the keys it inserted after it (a drain that compacted counts as not quiet)
    int early_quiet = early_quiet_max;
    auto early_drain = [&](u32 steps_read, u32 sample_steps) {
        const long pw = static_cast<long>(m.lst.size()), vw = m.voted_w;
        const int c0 = m.count, k0 = m.compactions;
        m.voted_w = 0;
        m.drain(Kc, false);
        if (fired) return;
        bool hit;
        if (early_mode == 0) {  // the window's share (a register for the step of the last drain)
            hit = k0 > 0 && 10 * pw >= 9 * vw && m.compactions == k0 && m.count - c0 <= early_quiet;
        } else {  // register-free: >= 29 U parked (90% of a batch) and the drain's count grew by 0 .. quiet
            hit = pw >= 29 * m.U && m.count >= c0 && m.count - c0 <= early_quiet;
        }
        if (hit) ++streak; else streak = 0;
        streak_max = std::max(streak_max, streak);
        if (streak < early_streak) return;
        int at = 0;
        for (int t = 0; t < m.count; ++t) at += static_cast<u32>(m.keys[t] >> 32) == static_cast<u32>(m.cthr >> 32);
        if (at >= 32) {
            fired = true;
            ++early_rows;
            early_frac_sum += static_cast<double>(steps_read) / std::max<u32>(sample_steps, 1);
        }
    };
    for (u32 phi = 0; phi < stride && phi < nfull; ++phi) {
        u32 n = (nfull - phi + stride - 1) / stride;
        if (phi == 0 && pre_steps == 1) {  // patch F (6199adc): the sample's last step first
            --n;
            m.vote_step(phi + n * stride, nvec);
        }
        if (phi == 0 && pre_steps > 1) {  // before it: the last min(U, n) steps first, then a drain check
            const u32 pre = std::min<u32>(n, static_cast<u32>(pre_steps));
            n -= pre;
            for (u32 u = 0; u < pre; ++u) m.vote_step(phi + (n + u) * stride, nvec);
            if (static_cast<int>(m.lst.size()) + 32 * U > m.L) m.drain(Kc, false);
        }
        u32 i = 0;
        const u32 sample_steps = n + (phi == 0 && pre_steps == 1 ? 1u : 0u);
        for (; i < n; i += U) {
            for (int u = 0; u < U; ++u)
                if (i + u < n) m.vote_step(phi + (i + u) * stride, nvec);
            if (static_cast<int>(m.lst.size()) + 32 * U > m.L) {
                if (phi == 0) early_drain(std::min(i + U, n) + (sample_steps - n), sample_steps);
                else m.drain(Kc, false);
            }
        }
        if (phi == 0) {
            if (!fired) ++early_streak_max_hist[std::min(streak_max, 8)];
            end_sample();
            s0 = m.count;
            {  // session m: the kept keys at the threshold's value (the tests of calls 4-6, tie_tests below)
                int at = 0;
                for (int t = 0; t < m.count; ++t) at += static_cast<u32>(m.keys[t] >> 32) == static_cast<u32>(m.cthr >> 32);
                if (thresholded) {
                    // the sample's vectors parked, in percent (a plateau parks all of them)
                    const int pct = static_cast<int>(100 * m.parked / std::max<long>(m.voted, 1));
                    ++parked_pct_hist[std::min(pct, 100) / 10];
                    tie_tests[3] += 10 * m.parked >= 9 * m.voted && at >= 32;
                    tie_tests[0] += 2 * at >= m.count && at >= 32;
                    tie_tests[1] += 8 * at >= 7 * m.count && at >= 32;
                    tie_tests[2] += m.count - at <= 8 && at >= 32;
                    tie_at_sum += at;
                    tie_count_sum += m.count;
                    ++tie_rows;
                }
            }
            u32 hi = float_key(m.rmax);
            if (thresholded && hi == static_cast<u32>(m.cthr >> 32)) {
                u32 low = 0;  // the kept composites' largest low word: ~(the lowest kept index)
                for (int t = 0; t < m.count; ++t) low = std::max(low, static_cast<u32>(m.keys[t]));
                rising_ties += 2ull * static_cast<u64>(~low) >= static_cast<u64>(V);
                return {4, 0, m.count, m.compactions, s0, gain1};
            }
        }
        const int now = m.count + static_cast<int>(m.lst.size());
        if (phi >= 1 && thresholded && now < K) {
            if (phi == 1) gain1 = now - s0;
            const bool give_up = gain_factor > 0 ? (now - s0) * gain_factor * static_cast<int>(stride - phi) < K - now
                                                 : now <= s0;  // gain_factor 0: a phase that gained nothing
            if (give_up)
                return {phi >= 2 ? 2 : 1, static_cast<int>(phi), now, m.compactions, s0, gain1};
            s0 = now;
        } else if (phi == 1) {
            gain1 = now - s0;
        }
    }
    const u32 rem = nvec % 32;
    if (rem > 0) m.vote_step(nfull, nvec);
    if (!m.lst.empty()) m.drain(Kc, true);
    m.scalar(hd + nvec * W, V, Kc);
    if (thresholded && m.count < K) return {3, static_cast<int>(stride), m.count, m.compactions, s0, gain1};
    return {0, -1, m.count, m.compactions, s0, gain1};
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    const u64 seed = std::strtoull(argv[1], nullptr, 10);
    const std::string kind = argc > 2 ? argv[2] : "cluster256";
    const int K = argc > 3 ? std::atoi(argv[3]) : 256;
    const long rows = argc > 4 ? std::atol(argv[4]) : 4096;
    const u32 V = argc > 5 ? static_cast<u32>(std::atol(argv[5])) : 50257;
    bf16_rows = argc > 13 && std::string(argv[13]) == "bf16";
    // launcher (fp32, U = 3): cap = kpad + (budget - kpad), P = 5 K / 128, r = 64
    int kpad = 32;
    while (kpad < K) kpad <<= 1;
    const int ub = bf16_rows ? 2 : 3, list_bytes = (32 * ub + 32) * 20, budget = 800 - list_bytes / 8,
              step = bf16_rows ? 256 : 128;
    const int cap = kpad + (kpad + step < budget ? budget - kpad : step);
    const int P = static_cast<int>(5 * K / 128);
    const int r_sample = 64;
    const std::string cname = std::to_string(rows) + "x" + std::to_string(V) + ":K" + std::to_string(K) + ":" + kind;
    const u64 cs = fusebench::splitmix64(seed ^ fusebench::hash_string("softmax_topk_adversarial/" + cname + (bf16_rows ? "/bf16" : "/fp32")));
    const fusebench::rng g = fusebench::rng(cs).fork("logits");
    std::vector<double> z(V);
    std::vector<float> x(V);
    int hist[5] = {};
    int maxc = 0; long sumc = 0;
    pre_steps = argc > 8 ? std::atoi(argv[8]) : 1;
    early_streak = argc > 10 ? std::atoi(argv[10]) : early_streak;
    early_quiet_max = argc > 11 ? std::atoi(argv[11]) : early_quiet_max;
    early_mode = argc > 12 ? std::atoi(argv[12]) : early_mode;
    gain_factor = argc > 9 ? std::atoi(argv[9]) : 4;
    const u64 base_off = argc > 7 ? std::strtoull(argv[7], nullptr, 10) : 0;
    const int thr_print = argc > 6 ? std::atoi(argv[6]) : 1000;
    for (long r = 0; r < rows; ++r) {
        g.fill_normal(static_cast<u64>(r) * V, V, z.data());
        for (u32 j = 0; j < V; ++j) {
            const double n = z[j];
            double v = n;
            if (kind == "cluster256") v = j % 256 == 3 ? 20.0 + n : n - 5.0;
            else if (kind == "cluster32") v = j % 32 == 5 ? 20.0 + n : n - 5.0;
            else if (kind == "all_equal") v = 0.5;
            else if (kind == "ties") v = std::floor(2.0 * n) * 0.5;
            else if (kind == "ascending") v = -4.0 + 8.0 * static_cast<double>(j) / static_cast<double>(V);
            else if (kind == "descending") v = 4.0 - 8.0 * static_cast<double>(j) / static_cast<double>(V);
            else if (kind == "stride_trap") v = (j / 128) % 10 == 0 ? 20.0 + n : n - 5.0;  // fp32: 512 / 4
            else if (kind == "random") v = n;
            else if (kind == "plateau") v = j % std::max<u32>(V / 40, 1) == 7 % std::max<u32>(V / 40, 1) ? 3.0 : 1.0;
            // the GPU test's rows 7 and 8 ("fused_stream_resample at K > 32", session o): 1000 equal maxima at the
            // end of a rise, at the start of a fall
            else if (kind == "rise_flat_end") v = -4.0 + 8.0 * static_cast<double>(std::min<u32>(j, V - 1000)) / static_cast<double>(V);
            else if (kind == "flat_start_fall") v = 4.0 - 8.0 * static_cast<double>(j > 999 ? j - 999 : 0) / static_cast<double>(V);
            x[j] = static_cast<float>(v);
            if (bf16_rows) {  // round to nearest even at bf16 (NaN-free inputs here)
                u32 b;
                std::memcpy(&b, &x[j], 4);
                b = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
                std::memcpy(&x[j], &b, 4);
            }
        }
        const u64 esize = bf16_rows ? 2 : 4;
        const u64 addr = base_off + static_cast<u64>(r) * V * esize;  // from a 256-byte aligned base (+ argv[7])
        const u32 hd = static_cast<u32>(((128 - addr % 128) % 128) / esize);
        const row_result rr = run_row(x.data(), V, hd, K, cap, P, r_sample);
        ++hist[rr.outcome];
        maxc = std::max(maxc, rr.compactions); sumc += rr.compactions;
        if (rr.compactions >= thr_print) std::printf("row %ld hd %u compactions %d count %d s0 %d gain1 %d\n", r, hd, rr.compactions, rr.count_end, rr.s0, rr.gain1);
        if (rr.outcome != 0)
            std::printf("row %ld hd %u outcome %d phase %d count %d compactions %d s0 %d gain1 %d\n", r, hd, rr.outcome,
                        rr.phase, rr.count_end, rr.compactions, rr.s0, rr.gain1);
    }
    std::printf("compactions max %d mean %.2f\n", maxc, static_cast<double>(sumc) / rows);
    std::printf("SUMMARY seed %llu kind %s K %d cap %d P %d: kept %d inorder %d retry_phase %d retry_end %d ties %d\n",
                static_cast<unsigned long long>(seed), kind.c_str(), K, cap, P, hist[0], hist[1], hist[2], hist[3], hist[4]);
    std::printf("TIES rows thresholded %ld: half %ld, 7/8 %ld, <= 8 above %ld, parked >= 90%% %ld; mean kept %.1f, at the value %.1f\n",
                tie_rows, tie_tests[0], tie_tests[1], tie_tests[2], tie_tests[3],
                tie_rows ? static_cast<double>(tie_count_sum) / tie_rows : 0.0,
                tie_rows ? static_cast<double>(tie_at_sum) / tie_rows : 0.0);
    std::printf("EARLY mode %d streak %d quiet <= %d: fires on %ld rows, at %.1f%% of the sample's steps on average; rows where it does not fire, by their longest streak 0..8+:",
                early_mode, early_streak, early_quiet_max, early_rows, early_rows ? 100.0 * early_frac_sum / early_rows : 0.0);
    for (long h : early_streak_max_hist) std::printf(" %ld", h);
    std::printf("\n");
    std::printf("RISING ties-at-the-top rows whose lowest kept index is in the row's second half: %ld\n", rising_ties);
    std::printf("PARKED share of the sample's vectors, rows by tenths (0-9%% .. 100%%):");
    for (long h : parked_pct_hist) std::printf(" %ld", h);
    std::printf("\n");
    return 0;
}
