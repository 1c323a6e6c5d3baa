// Diagnostic (not part of the build): fused_bound (v9, probes/bound_kernel.cu) or the library's fused_stream on
// one input kind, checked and timed by probes/topk16_check.cuh (the same inputs, check and timer for both).
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. \
//        kernels/softmax_topk/probes/bound_check.cu -o bound_check
//   ./bound_check bound|boundk|bound32|bulk32|lib|stream bf16|f16 rows V K kind [sd]
// (bound: the list built in the stream; boundk: call 1's key array and end-of-row passes; lib: the library's
// launch_softmax_topk_fused_bound (v9e); bound32 / bulk32 (v9c / v9d): 81b3c14's probe; -DFUSEBENCH_BOUND_TL=1:
// a phase timeline of one more launch.)
// (-DFUSEBENCH_BOUND_NW=, _U=, _PF=: the kernel's warps a block, steps a batch, next-row L2 prefetch steps.)
// (-DFUSEBENCH_BOUND_LIST_TL=1: the library's list kernel's phases, `lib` at K > 32; _LIST_CAP=, _LIST_U=: its list
// entries a warp and steps a batch.)
#ifndef BOUND_ONLY  // -DBOUND_ONLY: without fused_stream (its compile takes minutes)
#include "kernels/softmax_topk/fused_stream.cu"
#endif
#include "kernels/softmax_topk/probes/bound_kernel.cu"
#include "kernels/softmax_topk/probes/topk16_check.cuh"

int main(int argc, char** argv) {
    if (argc < 7) return 2;
    const std::string variant = argv[1];
    const int mode = variant == "bound" ? 1 : variant == "boundk" ? 0 : variant == "bound32" ? 2 : variant == "bulk32" ? 3 : -1;
    const bool bound = mode >= 0, lib = variant == "lib";
    if (!bound && !lib && variant != "stream") return 2;
    const char* tag = mode == 1 ? "BND" : mode == 0 ? "BNK" : mode == 2 ? "B32" : mode == 3 ? "BLK" : lib ? "LIB" : "STR";
    const auto launch = [bound, lib, mode](const fusebench::kernels::softmax_topk_args& a) {
        if (lib) fusebench::kernels::launch_softmax_topk_fused_bound(a, nullptr);
        else if (bound) fusebench::kernels::launch_softmax_topk_bound_probe(a, nullptr, mode);
#ifndef BOUND_ONLY
        else fusebench::kernels::launch_softmax_topk_fused_stream(a, nullptr);
#else
        else throw std::invalid_argument("built with -DBOUND_ONLY: no fused_stream");
#endif
    };
    const auto timeline = [&](const probe_problem& pr, const std::string& kind) {
#if FUSEBENCH_BOUND_LIST_TL
        if (lib && pr.args.K > 32) {  // the library's list kernel (fused_bound.cu, FUSEBENCH_BOUND_LIST_TL)
            unsigned long long z[8] = {}, ph[8];
            CK(cudaMemcpyToSymbol(fusebench::kernels::bound_list_phase_ns, z, sizeof z));
            launch(pr.args);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpyFromSymbol(ph, fusebench::kernels::bound_list_phase_ns, sizeof ph));
            const double rows = static_cast<double>(pr.args.rows);
            const char* names[6] = {"stream", "of which compactions", "max+sum+end compaction", "read K vectors",
                                    "kth+emit", "sort+write"};
            std::printf("TL LIST %s %lld x %lld K %lld %s: us a row (lane 0 of each warp):", argv[2],
                        static_cast<long long>(pr.args.rows), static_cast<long long>(pr.args.V),
                        static_cast<long long>(pr.args.K), kind.c_str());
            for (int q = 0; q < 6; ++q) std::printf(" %s %.2f,", names[q], ph[q] * 1e-3 / rows);
            std::printf(" compactions a row %.2f\n", ph[7] / rows);
            return;
        }
#endif
#if FUSEBENCH_BOUND_TL
        if (!bound) return;
        unsigned long long z[8] = {}, ph[8];
        CK(cudaMemcpyToSymbol(fusebench::kernels::bound_detail::bound_phase_ns, z, sizeof z));
        launch(pr.args);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpyFromSymbol(ph, fusebench::kernels::bound_detail::bound_phase_ns, sizeof ph));
        const double rows = static_cast<double>(pr.args.rows);
        const char* names[7] = {"stream", "max+sum", "t+list", "gather", "kth", "compact K", "sort+write"};
        std::printf("TL %s %s %lld x %lld K %lld %s: us a row (lane 0 of each warp):", tag, argv[2],
                    static_cast<long long>(pr.args.rows), static_cast<long long>(pr.args.V), static_cast<long long>(pr.args.K),
                    kind.c_str());
        for (int q = 0; q < 7; ++q) std::printf(" %s %.2f", names[q], ph[q] * 1e-3 / rows);
        std::printf(" | in-stream compactions a row %.2f\n", ph[7] / rows);
#else
        (void)pr;
        (void)kind;
#endif
    };
    try {
        return std::string(argv[2]) == "f16" ? check_and_time<__half>(argc - 1, argv + 1, tag, launch, timeline)
                                             : check_and_time<__nv_bfloat16>(argc - 1, argv + 1, tag, launch, timeline);
    } catch (const std::exception& e) {
        std::printf("%s %s: threw %s\n", tag, argv[2], e.what());
        return 1;
    }
}
