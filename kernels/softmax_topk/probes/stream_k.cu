// Diagnostic (not part of the build): fused_stream at one K, cold L2 (a 256 MB memset before each
// launch), event timing, probe_common's time_launches (median of 5 cold launches) in each of 2 rounds
// (the figures in fused_stream.cu were taken at 93ee708 with a median of 7), and an FNV-1a hash of the output
// indices, so that builds can be compared: the library's routing (K <= 32 to the K <= 32 kernel)
// against -DFUSEBENCH_STREAM_SMALL_MAX_K=k (K > k to the K > 32 kernel), and the K <= 32 kernel's key
// room above kpad, -DFUSEBENCH_STREAM_SMALL_SLACK=s (the library's: 16; the measurements in
// fused_stream.cu compared 0 and 16). Their indices are exact answers: the hashes must be equal.
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. \
//        [-DFUSEBENCH_STREAM_SMALL_MAX_K=8] kernels/softmax_topk/probes/stream_k.cu -o stream_k && \
//        ./stream_k bf16 4096 50257 32 10
#include "kernels/softmax_topk/fused_stream.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"

#include <algorithm>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 6) return 2;
    const probe_problem pr = make_problem(argv[1], std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
                                          static_cast<float>(std::atof(argv[5])));
    const auto a = pr.args;
    const auto launch = [&] { fusebench::kernels::launch_softmax_topk_fused_stream(a, nullptr); };
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<std::int32_t> idx(static_cast<std::size_t>(a.rows * a.K));
    CK(cudaMemcpy(idx.data(), a.d_indices, idx.size() * 4, cudaMemcpyDeviceToHost));
    std::uint64_t h = 1469598103934665603ull;
    for (const std::int32_t v : idx) h = (h ^ static_cast<std::uint32_t>(v)) * 1099511628211ull;
    double t[2];
    for (double& r : t) r = time_launches(pr, launch, [](bool) {});
    const double floor_us = static_cast<double>(pr.logit_bytes) / 3010e3;  // at 3010 GB/s [us]
    std::printf("stream_k small_max_k %d slack %d %s %s x %s K %s sd %s: %.1f %.1f us (%.1f%% of logits/3010 GB/s) indices %016llx\n",
                FUSEBENCH_STREAM_SMALL_MAX_K, FUSEBENCH_STREAM_SMALL_SLACK, argv[1], argv[2], argv[3], argv[4], argv[5], t[0], t[1],
                100.0 * floor_us / std::min(t[0], t[1]), static_cast<unsigned long long>(h));
    return 0;
}
