// Diagnostic (not part of the build): fused_resident (v8, probes/resident_kernel.cu) on one input kind, checked and
// timed by probes/topk16_check.cuh.
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -I. \
//        kernels/softmax_topk/probes/resident_check.cu -o resident_check
//   ./resident_check bf16|f16 rows V K kind [sd]
#include "kernels/softmax_topk/probes/resident_kernel.cu"
#include "kernels/softmax_topk/probes/topk16_check.cuh"

namespace {

// -DFUSEBENCH_RES_TIMELINE=1: the per-phase timeline of one more launch.
void timeline(const probe_problem& pr, const std::string& kind) {
#if FUSEBENCH_RES_TIMELINE
    const std::int64_t rows = pr.args.rows, V = pr.args.V, K = pr.args.K;
    {
        unsigned long long z[8] = {}, ph[8];
        CK(cudaMemcpyToSymbol(fusebench::kernels::res_phase_ns, z, sizeof z));
        fusebench::kernels::launch_softmax_topk_fused_resident(pr.args, nullptr);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpyFromSymbol(ph, fusebench::kernels::res_phase_ns, sizeof ph));
        int sms = 0;
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        const double per = static_cast<double>(std::min<std::int64_t>(rows, sms)) *
                           std::ceil(static_cast<double>(rows) / std::min<std::int64_t>(rows, sms));
        const char* names[6] = {"wait", "pass1+max", "select t", "pass2+sum", "ties/overflow", "order+write"};
        std::printf("TL %lld x %lld K %lld %s: us a row (thread 0):", static_cast<long long>(rows), static_cast<long long>(V),
                    static_cast<long long>(K), kind.c_str());
        for (int q = 0; q < 6; ++q) std::printf(" %s %.2f", names[q], ph[q] * 1e-3 / per);
        std::printf("\n");
    }
#else
    (void)pr;
    (void)kind;
#endif
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 6) return 2;
    const auto launch = [](const fusebench::kernels::softmax_topk_args& a) {
        fusebench::kernels::launch_softmax_topk_fused_resident(a, nullptr);
    };
    try {
        return std::string(argv[1]) == "f16" ? check_and_time<__half>(argc, argv, "RES", launch, timeline)
                                             : check_and_time<__nv_bfloat16>(argc, argv, "RES", launch, timeline);
    } catch (const std::exception& e) {
        std::printf("RES %s: threw %s\n", argv[1], e.what());
        return 1;
    }
}
