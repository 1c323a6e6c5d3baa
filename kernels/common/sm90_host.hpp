// Host side of the Hopper (sm_90a) kernels (kernels/attention/hopper.cu, kernels/fp8/gemm_wgmma.cu,
// kernels/attention/hopper_fp8.cu): which code the loader picked, and TMA tensor maps.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <atomic>

namespace fusebench::kernels::sm90 {

// Whether the loader picked a translation unit's sm_90a code on a device. `kernel` is a kernel
// of that unit (each .cu file is a module of its own) that writes 1 where __CUDA_ARCH_FEAT_SM90_ALL
// is defined and 0 in the plain sm_90 code. One object per unit; the answer is a fact of the
// loaded module, cached per device ordinal (racing writers write the same value). Any CUDA error
// answers false and is cleared.
class sm90a_probe {
public:
    explicit sm90a_probe(const void* kernel) : m_kernel(kernel) {}

    bool runs(int dev) {
        if (dev < 0 || dev >= max_devices) return false;
        const int known = m_cache[dev].load();  // 0 not probed yet, 1 plain sm_90 code, 2 sm_90a code
        if (known != 0) return known == 2;
        int* d_flag = nullptr;
        int h_flag = 0;
        if (cudaMalloc(&d_flag, sizeof(int)) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        bool ok = cudaMemset(d_flag, 0, sizeof(int)) == cudaSuccess;
        if (ok) {
            void* args[] = {&d_flag};
            ok = cudaLaunchKernel(m_kernel, dim3(1), dim3(1), args, 0, nullptr) == cudaSuccess &&
                 cudaMemcpy(&h_flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
        }
        cudaFree(d_flag);
        if (!ok) {
            cudaGetLastError();
            return false;
        }
        m_cache[dev].store(h_flag == 1 ? 2 : 1);
        return h_flag == 1;
    }

    // nullptr where the current device has compute capability 9.0 and runs this unit's sm_90a
    // code, else why not.
    const char* current_device_unsupported() {
        int dev = 0, major = 0, minor = 0;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
            cudaGetLastError();
            return "no CUDA device";
        }
        if (major != 9 || minor != 0) return "sm_90a code: compute capability 9.0 (H100/H200) only";
        if (!runs(dev)) return "the loader did not pick this build's sm_90a code on this device";
        return nullptr;
    }

private:
    static constexpr int max_devices = 64;
    const void* m_kernel;
    std::atomic<int> m_cache[max_devices]{};
};

// The driver's cuTensorMapEncodeTiled through the runtime's entry-point query (no link against
// libcuda), looked up once per process; nullptr where the driver does not provide it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess) {
            cudaGetLastError();
            return PFN_cuTensorMapEncodeTiled_v12000{nullptr};
        }
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }();
    return encode;
}

// A tiled map (rank <= 5) as the Hopper kernels use them: 128-byte swizzle, 256-byte L2 promotion,
// no interleave, element strides 1; what lies past the ends reads as zero (loads) and is not
// written (stores). dims innermost first; strides [bytes] of dims 1 .. rank - 1. Call only where
// tensor_map_encoder() is not nullptr.
inline CUresult encode_tiled_swizzle128(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, const void* ptr,
                                        const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box) {
    const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
    return tensor_map_encoder()(map, type, rank, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace fusebench::kernels::sm90
