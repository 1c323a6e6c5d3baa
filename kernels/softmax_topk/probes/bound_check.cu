// Diagnostic (not part of the build): fused_bound (v9, probes/bound_kernel.cu) or the library's fused_stream on
// one input kind, checked and timed by probes/topk16_check.cuh (the same inputs, check and timer for both).
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. \
//        kernels/softmax_topk/probes/bound_check.cu -o bound_check
//   ./bound_check bound|stream bf16|f16 rows V K kind [sd]
// (-DFUSEBENCH_BOUND_NW=, _U=, _PF=: the kernel's warps a block, steps a batch, next-row L2 prefetch steps.)
#ifndef BOUND_ONLY  // -DBOUND_ONLY: without fused_stream (its compile takes minutes)
#include "kernels/softmax_topk/fused_stream.cu"
#endif
#include "kernels/softmax_topk/probes/bound_kernel.cu"
#include "kernels/softmax_topk/probes/topk16_check.cuh"

int main(int argc, char** argv) {
    if (argc < 7) return 2;
    const std::string variant = argv[1];
    const bool bound = variant == "bound";
    if (!bound && variant != "stream") return 2;
    const char* tag = bound ? "BND" : "STR";
    const auto launch = [bound](const fusebench::kernels::softmax_topk_args& a) {
        if (bound) fusebench::kernels::launch_softmax_topk_fused_bound(a, nullptr);
#ifndef BOUND_ONLY
        else fusebench::kernels::launch_softmax_topk_fused_stream(a, nullptr);
#else
        else throw std::invalid_argument("built with -DBOUND_ONLY: no fused_stream");
#endif
    };
    const auto none = [](const probe_problem&, const std::string&) {};
    try {
        return std::string(argv[2]) == "f16" ? check_and_time<__half>(argc - 1, argv + 1, tag, launch, none)
                                             : check_and_time<__nv_bfloat16>(argc - 1, argv + 1, tag, launch, none);
    } catch (const std::exception& e) {
        std::printf("%s %s: threw %s\n", tag, argv[2], e.what());
        return 1;
    }
}
