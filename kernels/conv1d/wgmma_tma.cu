// Dense conv1d (kernel 3, padding 1, stride 1 or 2) + bias + GELU on Hopper (variant `wgmma_tma`,
// issue 20). Versus implicit_gemm (mma.sync m16n8k16, x transposed through registers per block):
// - the convolution as three accumulated GEMMs, one per tap: Y[o, l] = sum_tap W_tap[o, :] .
//   X[:, s l + tap - 1], M = C_out, N = output positions, K = C_in;
// - a first kernel of every call (prepare_operands_kernel) repacks the weights tap-major,
//   Wp[tap][C_out][C8], and transposes x to xt[b][L][C8] (channels contiguous; C8 = C_in rounded
//   up to 8, zeros in the padding, so rows sit on TMA's 16-byte pitch for any C_in and any L). Both operands are then
//   K-major, the layout of the wgmma Q K^T of kernels/attention/hopper_fwd.cuh;
// - TMA loads per pipeline stage (one tap of one 64-channel chunk) a 128 x 64 tile of Wp and a
//   128-position x 64-channel box of xt whose first row is position l0 s + tap - 1: a tap is a
//   shift of the box along TMA's dimension 1 and the stride is that dimension's elementStrides (2
//   loads every other row); positions -1 and >= L, channels >= C_in and rows >= C_out arrive as
//   zeros, so the padding and every ragged edge cost nothing in the main loop;
// - wgmma.mma_async m64n128k16 bf16 / fp16 -> fp32 from shared memory (128-byte swizzle), one
//   group of 4 k-steps in flight while the next stage is waited for;
// - the structure of kernels/fp8/gemm_wgmma.cu: a producer warpgroup (one thread issues TMA into a
//   ring of 6 stages, full / empty mbarriers), two consumer warpgroups, setmaxnreg 40 / 232,
//   persistent grid (one CTA per SM walking 128 x 128 tiles, the C_out / 128 row blocks of a tile
//   of x next to each other so that they share it in L2); configurations coop (both warpgroups on
//   each tile) and pingpong (alternate tiles, one's epilogue under the other's MMAs);
// - epilogue from the registers: + bias, GELU (erf, the formula of the other kernels), one
//   rounding, paired 4-byte stores where L_out is even.
// Why x is transposed rather than read in place (positions contiguous, wgmma's transposed-B
// form): a TMA box must start on a 16-byte boundary of its innermost dimension (PTX ISA, tensor
// tiled mode: "the address of the bounding box must be aligned to 16 bytes"), so the taps' shifts
// by one position cannot be boxes of x; an H100 answered those loads with an illegal-instruction
// error (kernels/conv1d/NOTES.md). TMA cannot stride the innermost dimension either (cuTensorMapEncodeTiled
// ignores elementStrides[0] without interleave), which stride 2 would need.
//
// The pipeline (operand preparation, kernel, maps) is wgmma_tma.cuh's, shared with the TF32 variant
// (wgmma_tma_tf32.cu). wgmma and setmaxnreg exist only for the architecture-specific sm_90a target:
// CMakeLists.txt adds -gencode arch=compute_90a,code=sm_90a to this file, and the plain sm_90 pass
// compiles the kernel body away. A probe kernel checks at run time which of the two the loader picked.
#include "kernels/conv1d/wgmma_tma.cuh"

namespace fusebench::kernels {
namespace conv1d_wgmma {
namespace {

// The two 16-bit configurations: 128 x 128 tiles, 6 stages, the accumulator chained in the tensor
// core; coop (both consumer warpgroups on each tile) or pingpong (alternate tiles).
using coop_pipe = pipe<6, 128, false, 0>;
using pingpong_pipe = pipe<6, 128, true, 0>;

template <typename T, int S>
void launch_16(const void* x, const void* w, const void* bias, void* y, void* workspace, const conv1d_dense_shape& s,
               cudaStream_t stream, conv1d_wgmma_schedule schedule) {
    if (schedule == conv1d_wgmma_schedule::pingpong) launch<T, S, pingpong_pipe, operand_kept>(x, w, bias, y, workspace, s, stream);
    else launch<T, S, coop_pipe, operand_kept>(x, w, bias, y, workspace, s, stream);
}

}  // namespace
}  // namespace conv1d_wgmma

const char* conv1d_dense_wgmma_tma_shape_unsupported(elem t, const conv1d_dense_shape& s) {
    if (t == elem::f32) return "wgmma takes bf16 or fp16 (fp32: wgmma_tma_tf32, TF32 operands)";
    return conv1d_wgmma::shape_limits(s, 2);
}

const char* conv1d_dense_wgmma_tma_unsupported(elem t, const conv1d_dense_shape& s) {
    if (const char* why = conv1d_dense_wgmma_tma_shape_unsupported(t, s)) return why;
    return conv1d_wgmma::sm90a_code.current_device_unsupported();
}

std::size_t conv1d_dense_wgmma_tma_workspace_bytes(elem t, const conv1d_dense_shape& s) {
    if (t == elem::f32) return 0;
    return conv1d_wgmma::weights_bytes(s, 2) + conv1d_wgmma::xt_bytes(s, 2);
}

std::size_t conv1d_dense_wgmma_tma_xt_bytes(const conv1d_dense_shape& s) { return conv1d_wgmma::xt_bytes(s, 2); }

conv1d_wgmma_schedule conv1d_wgmma_schedule_for(const conv1d_dense_shape& s, int sm_count) {
    const std::size_t two_tiles_a_cta = 2 * static_cast<std::size_t>(std::max(sm_count, 1));
    return conv1d_wgmma::tile_count(s) >= two_tiles_a_cta && s.cin >= 256 ? conv1d_wgmma_schedule::pingpong
                                                                          : conv1d_wgmma_schedule::cooperative;
}

void launch_conv1d_dense_wgmma_tma(elem t, const void* x, const void* w, const void* bias, void* y, void* workspace,
                                   const conv1d_dense_shape& s, cudaStream_t stream, conv1d_wgmma_schedule schedule) {
    if (const char* why = conv1d_dense_wgmma_tma_shape_unsupported(t, s)) throw std::invalid_argument(std::string("conv1d wgmma_tma: ") + why);
    conv1d_wgmma::check_launchable(workspace, "conv1d wgmma_tma");
    if (schedule == conv1d_wgmma_schedule::automatic) {
        int dev = 0;
        check_call(cudaGetDevice(&dev), "cudaGetDevice");
        schedule = conv1d_wgmma_schedule_for(s, cached_sm_count(dev));
    }
    if (t == elem::bf16) {
        if (s.stride == 1) conv1d_wgmma::launch_16<__nv_bfloat16, 1>(x, w, bias, y, workspace, s, stream, schedule);
        else conv1d_wgmma::launch_16<__nv_bfloat16, 2>(x, w, bias, y, workspace, s, stream, schedule);
    } else {
        if (s.stride == 1) conv1d_wgmma::launch_16<__half, 1>(x, w, bias, y, workspace, s, stream, schedule);
        else conv1d_wgmma::launch_16<__half, 2>(x, w, bias, y, workspace, s, stream, schedule);
    }
}

}  // namespace fusebench::kernels
