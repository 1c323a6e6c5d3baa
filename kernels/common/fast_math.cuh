#pragma once
// The MUFU approximations by name, for the short activation forms of 16-bit outputs: ex2.approx
// (2^v, about 2 ulps) and rcp.approx (1/v, about 1 ulp), both .ftz: denormal inputs and results are
// zero, which each caller's comment weighs against its output's rounding.

namespace fusebench::kernels {

__device__ __forceinline__ float ex2_ftz(float v) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

__device__ __forceinline__ float rcp_ftz(float v) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

}  // namespace fusebench::kernels
