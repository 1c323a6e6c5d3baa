// Diagnostic (not part of the build): the library's fused_stream, without timeline hooks, on N(0, sd^2)
// logits, cold L2, six event-timed launches (for ncu: --kernel-name regex:softmax_topk_stream --launch-skip 1).
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -lineinfo -arch=sm_90 -I. \
//        kernels/softmax_topk/probes/stream_plain.cu -o stream_plain && ./stream_plain bf16 4096 50257 10 10
#include "kernels/softmax_topk/fused_stream.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"
#include <string>
int main(int argc, char** argv) {
    if (argc < 6) return 2;
    const probe_problem pr = make_problem(argv[1], std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
                                          static_cast<float>(std::atof(argv[5])));
    const auto a = pr.args;
    const double med = time_launches(pr, [&] { fusebench::kernels::launch_softmax_topk_fused_stream(a, nullptr); },
                                     [](bool) {});
    std::printf("%s %s x %s K %s: median %.1f us (events)\n", argv[1], argv[2], argv[3], argv[4], med);
    return 0;
}
