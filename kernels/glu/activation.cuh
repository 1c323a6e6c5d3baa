#pragma once
// The GLU activations as every GLU kernel evaluates them in fp32 (host-callable too: the tests'
// emulation and the probes use this one definition).

#include "kernels/common/gelu.cuh"
#include "kernels/glu/glu.hpp"

#include <cmath>

namespace fusebench::kernels {

// Stable forms: 1 + tanh(u) = 2 / (1 + exp(-2u)) and 1 + erf(z) = erfc(-z) avoid the catastrophic
// cancellation of the textbook forms for negative inputs. gelu_erf: erfcf for fp32 storage, the
// short form of kernels/common/gelu.cuh for 16-bit storage (T, the stored type).
template <glu_act A, class T> __host__ __device__ __forceinline__ float glu_activate(float x) {
    if constexpr (A == glu_act::silu) {
        return x / (1.0f + expf(-x));
    } else if constexpr (A == glu_act::gelu_tanh) {
        const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return x / (1.0f + expf(-2.0f * u));
    } else {
        return gelu_erf<T>(x);
    }
}

}  // namespace fusebench::kernels
