#pragma once
// The GPU's global nanosecond timer (%globaltimer), for diagnostic builds only: the kernels' timeline
// hooks (FUSEBENCH_*_TIMELINE, compiled out of the library) stamp phases with it.

namespace fusebench::kernels {

__device__ __forceinline__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

}  // namespace fusebench::kernels
