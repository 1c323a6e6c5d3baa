// Device-side load/convert helpers shared by kernels: fp32 math on fp32, fp16 and bf16 storage.
#pragma once

#include "kernels/common/elem.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace fusebench::kernels {

template <class T> __device__ __forceinline__ float to_f32(T v);
template <> __device__ __forceinline__ float to_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_f32<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <class T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// Host side: calls f with a value of the storage type `type` names (float, __half or
// __nv_bfloat16), for launchers templated on it: dispatch_elem(t, [&](auto v) { using T = decltype(v); ... }).
template <class F> void dispatch_elem(elem type, F&& f) {
    switch (type) {
        case elem::f32: f(float{}); break;
        case elem::f16: f(__half{}); break;
        case elem::bf16: f(__nv_bfloat16{}); break;
    }
}

}  // namespace fusebench::kernels
