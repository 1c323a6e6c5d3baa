// Diagnostic (not part of the build): stream_plain with issue 22's adversarial kinds filled on the device
// (the suite's definitions; normals from probe_common's hash): argv[6] = all_equal | descending |
// stride_trap | cluster256 | ties | ascending | random
//   nvcc -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I. \
//        kernels/softmax_topk/probes/stream_adversarial.cu -o stream_adversarial && ./stream_adversarial fp32 4096 50257 256 1 stride_trap
// (kind sd10: N(0, 10^2); random: N(0, 1); prints "RES dtype K K kind median-us"); argv[7] = resample:
// fused_stream_resample's launcher instead of fused_stream's.
#include "kernels/softmax_topk/fused_stream.cu"
#include "kernels/softmax_topk/probes/probe_common.cuh"
#include <string>
template <class T> __global__ void fill_kind(T* x, std::size_t n, std::size_t V, int kind) {
    const std::size_t trap = 512 / sizeof(T);
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t j = i % V;
        const float u1 = (mix32(7 ^ (2 * i)) + 1.0f) * 2.3283064e-10f;
        const float u2 = mix32(7 ^ (2 * i + 1)) * 2.3283064e-10f;
        const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
        float v = z;
        if (kind == 1) v = 0.5f;
        if (kind == 2) v = 4.0f - 8.0f * static_cast<float>(j) / static_cast<float>(V);
        if (kind == 3) v = (j / trap) % 10 == 0 ? 20.0f + z : z - 5.0f;
        if (kind == 4) v = j % 256 == 3 ? 20.0f + z : z - 5.0f;
        if (kind == 5) v = floorf(2.0f * z) * 0.5f;
        if (kind == 6) v = 10.0f * z;
        if (kind == 7) v = -4.0f + 8.0f * static_cast<float>(j) / static_cast<float>(V);
        x[i] = static_cast<T>(v);
    }
}
int main(int argc, char** argv) {
    if (argc < 7) return 2;
    const probe_problem pr = make_problem(argv[1], std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]), 1.0f);
    const std::string k = argv[6];
    const int kind = k == "all_equal" ? 1 : k == "descending" ? 2 : k == "stride_trap" ? 3 : k == "cluster256" ? 4 : k == "ties" ? 5 : k == "sd10" ? 6 : k == "ascending" ? 7 : 0;
    const auto a = pr.args;
    const std::size_t n = static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(a.V);
    if (a.type == fusebench::kernels::elem::bf16) fill_kind<<<1024, 256>>>(static_cast<__nv_bfloat16*>(const_cast<void*>(a.d_logits)), n, a.V, kind);
    else fill_kind<<<1024, 256>>>(static_cast<float*>(const_cast<void*>(a.d_logits)), n, a.V, kind);
    CK(cudaDeviceSynchronize());
    const bool rs = argc > 7 && std::string(argv[7]) == "resample";
    const double med = time_launches(pr, [&] {
        if (rs) fusebench::kernels::launch_softmax_topk_fused_stream_resample(a, nullptr);
        else fusebench::kernels::launch_softmax_topk_fused_stream(a, nullptr);
    }, [](bool) {});
    std::printf("RES %s K %s %s %s %.1f\n", argv[1], argv[4], argv[6], rs ? "resample" : "stream", med);
    return 0;
}
