#pragma once
// GELU with the exact (erf) form, 0.5 x erfc(-x / sqrt 2): CUDA's erfcf (a few ulps), and a short
// evaluation for results stored in 16 bits.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/common/fast_math.cuh"

#include <cmath>

#include <type_traits>

namespace fusebench::kernels {

// erfc(-z) = 1 + erf(z) without the cancellation of the textbook form for negative x.
__host__ __device__ __forceinline__ float gelu_erf_exact(float x) { return 0.5f * x * erfcf(-x * 0.70710678118654752f); }

// For 16-bit outputs. With a = |x| / sqrt 2 and t = 1 / (1 + p a), p = 0.5:
//   0.5 erfc(a) = exp(-a^2) t P(t),  P of degree 6 fitted (weighted least squares, Lawson
//   iterations) to the relative error of 0.5 erfcx(a) / t over a in [0, 10] (t from 1/6 to 1): 1.4e-6
//   (kernels/glu/probes/gelu_fit.py prints these coefficients and the emulation below);
// Phi(x) = 0.5 erfc(a) for x < 0 and 1 - 0.5 erfc(a) otherwise; gelu = x Phi(x). exp(-a^2) is
// ex2.approx of -(|x| k)^2, k^2 = log2(e) / 2, whose two roundings cost |a^2| 2^-23 ln 2 relative.
// Relative error of gelu: emulated in fp32 with rcp.approx and ex2.approx perturbed by 1 and 2 ulps
// over 14,000 inputs in [-14, 6], at most 1.11e-5 (the far tail, x = -12.5, gelu 1e-35, where the
// exponent's roundings dominate) and 2.42e-6 for |x| <= 5; on the host (exact reciprocal and exp2, a
// 2^-10 grid of [-14, 8], tests/suites/glu_suite.test.cpp) 1.21e-5 and 2.3e-6. bf16 and fp16 outputs
// round at 2^-9 and 2^-12; fp32 outputs keep gelu_erf_exact. Two MUFU operations and ~15 FMA-pipe
// instructions against erfcf's ~55 (the GeGLU kernel at 16 bits was bound by erfcf's instructions:
// 1.39x on an H200, 1.05x on an H100; kernels/glu/NOTES.md).
// Specials as the exact form: gelu(-inf) = -inf * 0 = NaN, gelu(+inf) = +inf, NaN propagates.
// ex2.approx.ftz flushes exp(-a^2) below 2^-126 (x < -13.3), where the exact gelu is an fp32
// subnormal (|gelu| < 1.2e-38): those results are -0 here, not the subnormal.
// On the host (tests' emulation) the reciprocal and exp2 are the correctly rounded ones.
__host__ __device__ __forceinline__ float gelu_erf_16(float x) {
    const float ax = fabsf(x);
    const float d = fmaf(ax, 0.3535533845424652f, 1.0f);
    float t, e;
#ifdef __CUDA_ARCH__
    t = rcp_ftz(d);
#else
    t = 1.0f / d;
#endif
    float q = 0.04411127790808678f;
    q = fmaf(q, t, -0.17839863896369934f);
    q = fmaf(q, t, 0.194649800658226f);
    q = fmaf(q, t, 0.018921593204140663f);
    q = fmaf(q, t, 0.14075970649719238f);
    q = fmaf(q, t, 0.1387898027896881f);
    q = fmaf(q, t, 0.14116577804088593f);
    const float u = ax * 0.8493217825889587f;
#ifdef __CUDA_ARCH__
    e = ex2_ftz(-u * u);
#else
    e = std::exp2(-u * u);
#endif
    const float h = (q * t) * e;
    return x * (x < 0.0f ? h : 1.0f - h);
}

// The form a kernel storing T uses.
template <class T> __host__ __device__ __forceinline__ float gelu_erf(float x) {
    if constexpr (std::is_same_v<T, float>) {
        return gelu_erf_exact(x);
    } else {
        static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "16-bit storage only");
        return gelu_erf_16(x);
    }
}

}  // namespace fusebench::kernels
