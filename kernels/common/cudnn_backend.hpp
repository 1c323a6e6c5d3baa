// What the cuDNN 9 backend (graph) API peers share (kernels/attention/cudnn_sdpa.cpp,
// kernels/conv1d/cudnn_conv.cpp): error text, an owning descriptor, attribute setting, the
// handle attributes, packed strides, the runtime version and one handle per device. Include only
// where FUSEBENCH_HAVE_CUDNN is set (cudnn.h is needed). Every thrown message starts with `who`
// ("cuDNN SDPA", "cuDNN conv"), so a skip reason names the peer it came from.
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace fusebench::kernels::cudnn_backend {

// cuDNN's status name plus, from 9.0, its explanation of the last failure.
inline std::string status_text(cudnnStatus_t st) {
    std::string s = cudnnGetErrorString(st);
    char detail[1024] = {0};
    cudnnGetLastErrorString(detail, sizeof detail);
    if (detail[0] != '\0') {
        s += " (";
        s += detail;
        s += ")";
    }
    return s;
}

inline void check(cudnnStatus_t st, const char* who, const std::string& step) {
    if (st != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(who) + ": " + step + ": " + status_text(st));
}

inline void check_cuda(cudaError_t e, const char* who, const char* step) {
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        throw std::runtime_error(std::string(who) + ": " + step + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
    }
}

// Owns one backend descriptor (move-only through unique_ptr; never copied: cuDNN owns the state).
class descriptor {
public:
    explicit descriptor(cudnnBackendDescriptorType_t type) {
        check(cudnnBackendCreateDescriptor(type, &d_), "cuDNN", "cudnnBackendCreateDescriptor(" + std::to_string(int(type)) + ")");
    }
    ~descriptor() {
        if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
    }
    descriptor(const descriptor&) = delete;
    descriptor& operator=(const descriptor&) = delete;
    cudnnBackendDescriptor_t get() const { return d_; }

private:
    cudnnBackendDescriptor_t d_ = nullptr;
};

inline void set_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                     int64_t count, const void* value, const char* who, const std::string& step, const char* what) {
    check(cudnnBackendSetAttribute(d, name, type, count, value), who, step + ": set " + what);
}

// The handle attributes are marked deprecated in cuDNN 9 headers but still the way to tie a graph
// and a plan to a device for every 9.x runtime (the device-property alternative needs 9.8).
constexpr auto attr_opgraph_handle = static_cast<cudnnBackendAttributeName_t>(800);  // CUDNN_ATTR_OPERATIONGRAPH_HANDLE
constexpr auto attr_plan_handle = static_cast<cudnnBackendAttributeName_t>(400);     // CUDNN_ATTR_EXECUTION_PLAN_HANDLE

using dims4 = std::array<int64_t, 4>;
inline dims4 packed_strides(const dims4& d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }

inline int runtime_version() { return static_cast<int>(cudnnGetVersion()); }
inline std::string version_string(long v) {
    return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

// One handle per device, created on first use and never destroyed (no destruction after the CUDA
// runtime's teardown). The caller serializes access.
class handle_cache {
public:
    cudnnHandle_t get(int device, const char* who) {
        auto it = m_handles.find(device);
        if (it != m_handles.end()) return it->second;
        cudnnHandle_t h = nullptr;
        check(cudnnCreate(&h), who, "cudnnCreate on device " + std::to_string(device));
        m_handles.emplace(device, h);
        return h;
    }

private:
    std::map<int, cudnnHandle_t> m_handles;
};

}  // namespace fusebench::kernels::cudnn_backend
