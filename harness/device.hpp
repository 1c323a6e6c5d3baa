// Move-only RAII owners for device memory, streams and events. Move-only because each owns one
// CUDA handle that must be released exactly once; a copy would double-free it.
#pragma once

#include "harness/cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace fusebench {

class device_buffer {
public:
    device_buffer() = default;
    explicit device_buffer(std::size_t bytes);
    ~device_buffer();
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    device_buffer(device_buffer&& o) noexcept
        : m_ptr(std::exchange(o.m_ptr, nullptr)), m_bytes(std::exchange(o.m_bytes, 0)) {}
    device_buffer& operator=(device_buffer&& o) noexcept;

    void* get() const noexcept { return m_ptr; }
    std::byte* bytes_ptr() const noexcept { return static_cast<std::byte*>(m_ptr); }
    std::size_t size() const noexcept { return m_bytes; }  // [bytes]

private:
    void* m_ptr = nullptr;
    std::size_t m_bytes = 0;
};

class cuda_stream {
public:
    cuda_stream();  // non-blocking w.r.t. the legacy default stream
    ~cuda_stream();
    cuda_stream(const cuda_stream&) = delete;
    cuda_stream& operator=(const cuda_stream&) = delete;
    cuda_stream(cuda_stream&& o) noexcept : m_stream(std::exchange(o.m_stream, nullptr)) {}
    cuda_stream& operator=(cuda_stream&& o) noexcept;
    cudaStream_t get() const noexcept { return m_stream; }
    void synchronize() const;

private:
    cudaStream_t m_stream = nullptr;
};

class cuda_event {
public:
    cuda_event();
    ~cuda_event();
    cuda_event(const cuda_event&) = delete;
    cuda_event& operator=(const cuda_event&) = delete;
    cuda_event(cuda_event&& o) noexcept : m_event(std::exchange(o.m_event, nullptr)) {}
    cuda_event& operator=(cuda_event&& o) noexcept;
    cudaEvent_t get() const noexcept { return m_event; }
    void record(cudaStream_t s) const;
    // Milliseconds from `start` to this event; both must have completed.
    float elapsed_ms_since(const cuda_event& start) const;

private:
    cudaEvent_t m_event = nullptr;
};

// Number of CUDA devices; 0 (never throws) when there is no driver or no device.
int cuda_device_count() noexcept;

}  // namespace fusebench
