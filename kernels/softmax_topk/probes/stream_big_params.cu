// Diagnostic (not part of the build): fused_stream's K > 256 launches with other sample strides P,
// sample ranks r, sample kinds and key room per warp (host parameters only, set through the copy
// that probes/big_params_patch.py writes), on N(0, sd^2) logits, cold L2, events (median of 5 per
// configuration and round), rounds interleaved configuration by configuration; each configuration's
// indices compared with the first configuration's (give the library's choice, "0:0:-1:0", first), and
// its probabilities (they differ in the last bits when P changes the order of the sum). Build on a
// GPU machine from the root:
//   python3 kernels/softmax_topk/probes/big_params_patch.py kernels/softmax_topk/fused_stream.cu /tmp/bp/fs_params.cu
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I. -I/tmp/bp \
//        kernels/softmax_topk/probes/stream_big_params.cu -o stream_big_params
//   ./stream_big_params f32|bf16|f16 rows V K std rounds P:r:maxima:cap ...
// (P, r, cap 0 and maxima -1: the library's value; maxima 1: sample_by_maxima, 0: the parked sample.)
#include "fs_params.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace fk = fusebench::kernels;

int main(int argc, char** argv) {
    if (argc < 8) {
        std::fprintf(stderr, "usage: stream_big_params f32|bf16|f16 rows V K std rounds P:r:maxima:cap ...\n");
        return 2;
    }
    const probe_problem pr = make_problem(argv[1], std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
                                          static_cast<float>(std::atof(argv[5])));
    const auto a = pr.args;
    const int rounds = std::atoi(argv[6]);
    std::vector<fk::big_params_t> cfg;
    for (int i = 7; i < argc; ++i) {
        fk::big_params_t c;
        if (std::sscanf(argv[i], "%d:%d:%d:%d", &c.P, &c.r, &c.maxima, &c.cap) != 4) return 2;
        cfg.push_back(c);
    }
    const std::size_t nout = static_cast<std::size_t>(a.rows * a.K);
    std::vector<float> p0(nout), p1(nout);
    std::vector<std::int32_t> i0(nout), i1(nout);
    for (int rd = 0; rd < rounds; ++rd) {
        for (std::size_t c = 0; c < cfg.size(); ++c) {
            fk::big_params = cfg[c];
            CK(cudaMemset(a.d_indices, 0xFF, nout * 4));
            const double med = time_launches(pr, [&] { fk::launch_softmax_topk_fused_stream(a, nullptr); }, [](bool) {});
            auto& pp = c == 0 ? p0 : p1;
            auto& ii = c == 0 ? i0 : i1;
            CK(cudaMemcpy(pp.data(), a.d_probs, nout * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(ii.data(), a.d_indices, nout * 4, cudaMemcpyDeviceToHost));
            // Indices must match; probabilities may differ in the last bits (the sum's order follows P).
            std::size_t diff = 0;
            double rel = 0;
            if (c > 0)
                for (std::size_t k = 0; k < nout; ++k) {
                    diff += i1[k] != i0[k];
                    if (p0[k] > 0) rel = std::max(rel, std::fabs(static_cast<double>(p1[k]) - p0[k]) / p0[k]);
                }
            std::printf("RESULT %s %s x %s K %s round %d cfg %s: median %.1f us, %zu of %zu indices differ from cfg 0, "
                        "probabilities within %.1e\n",
                        argv[1], argv[2], argv[3], argv[4], rd, argv[7 + c], med, diff, nout, rel);
        }
    }
    return 0;
}
