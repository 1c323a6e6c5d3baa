#include "harness/device.hpp"

namespace fusebench {

device_buffer::device_buffer(std::size_t bytes) : m_bytes(bytes) {
    if (bytes) CUDA_CHECK(cudaMalloc(&m_ptr, bytes));
}

device_buffer::~device_buffer() {
    if (m_ptr) CUDA_CHECK_NOEXCEPT(cudaFree(m_ptr));
}

device_buffer& device_buffer::operator=(device_buffer&& o) noexcept {
    if (this != &o) {
        if (m_ptr) CUDA_CHECK_NOEXCEPT(cudaFree(m_ptr));
        m_ptr = std::exchange(o.m_ptr, nullptr);
        m_bytes = std::exchange(o.m_bytes, 0);
    }
    return *this;
}

cuda_stream::cuda_stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }

cuda_stream::~cuda_stream() {
    if (m_stream) CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(m_stream));
}

cuda_stream& cuda_stream::operator=(cuda_stream&& o) noexcept {
    if (this != &o) {
        if (m_stream) CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(m_stream));
        m_stream = std::exchange(o.m_stream, nullptr);
    }
    return *this;
}

void cuda_stream::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(m_stream)); }

cuda_event::cuda_event() { CUDA_CHECK(cudaEventCreate(&m_event)); }

cuda_event::~cuda_event() {
    if (m_event) CUDA_CHECK_NOEXCEPT(cudaEventDestroy(m_event));
}

cuda_event& cuda_event::operator=(cuda_event&& o) noexcept {
    if (this != &o) {
        if (m_event) CUDA_CHECK_NOEXCEPT(cudaEventDestroy(m_event));
        m_event = std::exchange(o.m_event, nullptr);
    }
    return *this;
}

void cuda_event::record(cudaStream_t s) const { CUDA_CHECK(cudaEventRecord(m_event, s)); }

float cuda_event::elapsed_ms_since(const cuda_event& start) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.m_event, m_event));
    return ms;
}

int cuda_device_count() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

}  // namespace fusebench
