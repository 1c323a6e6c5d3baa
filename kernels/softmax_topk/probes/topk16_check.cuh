#pragma once
// What the 16-bit softmax + top-k probes share (diagnostics, not part of the build): the input kinds,
// a row-by-row check against a double-precision CPU top-K of the same 16-bit logits (indices exact,
// ties by lower index; probabilities within the suite's 1e-5 relative + 2^-126 absolute; rows without a finite softmax: NaN and
// 0..K-1), then the launch timed (cold L2, events, median of 5). argv: bf16|f16 rows V K kind [sd].
// kinds: random (N(0, sd^2)), ascending, descending, all_equal, ties (N(0, sd^2) rounded to 0.5),
// cluster256, masked (30% -inf), nan (even rows one NaN), posinf, all_masked, misaligned (the
// logits one element past a 16-byte boundary), huge (+-(0.5..1.5) 1e30: bf16 rows whose |max| needs the exact
// sum), plateau (1.0 with a 3.0 every 1009th element: a long sum of equal terms, session l). Used by resident_check.cu and bound_check.cu.
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

template <class T> __global__ void fill_kind(T* x, std::size_t n, std::size_t V, int kind, float sd) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t r = i / V, c = i % V;
        const float u1 = (mix32(11 ^ (2 * i)) + 1.0f) * 2.3283064e-10f;
        const float u2 = mix32(11 ^ (2 * i + 1)) * 2.3283064e-10f;
        const float g = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2) * sd;
        float v = g;
        switch (kind) {
            case 1: v = 20.0f * static_cast<float>(c) / static_cast<float>(V) - 10.0f; break;
            case 2: v = 10.0f - 20.0f * static_cast<float>(c) / static_cast<float>(V); break;
            case 3: v = 0.5f; break;
            case 4: v = rintf(g * 2.0f) * 0.5f; break;
            case 5: v = (c % 256 == 3) ? 30.0f + u2 : g * 0.1f; break;
            case 6: v = u2 < 0.3f ? -INFINITY : g; break;
            case 7: v = (r % 2 == 0 && c == V / 3) ? NAN : g; break;
            case 8: v = (r % 2 == 0 && c == V / 2) ? INFINITY : g; break;
            case 9: v = (r % 2 == 0) ? -INFINITY : g; break;
            case 10: v = copysignf((0.5f + u2) * 1e30f, g); break;  // fp16: +-inf (the row has no finite softmax)
            case 11: v = (c % 1009 == 7) ? 3.0f : 1.0f; break;

            default: break;
        }
        x[i] = static_cast<T>(v);
    }
}

template <class T> double to_d(std::uint16_t b) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    } else {
        __half_raw hr;
        hr.x = b;
        return static_cast<double>(__half2float(__half(hr)));
    }
}

}  // namespace

