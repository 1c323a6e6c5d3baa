#include "harness/parallel.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fusebench {

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body,
                  std::size_t min_per_thread) {
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t threads = std::min(hw, std::max<std::size_t>(1, n / std::max<std::size_t>(1, min_per_thread)));
    if (threads <= 1) {
        if (n) body(0, n);
        return;
    }
    std::vector<std::thread> pool;
    std::exception_ptr error;
    std::mutex error_mutex;
    const std::size_t chunk = (n + threads - 1) / threads;
    for (std::size_t t = 0; t < threads; ++t) {
        const std::size_t b = t * chunk, e = std::min(n, b + chunk);
        if (b >= e) break;
        pool.emplace_back([&, b, e] {
            try {
                body(b, e);
            } catch (...) {
                std::lock_guard lock(error_mutex);
                if (!error) error = std::current_exception();
            }
        });
    }
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace fusebench
