// Shared by GPU tests: skip cleanly on machines without a CUDA device.
#pragma once

#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/runner.hpp"

#include <catch2/catch_test_macros.hpp>

#define FUSEBENCH_REQUIRE_GPU()                                  \
    do {                                                         \
        if (::fusebench::cuda_device_count() == 0) SKIP("no CUDA device"); \
    } while (0)

// Declares `name`, a CUPTI activity tracer, or skips the test where activity tracing is unavailable
// (the stream-order check needs it).
#define FUSEBENCH_REQUIRE_TRACER(name)                                                   \
    std::string name##_unavailable;                                                      \
    auto name = ::fusebench::activity_tracer::create(name##_unavailable);                \
    if (!name) SKIP("CUPTI activity tracing unavailable (" + name##_unavailable + "): the stream-order check needs it")

namespace fusebench::test {

// Verifies, without timing and with a fixed seed, every untimed case of `suite_name` in `reg` on
// device 0 and returns the results (the timed shapes are what `fusebench run` covers); `variants`
// (empty: all) selects as `--variant` does.
inline std::vector<variant_result> verify_untimed_cases(const registry& reg, const std::string& suite_name,
                                                        const std::vector<std::string>& variants = {}) {
    const device_info dev = query_device(0);
    run_options o;
    o.seed = 2026;
    o.verify_only = true;
    runner run(dev, o);
    selection_filter f;
    f.suites = {suite_name};
    f.variants = variants;
    std::vector<variant_result> out;
    for (const auto& item : select_work(reg, f)) {
        if (item.c.timed) continue;
        for (auto& r : run.run_item(item)) out.push_back(std::move(r));
    }
    return out;
}

}  // namespace fusebench::test
