// Dense conv1d (kernel 3, padding 1, stride 1 or 2) + bias + GELU on fp32 tensors through Hopper's
// TF32 wgmma (variant `wgmma_tma_tf32`, issue 20 item 3a). TF32, not fp32-exact, like
// implicit_gemm_tf32: x and w rounded to TF32 (tf32_rna: cvt.rna, nearest, ties away) once, on
// their way into the operand preparation; products and sums fp32; the bias added unrounded. Judged
// by the same rule (naive_tf32, suites/conv1d_suite.cpp "TF32 variants").
// Versus implicit_gemm_tf32 (mma.sync m16n8k8, x staged through registers per block): wgmma_tma's
// pipeline (wgmma_tma.cuh) on fp32 operands. TF32 wgmma takes both operands K-major from shared
// memory only, which is what wgmma_tma's preparation produces: Wp[tap][C_out][C4] and
// xt[b][L][C4] (C4 = C_in rounded up to 4: TMA's 16-byte pitch), here as TF32-rounded fp32 words.
// A stage is one tap of a 32-channel chunk: 128-byte swizzle rows of 32 fp32 channels, the 16-bit
// kernel's bytes, 4 k-steps of wgmma.mma_async m64nNk8 .f32.tf32.tf32 (32 bytes each).
// Accumulation: the tensor cores' sum is not IEEE (it truncates; Fasi et al. 2021, Khattak and
// Mikaitis 2025). Chained over all 3 C_in / 8 k-steps (the 16-bit kernel's form) its error grew to
// 2.8-3.1x naive_tf32's at b8 512 -> 512 on an H100 and failed the suite's relative check on one
// seed of two; so each run of stages (a 32-channel chunk's 3 taps: 12 chained k8 instructions, or
// one stage: 4) sums from zero into a partial register accumulator that is added to the fp32
// accumulator by IEEE adds (implicit_gemm_tf32 does the same per tap): 0.12-0.7x naive_tf32's error
// (kernels/conv1d/NOTES.md has the figures and the tuning).
#include "kernels/conv1d/naive.cuh"
#include "kernels/conv1d/wgmma_tma.cuh"

namespace fusebench::kernels {
namespace conv1d_wgmma {
namespace {

template <int S>
void launch_tf32(const float* x, const float* w, const float* bias, float* y, void* workspace, const conv1d_dense_shape& s,
                 cudaStream_t stream, conv1d_wgmma_tf32_config cfg) {
    // 128 x 128 tiles, 6 stages; a partial sum per chunk (3 stages) or per stage. The tuning that
    // chose these (4 / 7 stages, 128 x 256 tiles, the chained accumulator) is in kernels/conv1d/NOTES.md.
    if (cfg == conv1d_wgmma_tf32_config::split) launch<float, S, pipe<6, 128, false, 1>, tf32_operand>(x, w, bias, y, workspace, s, stream);
    else launch<float, S, pipe<6, 128, false, 3>, tf32_operand>(x, w, bias, y, workspace, s, stream);
}

}  // namespace
}  // namespace conv1d_wgmma

const char* conv1d_dense_wgmma_tma_tf32_shape_unsupported(const conv1d_dense_shape& s) { return conv1d_wgmma::shape_limits(s, 4); }

const char* conv1d_dense_wgmma_tma_tf32_unsupported(const conv1d_dense_shape& s) {
    if (const char* why = conv1d_dense_wgmma_tma_tf32_shape_unsupported(s)) return why;
    return conv1d_wgmma::sm90a_code.current_device_unsupported();
}

std::size_t conv1d_dense_wgmma_tma_tf32_workspace_bytes(const conv1d_dense_shape& s) {
    return conv1d_wgmma::weights_bytes(s, 4) + conv1d_wgmma::xt_bytes(s, 4);
}

std::size_t conv1d_dense_wgmma_tma_tf32_xt_bytes(const conv1d_dense_shape& s) { return conv1d_wgmma::xt_bytes(s, 4); }

void launch_conv1d_dense_wgmma_tma_tf32(const float* x, const float* w, const float* bias, float* y, void* workspace,
                                        const conv1d_dense_shape& s, cudaStream_t stream, conv1d_wgmma_tf32_config cfg) {
    if (const char* why = conv1d_dense_wgmma_tma_tf32_shape_unsupported(s)) {
        throw std::invalid_argument(std::string("conv1d wgmma_tma_tf32: ") + why);
    }
    conv1d_wgmma::check_launchable(workspace, "conv1d wgmma_tma_tf32");
    if (s.stride == 1) conv1d_wgmma::launch_tf32<1>(x, w, bias, y, workspace, s, stream, cfg);
    else conv1d_wgmma::launch_tf32<2>(x, w, bias, y, workspace, s, stream, cfg);
}

}  // namespace fusebench::kernels
