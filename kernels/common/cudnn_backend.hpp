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
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

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

inline bool runtime_is_9() { return runtime_version() / 10000 == 9; }
inline std::string runtime_describe() {
    const int v = runtime_version();
    std::string d = "cuDNN " + version_string(v) + " (runtime), built against " + version_string(CUDNN_VERSION);
    if (v / 10000 != 9) d += "; unavailable: this wrapper needs a cuDNN 9 runtime";
    return d;
}

// A peer's state: one plan per key (shape and device; Key has `device` and operator<), built on
// first use, a failed build cached too (Entry::reason set, the half-built descriptors dropped);
// interned reasons (never cleared: unsupported() hands out the pointers); one handle per device.
// Callers hold `mu`. Leak the object (no destruction after the CUDA runtime's teardown).
template <typename Key, typename Entry>
struct plan_cache {
    std::mutex mu;
    handle_cache handles;
    std::map<Key, std::unique_ptr<Entry>> plans;
    std::set<std::string> reasons;

    const char* intern(std::string r) { return reasons.insert(std::move(r)).first->c_str(); }

    // The cached entry for k; on a miss, quick() (nullptr or a reason that needs no plan), then
    // build(entry, handle), whose exception becomes the cached reason.
    template <typename Quick, typename Build>
    Entry& entry_for(const Key& k, const char* who, Quick&& quick, Build&& build) {
        auto it = plans.find(k);
        if (it != plans.end()) return *it->second;
        auto e = std::make_unique<Entry>();
        if (const char* r = quick()) {
            e->reason = r;
        } else {
            cudnnHandle_t h = handles.get(k.device, who);  // a failure to create one is not cached
            try {
                build(*e, h);
            } catch (const std::exception& ex) {
                e = std::make_unique<Entry>();
                e->reason = intern(ex.what());
            }
        }
        return *plans.emplace(k, std::move(e)).first->second;
    }
};

}  // namespace fusebench::kernels::cudnn_backend
