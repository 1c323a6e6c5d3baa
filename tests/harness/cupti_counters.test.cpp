#include "harness/cupti_counters.hpp"
#include "harness/ceilings.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "tests/support/gpu.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace fusebench;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

void require_all_null(const counter_result& r) {
    REQUIRE(r.values.size() == r.metrics.size());
    for (const auto& m : r.metrics) {
        CAPTURE(m);
        REQUIRE(r.values.count(m) == 1);
        CHECK_FALSE(r.values.at(m).has_value());
        CHECK_FALSE(r.metric_reasons.at(m).empty());
    }
}

constexpr int supported = 3;  // CUPTI_PROFILER_CONFIGURATION_SUPPORTED
constexpr int disabled = 2;
constexpr int unsupported = 1;

}  // namespace

// ---------------------------------------------------------------- CPU: degradation paths

TEST_CASE("each simulated CUPTI failure degrades to null values with a reason",
          "[cupti][counters]") {
    struct row {
        const char* call;
        int result;
        const char* status;
        const char* reason;
    };
    const auto r = GENERATE(
        row{"cuptiProfilerInitialize", 39, "unavailable", "cupti_multiple_subscribers"},
        row{"cuptiProfilerGetCounterAvailability", 35, "unavailable", "insufficient_privileges"},
        row{"cuptiRangeProfilerEnable", 35, "unavailable", "insufficient_privileges"},
        row{"cuptiRangeProfilerStart", 40, "unavailable", "insufficient_privileges"},
        row{"cuptiRangeProfilerEnable", 26, "unavailable", "counters_busy"},
        row{"cuptiProfilerDeviceSupported", 43, "unavailable", "unsupported_device"},
        row{"cuptiProfilerInitialize", 15, "unavailable", "cupti_not_initialized"},
        row{"cuptiRangeProfilerSetConfig", 1, "error", "cupti_error:CUPTI_ERROR_INVALID_PARAMETER"},
        row{"cuptiRangeProfilerDecodeData", 999, "error", "cupti_error:CUPTI_ERROR_UNKNOWN"});
    CAPTURE(r.call, r.result);
    const counter_result c = counter_failure(r.call, r.result, memory_metric_set());
    CHECK(c.status == r.status);
    CHECK(c.reason == r.reason);
    CHECK(c.cupti_result == r.result);
    CHECK(c.cupti_call == r.call);
    CHECK_THAT(c.detail, ContainsSubstring(r.call));
    CHECK_THAT(c.detail, ContainsSubstring(cupti_result_name(r.result)));
    CHECK(c.metrics == memory_metric_set());
    require_all_null(c);
    CHECK(c.ranges == 0);

    const nlohmann::json j = to_json(c);
    CHECK(j["status"] == r.status);
    CHECK(j["reason"] == r.reason);
    CHECK(j["cupti_result"] == r.result);
    CHECK(j["cupti_error"] == cupti_result_name(r.result));
    for (const auto& m : memory_metric_set()) {
        CAPTURE(m);
        CHECK(j["metrics"][m]["value"].is_null());
        CHECK(j["metrics"][m]["reason"] == r.reason);
    }
}

TEST_CASE("insufficient privileges come with the admin-only hint", "[cupti][counters]") {
    const counter_result c =
        counter_failure("cuptiProfilerGetCounterAvailability", 35, {"dram__bytes_read.sum"});
    CHECK_THAT(c.detail, ContainsSubstring("NVreg_RestrictProfilingToAdminUsers"));
}

TEST_CASE("unsupported device configurations are named", "[cupti][counters]") {
    device_support ok{supported, supported, supported, supported, supported, supported, supported};
    CHECK_FALSE(unsupported_config(ok).has_value());

    device_support vgpu = ok;
    vgpu.is_supported = unsupported;
    vgpu.vgpu = disabled;
    CHECK(unsupported_config(vgpu) == std::optional<std::string>("vgpu_disabled"));

    device_support cc = ok;
    cc.is_supported = unsupported;
    cc.confidential_compute = unsupported;
    cc.wsl = unsupported;
    CHECK(unsupported_config(cc) == std::optional<std::string>("confidential_compute,wsl"));

    device_support opaque = ok;
    opaque.is_supported = unsupported;
    CHECK(unsupported_config(opaque) == std::optional<std::string>("unknown"));
}

