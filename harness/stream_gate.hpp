#pragma once
// A host-side gate on a CUDA stream: a host function enqueued on the stream blocks it until open()
// is called (then `hold_after_open` more), so everything enqueued behind the gate during a launch
// call is queued on the GPU before the first of it starts. At most 250 ms in all: a launcher that
// (wrongly) synchronizes the stream it was given costs that wait, never a deadlock; timed_out()
// tells afterwards. The state is shared with the host function, which may run after the gate
// object is gone.
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>

namespace fusebench {

struct stream_gate_state;

class stream_gate {
public:
    stream_gate(cudaStream_t s, std::chrono::microseconds hold_after_open);
    ~stream_gate();
    stream_gate(const stream_gate&) = delete;
    stream_gate& operator=(const stream_gate&) = delete;
    void open();
    // After the stream has passed the gate: whether it went on before open() (the 250 ms ran out).
    bool timed_out() const;

private:
    std::shared_ptr<stream_gate_state> m_state;
};

}  // namespace fusebench
