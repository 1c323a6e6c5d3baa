// The tensor-core GEMMs behind the ceilings (harness/ceilings.cpp) and the probes that study them
// (harness/probes/fp8_ceiling_clock.cu): n^3 on random (not zero) operands, fp32 accumulation.
// Owns its buffers, library handle and descriptors; released exactly once.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace fusebench {

enum class ceiling_gemm_kind {
    bf16,  // cublasGemmEx, bf16 in and out, NN
    fp16,  // cublasGemmEx, fp16 in and out, NN
    fp8,   // cublasLtMatmul, E4M3 x E4M3 -> bf16, TN (the form cuBLASLt's FP8 kernels take), unit
           // scales (the tensor cores' rate, not a scaling scheme's), the heuristic's first
           // algorithm, 32 MiB workspace
};

class ceiling_gemm {
public:
    // Allocates and fills the operands on `stream` (random values: tensor cores draw less power on
    // zeros and would look faster) and plans the GEMM. Throws std::runtime_error (a library call
    // failed, or cuBLASLt has no FP8 algorithm on this device) or cuda_error.
    ceiling_gemm(ceiling_gemm_kind kind, int n, cudaStream_t stream);
    ~ceiling_gemm();
    ceiling_gemm(const ceiling_gemm&) = delete;
    ceiling_gemm& operator=(const ceiling_gemm&) = delete;

    void run();  // one GEMM on the stream, asynchronous; throws for a failed library call
    double flops() const noexcept { return 2.0 * m_n * static_cast<double>(m_n) * m_n; }
    // What such a GEMM is, for a ceiling's `method` (also where it cannot run): "bf16 cublasGemmEx
    // 8192^3, fp32 accumulate, random inputs".
    static std::string describe(ceiling_gemm_kind kind, int n);

private:
    struct impl;
    ceiling_gemm_kind m_kind;
    int m_n;
    cudaStream_t m_stream;
    std::unique_ptr<impl> m_impl;
};

}  // namespace fusebench
