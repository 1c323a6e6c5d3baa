#include "harness/stream_gate.hpp"

#include "harness/cuda_check.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace fusebench {

struct stream_gate_state {
    std::mutex mutex;
    std::condition_variable cv;
    bool open = false;
    bool timed_out = false;  // the stream went on before open(): the launch call took over 250 ms
    std::chrono::microseconds hold_after_open{0};
};

namespace {
void CUDART_CB hold_stream(void* p) {
    auto* handle = static_cast<std::shared_ptr<stream_gate_state>*>(p);
    const std::shared_ptr<stream_gate_state> st = *handle;
    delete handle;
    {
        std::unique_lock lock(st->mutex);
        st->timed_out = !st->cv.wait_for(lock, std::chrono::milliseconds(250), [&] { return st->open; });
    }
    if (st->hold_after_open.count() > 0) std::this_thread::sleep_for(st->hold_after_open);
}
}  // namespace

stream_gate::stream_gate(cudaStream_t s, std::chrono::microseconds hold_after_open)
    : m_state(std::make_shared<stream_gate_state>()) {
    m_state->hold_after_open = hold_after_open;
    auto* handle = new std::shared_ptr<stream_gate_state>(m_state);
    const cudaError_t e = cudaLaunchHostFunc(s, hold_stream, handle);
    if (e != cudaSuccess) {
        delete handle;
        CUDA_CHECK(e);
    }
}

stream_gate::~stream_gate() { open(); }

void stream_gate::open() {
    {
        std::lock_guard lock(m_state->mutex);
        m_state->open = true;
    }
    m_state->cv.notify_all();
}

bool stream_gate::timed_out() const {
    std::lock_guard lock(m_state->mutex);
    return m_state->timed_out;
}

}  // namespace fusebench