TEST_CASE("counters_unavailable keeps the request and nulls every value", "[cupti][counters]") {
    const counter_result c = counters_unavailable(compute_metric_set(), "no_device", "no GPU");
    CHECK(c.status == "unavailable");
    CHECK(c.metrics == compute_metric_set());
    require_all_null(c);
    const nlohmann::json j = to_json(c);
    CHECK(j["cupti_result"].is_null());
    CHECK(j["per_range"].empty());
    CHECK(j["metrics"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"]["value"].is_null());
}

TEST_CASE("metrics combine over kernels by their rollup", "[cupti][counters]") {
    CHECK(combine_rule("dram__bytes_read.sum") == range_combine::sum);
    CHECK(combine_rule("sm__cycles_active.max") == range_combine::max);
    CHECK(combine_rule("sm__cycles_active.min") == range_combine::min);
    CHECK(combine_rule("sm__throughput.avg.pct_of_peak_sustained_elapsed") ==
          range_combine::time_weighted_mean);
    CHECK(combine_rule("dram__bytes_read.sum.per_second") == range_combine::time_weighted_mean);

    const std::string t = "gpu__time_duration.sum", b = "dram__bytes_read.sum",
                      p = "sm__throughput.avg.pct_of_peak_sustained_elapsed", mx = "x__y.max";
    const std::vector<std::map<std::string, double>> ranges{
        {{t, 1000.0}, {b, 100.0}, {p, 90.0}, {mx, 3.0}},
        {{t, 3000.0}, {b, 300.0}, {p, 10.0}, {mx, 7.0}},
    };
    const auto v = combine_ranges({b, t, p, mx, "missing.sum"}, ranges);
    CHECK_THAT(*v.at(b), WithinRel(400.0, 1e-12));
    CHECK_THAT(*v.at(t), WithinRel(4000.0, 1e-12));
    CHECK_THAT(*v.at(p), WithinRel((90.0 * 1000 + 10.0 * 3000) / 4000, 1e-12));  // 30 %, not 50 %
    CHECK_THAT(*v.at(mx), WithinRel(7.0, 1e-12));
    CHECK_FALSE(v.at("missing.sum").has_value());

    SECTION("a NaN in any kernel makes the value unknown, not 0") {
        auto bad = ranges;
        bad[1][b] = std::numeric_limits<double>::quiet_NaN();
        CHECK_FALSE(combine_ranges({b}, bad).at(b).has_value());
    }
    SECTION("no ranges: unknown") {
        CHECK_FALSE(combine_ranges({b}, {}).at(b).has_value());
    }
}

TEST_CASE("the memory metric set fits one pass on GH100 (host API, no GPU needed)",
          "[cupti][counters]") {
    const metric_plan plan = plan_metrics("GH100", memory_metric_set());
    REQUIRE(plan.cupti_result == 0);
    CHECK(plan.supported == memory_metric_set());
    CHECK(plan.rejected.empty());
    CHECK(plan.passes == 1);
    CHECK(plan.units.at("dram__bytes_read.sum") == "byte");
    CHECK(plan.units.at("dram__bytes_write.sum") == "byte");
    CHECK(plan.units.at("gpu__time_duration.sum") == "nanosecond");
}

TEST_CASE("the compute set is valid on GH100 and costs more passes", "[cupti][counters]") {
    const metric_plan plan = plan_metrics("GH100", compute_metric_set());
    REQUIRE(plan.cupti_result == 0);
    CHECK(plan.supported == compute_metric_set());
    CHECK(plan.passes > 1);
}

TEST_CASE("an unknown metric is rejected by name, the others are kept", "[cupti][counters]") {
    const metric_plan plan = plan_metrics(
        "GH100", {"dram__bytes_read.sum", "no_such__metric.sum", "dram__bytes_write.sum"});
    REQUIRE(plan.cupti_result == 0);
    CHECK(plan.supported ==
          std::vector<std::string>{"dram__bytes_read.sum", "dram__bytes_write.sum"});
    CHECK(plan.rejected.at("no_such__metric.sum") == "unsupported_metric");
    CHECK(plan.passes == 1);
}

TEST_CASE("an unknown chip fails planning with a CUPTI result", "[cupti][counters]") {
    const metric_plan plan = plan_metrics("NOT_A_CHIP", memory_metric_set());
    CHECK(plan.cupti_result != 0);
    CHECK(plan.cupti_call == "cuptiProfilerHostInitialize");
}

TEST_CASE("without a device the profiler is unavailable with reason no_device",
          "[cupti][counters]") {
    if (cuda_device_count() != 0) SKIP("a CUDA device is present");
    counter_result failure;
    auto p = counter_profiler::create(0, memory_metric_set(), failure);
    CHECK(p == nullptr);
    CHECK(failure.status == "unavailable");
    CHECK(failure.reason == "no_device");
    require_all_null(failure);
}

// ---------------------------------------------------------------- GPU

namespace {

int sm_count() {
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
    return v;
}

std::unique_ptr<counter_profiler> profiler_or_skip(const std::vector<std::string>& metrics) {
    counter_result failure;
    auto p = counter_profiler::create(0, metrics, failure);
    if (!p) {
        // Environmental (privileges, another tool): skip. A fault in our sequence: fail.
        REQUIRE(failure.status == "unavailable");
        SKIP("counters unavailable: " + failure.reason + " (" + failure.detail + ")");
    }
    return p;
}

}  // namespace

TEST_CASE("DRAM counters on a copy kernel match the bytes moved within 2 %",
          "[gpu][cupti][counters]") {
    FUSEBENCH_REQUIRE_GPU();
    auto prof = profiler_or_skip(memory_metric_set());
    // Lines the kernel leaves dirty in L2 at its end are written back after its range (as in
    // Nsight Compute): up to one L2 (50-60 MB) of writes. 2 GiB keeps that under 1.5 % of the
    // bytes moved, so the 2 % check tests the counters, not the cache.
    const std::size_t bytes = std::size_t{2} << 30;
    std::size_t l2 = 0;
    {
        int v = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, 0));
        l2 = static_cast<std::size_t>(v);
    }
    device_buffer src(bytes), dst(bytes), sink(sizeof(unsigned));
    CUDA_CHECK(cudaMemset(src.get(), 7, bytes));
    CUDA_CHECK(cudaMemset(dst.get(), 0, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
    cuda_stream s;
    const int sms = sm_count();
    const double b = static_cast<double>(bytes);

    const counter_result copy = prof->measure(
        [&](cudaStream_t st) { detail::launch_stream_copy(src.get(), dst.get(), bytes, st); },
        s.get());
    INFO(to_json(copy).dump());
    REQUIRE(copy.status == "ok");
    CHECK(copy.reason.empty());
    CHECK(copy.l2_cleaned);
    CHECK(copy.ranges == 1);
    CHECK(copy.passes == 1);
    const double rd = copy.values.at("dram__bytes_read.sum").value();
    const double wr = copy.values.at("dram__bytes_write.sum").value();
    CHECK_THAT(rd, WithinRel(b, 0.02));
    CHECK_THAT(rd + wr, WithinRel(2 * b, 0.02));
    CHECK(wr <= b * 1.01);                            // nothing inherited from earlier work
    CHECK(wr >= b - static_cast<double>(l2) * 1.01);  // at most one L2 still dirty at the end
    CHECK(copy.values.at("lts__t_bytes.sum").value() >= 2 * b * 0.98);
    CHECK(copy.values.at("gpu__time_duration.sum").value() > 0);
    CHECK(copy.units.at("gpu__time_duration.sum") == "nanosecond");

    SECTION("a second measurement with the same profiler: read-only kernel") {
        const counter_result rd_only = prof->measure(
            [&](cudaStream_t st) {
                detail::launch_stream_read(src.get(), bytes, static_cast<unsigned*>(sink.get()),
                                           sms, st);
            },
            s.get());
        INFO(to_json(rd_only).dump());
        REQUIRE(rd_only.status == "ok");
        CHECK_THAT(rd_only.values.at("dram__bytes_read.sum").value(), WithinRel(b, 0.02));
        CHECK(rd_only.values.at("dram__bytes_write.sum").value() < 0.02 * static_cast<double>(l2));
    }
    SECTION("without cleaning, lines dirtied by earlier work are charged to the kernel") {
        // Dirty the whole L2 with a memset of twice its size, then count a read-only kernel.
        device_buffer dirt(2 * l2);
        CUDA_CHECK(cudaMemsetAsync(dirt.get(), 1, dirt.size(), s.get()));
        CUDA_CHECK(cudaStreamSynchronize(s.get()));
        prof->set_clean_l2(false);
        const counter_result dirty = prof->measure(
            [&](cudaStream_t st) {
                detail::launch_stream_read(src.get(), bytes, static_cast<unsigned*>(sink.get()),
                                           sms, st);
            },
            s.get());
        INFO(to_json(dirty).dump());
        REQUIRE(dirty.status == "ok");
        CHECK_FALSE(dirty.l2_cleaned);
        // The L2 writes some dirty lines back on its own; on H200 ~40 % of it stays dirty.
        CHECK(dirty.values.at("dram__bytes_write.sum").value() > 0.1 * static_cast<double>(l2));

        CUDA_CHECK(cudaMemsetAsync(dirt.get(), 2, dirt.size(), s.get()));
        CUDA_CHECK(cudaStreamSynchronize(s.get()));
        prof->set_clean_l2(true);
        const counter_result clean = prof->measure(
            [&](cudaStream_t st) {
                detail::launch_stream_read(src.get(), bytes, static_cast<unsigned*>(sink.get()),
                                           sms, st);
            },
            s.get());
        REQUIRE(clean.status == "ok");
        CHECK(clean.values.at("dram__bytes_write.sum").value() < 0.02 * static_cast<double>(l2));
    }
    SECTION("two kernels in one invocation: one range each, values summed") {
        const counter_result two = prof->measure(
            [&](cudaStream_t st) {
                detail::launch_stream_copy(src.get(), dst.get(), bytes, st);
                detail::launch_stream_read(dst.get(), bytes, static_cast<unsigned*>(sink.get()),
                                           sms, st);
            },
            s.get());
        INFO(to_json(two).dump());
        REQUIRE(two.status == "ok");
        CHECK(two.ranges == 2);
        REQUIRE(two.range_values.size() == 2);
        const double r0 = two.range_values[0].at("dram__bytes_read.sum");
        const double r1 = two.range_values[1].at("dram__bytes_read.sum");
        CHECK_THAT(two.values.at("dram__bytes_read.sum").value(), WithinRel(r0 + r1, 1e-12));
        CHECK_THAT(r0 + r1, WithinRel(2 * b, 0.02));
        CHECK_THAT(two.values.at("dram__bytes_write.sum").value(), WithinRel(b, 0.02));
    }
}

TEST_CASE("an unknown metric gives null with a reason while the others are measured",
          "[gpu][cupti][counters]") {
    FUSEBENCH_REQUIRE_GPU();
    auto prof = profiler_or_skip({"dram__bytes_read.sum", "no_such__metric.sum"});
    const std::size_t bytes = std::size_t{64} << 20;
    device_buffer src(bytes), sink(sizeof(unsigned));
    CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
    cuda_stream s;
    const int sms = sm_count();
    const counter_result r = prof->measure(
        [&](cudaStream_t st) {
            detail::launch_stream_read(src.get(), bytes, static_cast<unsigned*>(sink.get()), sms,
                                       st);
        },
        s.get());
    REQUIRE(r.status == "ok");
    CHECK(r.reason == "unsupported_metric:no_such__metric.sum");
    CHECK(r.values.at("dram__bytes_read.sum").has_value());
    CHECK_FALSE(r.values.at("no_such__metric.sum").has_value());
    CHECK(to_json(r)["metrics"]["no_such__metric.sum"]["reason"] == "unsupported_metric");
}

TEST_CASE("counters and the activity tracer coexist: pause, count, resume, time",
          "[gpu][cupti][counters]") {
    FUSEBENCH_REQUIRE_GPU();
    std::string why;
    auto tracer = activity_tracer::create(why);
    if (!tracer) SKIP("CUPTI tracing unavailable: " + why);
    auto prof = profiler_or_skip(memory_metric_set());
    const std::size_t bytes = std::size_t{128} << 20;
    device_buffer src(bytes), dst(bytes);
    CUDA_CHECK(cudaMemset(src.get(), 3, bytes));
    cuda_stream s;
    auto launch = [&](cudaStream_t st) {
        detail::launch_stream_copy(src.get(), dst.get(), bytes, st);
    };

    tracer->begin();
    launch(s.get());
    const traced_sample before = tracer->end();
    REQUIRE(before.kernels.size() == 1);

    tracer->pause();
    const counter_result c = prof->measure(launch, s.get());
    tracer->resume();
    REQUIRE(c.status == "ok");
    CHECK_THAT(c.values.at("dram__bytes_read.sum").value(),
               WithinRel(static_cast<double>(bytes), 0.02));

    tracer->begin();
    launch(s.get());
    const traced_sample after = tracer->end();
    REQUIRE(after.kernels.size() == 1);
    CHECK(after.untimed_records == 0);
    CHECK_THAT(after.sum_us, WithinRel(before.sum_us, 0.10));
}