template <class T, class Launch, class After>
int check_and_time(int argc, char** argv, const char* tag, Launch launch, After after) {
    const std::int64_t rows = std::atoll(argv[2]), V = std::atoll(argv[3]), K = std::atoll(argv[4]);
    const std::string kind = argv[5];
    const float sd = argc > 6 ? static_cast<float>(std::atof(argv[6])) : 10.0f;
    const char* kinds[] = {"random", "ascending", "descending", "all_equal", "ties", "cluster256",
                           "masked", "nan", "posinf", "all_masked", "huge", "plateau"};
    int kid = -1;
    for (int q = 0; q < 12; ++q) kid = kind == kinds[q] ? q : kid;
    const bool misaligned = kind == "misaligned";
    if (misaligned) kid = 0;
    if (kid < 0) return 2;
    const std::size_t n = static_cast<std::size_t>(rows * V);
    void* base = nullptr;
    CK(cudaMalloc(&base, n * 2 + 16));
    T* x = reinterpret_cast<T*>(static_cast<char*>(base) + (misaligned ? 2 : 0));
    fill_kind<<<1024, 256>>>(x, n, static_cast<std::size_t>(V), kid, sd);
    CK(cudaGetLastError());
    probe_problem pr;
    CK(cudaMalloc(&pr.flush, probe_problem::flush_bytes));
    float* dp = nullptr;
    std::int32_t* di = nullptr;
    CK(cudaMalloc(&dp, static_cast<std::size_t>(rows * K) * 4));
    CK(cudaMalloc(&di, static_cast<std::size_t>(rows * K) * 4));
    pr.args = fusebench::kernels::softmax_topk_args{std::is_same_v<T, __half> ? fusebench::kernels::elem::f16
                                                                               : fusebench::kernels::elem::bf16,
                                                     x, dp, di, rows, V, K};
    pr.logit_bytes = n * 2;
    CK(cudaMemset(dp, 0, static_cast<std::size_t>(rows * K) * 4));
    CK(cudaMemset(di, 0xFF, static_cast<std::size_t>(rows * K) * 4));
    launch(pr.args);
    CK(cudaDeviceSynchronize());
    std::vector<std::uint16_t> hx(n);
    std::vector<float> hp(static_cast<std::size_t>(rows * K));
    std::vector<std::int32_t> hi(static_cast<std::size_t>(rows * K));
    CK(cudaMemcpy(hx.data(), x, n * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hp.data(), dp, hp.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hi.data(), di, hi.size() * 4, cudaMemcpyDeviceToHost));
    // Rows checked: all when small, else every 7th and the last.
    std::vector<std::int64_t> check;
    for (std::int64_t r = 0; r < rows; ++r)
        if (n <= (std::size_t{40} << 20) || r % 7 == 0 || r == rows - 1) check.push_back(r);
    std::vector<std::int64_t> bad_idx(check.size(), 0);
    std::vector<double> worst(check.size(), 0.0);
    const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nt; ++t) {
        pool.emplace_back([&, t] {
            std::vector<double> v(static_cast<std::size_t>(V));
            std::vector<std::int32_t> ord(static_cast<std::size_t>(V));
            for (std::size_t c = t; c < check.size(); c += nt) {
                const std::int64_t r = check[c];
                bool finite = true;
                double m = -INFINITY;
                for (std::int64_t j = 0; j < V; ++j) {
                    v[j] = to_d<T>(hx[static_cast<std::size_t>(r * V + j)]);
                    if (std::isnan(v[j]) || v[j] == INFINITY) finite = false;
                    m = std::max(m, v[j]);
                }
                if (m == -INFINITY) finite = false;
                const float* p = &hp[static_cast<std::size_t>(r * K)];
                const std::int32_t* ix = &hi[static_cast<std::size_t>(r * K)];
                if (!finite) {
                    for (std::int64_t k = 0; k < K; ++k) bad_idx[c] += (ix[k] != k || !std::isnan(p[k]));
                    continue;
                }
                double s = 0;
                for (std::int64_t j = 0; j < V; ++j) s += std::exp(v[j] - m);
                std::iota(ord.begin(), ord.end(), 0);
                std::partial_sort(ord.begin(), ord.begin() + K, ord.end(), [&](std::int32_t a, std::int32_t b) {
                    return v[a] > v[b] || (v[a] == v[b] && a < b);
                });
                for (std::int64_t k = 0; k < K; ++k) {
                    bad_idx[c] += ix[k] != ord[k];
                    const double ref = std::exp(v[ord[k]] - m) / s;
                    // the suite's bound (prob_tolerance): |p - ref| <= 1e-5 ref + 2^-126 (fp32's smallest
                    // normal: a probability below it may flush to zero)
                    const double err = std::max(0.0, std::fabs(p[k] - ref) - 0x1p-126);
                    if (ref > 0) worst[c] = std::max(worst[c], err / ref);
                    else worst[c] = std::max(worst[c], err);
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    std::int64_t bad = 0, bad_rows = 0, first_bad = -1;
    double w = 0;
    for (std::size_t c = 0; c < check.size(); ++c) {
        bad += bad_idx[c];
        if (bad_idx[c] && first_bad < 0) first_bad = check[c];
        bad_rows += bad_idx[c] > 0;
        w = std::max(w, worst[c]);
    }
    const double us = time_launches(pr, [&] { launch(pr.args); },
                                    [](bool) {});
    after(pr, kind);
    const bool ok = bad == 0 && w <= 1e-5;
    std::printf("%s %-4s %lld x %lld K %lld %-10s: %s (%zu rows checked, %lld index mismatches in %lld rows, first %lld; "
                "p rel max %.2e) median %.2f us, %.0f GB/s\n",
                tag, argv[1], static_cast<long long>(rows), static_cast<long long>(V), static_cast<long long>(K), kind.c_str(),
                ok ? "PASS" : "FAIL", check.size(), static_cast<long long>(bad), static_cast<long long>(bad_rows),
                static_cast<long long>(first_bad), w, us, static_cast<double>(n * 2) / (us * 1e3));
    if (!ok && first_bad >= 0) {
        const std::int64_t r = first_bad;
        std::printf("  row %lld first outputs:", static_cast<long long>(r));
        for (std::int64_t k = 0; k < std::min<std::int64_t>(K, 8); ++k)
            std::printf(" (%d %.4g)", hi[static_cast<std::size_t>(r * K + k)], hp[static_cast<std::size_t>(r * K + k)]);
        std::printf("\n");
    }
    return ok ? 0 : 1;
}

