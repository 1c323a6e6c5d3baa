// Diagnostic (not part of the build): the library's fused_stream built with the compile-time knobs
// of one variant (-D...), timed on N(0, sd^2) logits (cold L2, events, median of 5), its outputs
// compared with a reference file that the first variant run for a case writes (indices must be
// equal; probabilities may differ in the last bits where the order of the row sum changes).
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I. [-D...] \
//        kernels/softmax_topk/probes/stream_ab.cu -o stream_ab
//   ./stream_ab f32|bf16|f16 rows V K sd name refdir
#include "kernels/softmax_topk/fused_stream.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 8) return 2;
    const probe_problem pr = make_problem(argv[1], std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
                                          static_cast<float>(std::atof(argv[5])));
    const auto a = pr.args;
    const std::size_t nout = static_cast<std::size_t>(a.rows * a.K);
    CK(cudaMemset(a.d_indices, 0xFF, nout * 4));
    const double med = time_launches(pr, [&] { fusebench::kernels::launch_softmax_topk_fused_stream(a, nullptr); },
                                     [](bool) {});
    std::vector<float> p(nout), p0(nout);
    std::vector<std::int32_t> i(nout), i0(nout);
    CK(cudaMemcpy(p.data(), a.d_probs, nout * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(i.data(), a.d_indices, nout * 4, cudaMemcpyDeviceToHost));
    const std::string ref = std::string(argv[7]) + "/" + argv[1] + "_" + argv[2] + "_" + argv[3] + "_" + argv[4] + "_" + argv[5];
    std::FILE* f = std::fopen(ref.c_str(), "rb");
    std::size_t diff = 0;
    double rel = 0;
    const char* what = "reference written";
    if (f != nullptr) {
        const bool ok = std::fread(p0.data(), 4, nout, f) == nout && std::fread(i0.data(), 4, nout, f) == nout;
        std::fclose(f);
        if (!ok) return 3;
        for (std::size_t k = 0; k < nout; ++k) {
            diff += i[k] != i0[k];
            if (p0[k] > 0) rel = std::max(rel, std::fabs(static_cast<double>(p[k]) - p0[k]) / p0[k]);
        }
        what = diff == 0 ? "indices equal to the reference" : "INDICES DIFFER";
    } else {
        f = std::fopen(ref.c_str(), "wb");
        std::fwrite(p.data(), 4, nout, f);
        std::fwrite(i.data(), 4, nout, f);
        std::fclose(f);
    }
    std::printf("AB %-8s %s %s x %s K %s: median %.1f us (events); %s (%zu differ, p rel %.1e)\n", argv[6], argv[1],
                argv[2], argv[3], argv[4], med, what, diff, rel);
    return 0;
}
