#include "harness/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fusebench {

namespace {
thread_local std::size_t t_parallelism = 0;
}  // namespace

void set_thread_parallelism(std::size_t threads) noexcept { t_parallelism = threads; }

std::size_t available_cpus() noexcept {
    static const std::size_t n = [] {
        std::size_t cpus = std::max(1u, std::thread::hardware_concurrency());
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
        // cgroup v2 "cpu.max": "QUOTA PERIOD" or "max PERIOD".
        std::ifstream f("/sys/fs/cgroup/cpu.max");
        std::string quota;
        double period = 0;
        if (f >> quota >> period && quota != "max" && period > 0) {
            try {
                const double q = std::stod(quota) / period;
                if (q >= 1) cpus = std::min(cpus, static_cast<std::size_t>(std::ceil(q)));
            } catch (...) {
            }
        }
        return cpus;
    }();
    return n;
}

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body,
                  std::size_t min_per_thread) {
    const std::size_t hw = t_parallelism ? t_parallelism : available_cpus();
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
