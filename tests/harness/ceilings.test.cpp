#include "harness/ceilings.hpp"
#include "harness/device.hpp"
#include "harness/sm_clock.hpp"
#include "tests/support/gpu.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

using namespace fusebench;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

// ---------------------------------------------------------------- CPU

TEST_CASE("theoretical DRAM bandwidth from the memory clock and bus width", "[ceilings]") {
    // H100 SXM5: HBM3 at 2619 MHz on a 5120-bit bus.
    CHECK_THAT(*theoretical_dram_gbps(2'619'000, 5120), WithinRel(3352.32, 1e-9));
    CHECK_FALSE(theoretical_dram_gbps(0, 5120).has_value());
    CHECK_FALSE(theoretical_dram_gbps(2'619'000, 0).has_value());
}

TEST_CASE("theoretical FP32 rate from SMs, lanes and clock", "[ceilings]") {
    CHECK(fp32_lanes_per_sm(9, 0) == 128);
    CHECK(fp32_lanes_per_sm(8, 0) == 64);
    CHECK(fp32_lanes_per_sm(8, 9) == 128);
    CHECK(fp32_lanes_per_sm(5, 2) == 0);  // unknown: never a guess
    // H100 SXM5: 132 SMs x 128 lanes x 2 x 1980 MHz.
    CHECK_THAT(*theoretical_fp32_tflops(132, 9, 0, 1980.0), WithinRel(66.90816, 1e-9));
    CHECK_FALSE(theoretical_fp32_tflops(132, 5, 2, 1980.0).has_value());
    CHECK_FALSE(theoretical_fp32_tflops(0, 9, 0, 1980.0).has_value());
    CHECK_FALSE(theoretical_fp32_tflops(132, 9, 0, 0.0).has_value());
}

TEST_CASE("theoretical dense tensor-core rates from SMs, rate per SM and clock", "[ceilings]") {
    CHECK(tensor_flops_per_clock_per_sm(9, 0, 16) == 4096);
    CHECK(tensor_flops_per_clock_per_sm(9, 0, 8) == 8192);
    CHECK(tensor_flops_per_clock_per_sm(8, 0, 16) == 2048);
    CHECK(tensor_flops_per_clock_per_sm(8, 0, 8) == 0);   // no fp8 tensor cores on A100
    CHECK(tensor_flops_per_clock_per_sm(8, 9, 16) == 0);  // not tabulated: never a guess
    // H100 SXM5's datasheet 989.4 TFLOP/s is 132 SMs x 4096 x 1830 MHz; at its 1980 MHz maximum:
    CHECK_THAT(*theoretical_tensor_tflops(132, 9, 0, 1830.0, 16), WithinRel(989.4, 1e-3));
    CHECK_THAT(*theoretical_tensor_tflops(132, 9, 0, 1980.0, 16), WithinRel(1070.5, 1e-3));
    CHECK_THAT(*theoretical_tensor_tflops(132, 9, 0, 1830.0, 8), WithinRel(1978.9, 1e-3));
    CHECK_FALSE(theoretical_tensor_tflops(132, 8, 9, 1980.0, 16).has_value());
    CHECK_FALSE(theoretical_tensor_tflops(132, 9, 0, 0.0, 16).has_value());
}

TEST_CASE("a ceiling is work over the median repetition time", "[ceilings]") {
    // 1 GB per repetition; an outlier must not move the median.
    const std::vector<double> ms{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 5.0, 0.5};
    const measured_ceiling c = ceiling_from_times(ms, 1e9, 1e-9, "GB/s", "test");
    REQUIRE(c.value.has_value());
    CHECK_THAT(*c.value, WithinRel(2000.0, 1e-12));
    CHECK(c.samples == 11);
    CHECK_THAT(c.median_ms, WithinRel(0.5, 1e-12));
    CHECK(c.noise > 0);
    CHECK(c.reason.empty());

    SECTION("no repetitions: null with a reason") {
        const measured_ceiling e = ceiling_from_times({}, 1e9, 1e-9, "GB/s", "test");
        CHECK_FALSE(e.value.has_value());
        CHECK_FALSE(e.reason.empty());
    }
    SECTION("a zero or negative time: null, never infinity") {
        const measured_ceiling z = ceiling_from_times({0.5, 0.0, 0.5}, 1e9, 1e-9, "GB/s", "test");
        CHECK_FALSE(z.value.has_value());
        CHECK_FALSE(z.reason.empty());
    }
}

TEST_CASE("bandwidth buffers stay far beyond L2 and within free memory", "[ceilings]") {
    constexpr std::size_t mib = std::size_t{1} << 20;
    constexpr std::size_t gib = std::size_t{1} << 30;
    CHECK(ceiling_buffer_bytes(50 * mib, 80 * gib, false) == 1024 * mib);
    CHECK(ceiling_buffer_bytes(50 * mib, 80 * gib, true) == 256 * mib);
    CHECK(ceiling_buffer_bytes(200 * mib, 80 * gib, false) == 1600 * mib);  // 8x L2
    CHECK(ceiling_buffer_bytes(50 * mib, 1 * gib, false) == 409 * mib);     // 40 % of free
    CHECK(ceiling_buffer_bytes(50 * mib, 300 * mib, false) == 0);           // cannot hold 4x L2
}

TEST_CASE("clock flagging: below 75 % of the maximum", "[ceilings]") {
    CHECK(clock_below(1000, 1980));
    CHECK_FALSE(clock_below(1500, 1980));
    CHECK_FALSE(clock_below(1000, 0));  // unknown maximum: no flag
    CHECK(clock_below(1500, 1980, 0.8));
}

TEST_CASE("unknown ceilings serialize as null with their reasons", "[ceilings]") {
    device_ceilings c;
    c.copy_gbps.unit = "GB/s";
    c.copy_gbps.reason = "no_device";
    c.bf16_tflops.value = 700.0;
    c.bf16_tflops.unit = "TFLOP/s";
    c.bf16_tflops.samples = 10;
    c.theoretical_reason = "no_device";
    const nlohmann::json j = to_json(c);
    CHECK(j["copy_gbps"]["value"].is_null());
    CHECK(j["copy_gbps"]["reason"] == "no_device");
    CHECK(j["copy_gbps"]["noise"].is_null());
    CHECK(j["read_gbps"]["value"].is_null());
    CHECK(j["read_gbps"]["reason"] == "unknown");
    CHECK(j["write_gbps"]["value"].is_null());
    CHECK(j["theoretical"]["tensor_16bit_tflops"].is_null());
    CHECK(j["theoretical"]["tensor_fp8_tflops"].is_null());
    CHECK(j["bf16_tflops"]["value"] == 700.0);
    CHECK(j["bf16_tflops"]["reason"].is_null());
    CHECK(j["theoretical"]["dram_gbps"].is_null());
    CHECK(j["theoretical"]["reason"] == "no_device");
    CHECK(j["max_sm_clock_mhz"].is_null());
}

TEST_CASE("without a device every ceiling is null with reason no_device", "[ceilings]") {
    if (cuda_device_count() != 0) SKIP("a CUDA device is present");
    const device_ceilings c = measure_ceilings(0, nullptr, true);
    for (const auto* m : {&c.copy_gbps, &c.read_gbps, &c.write_gbps, &c.copy_kernel_gbps, &c.bf16_tflops,
                          &c.fp16_tflops, &c.fp8_tflops, &c.fp32_tflops}) {
        CHECK_FALSE(m->value.has_value());
        CHECK(m->reason == "no_device");
        CHECK_FALSE(m->method.empty());
    }
    CHECK_FALSE(c.theoretical_dram_gbps.has_value());
    CHECK(c.theoretical_reason == "no_device");
}

TEST_CASE("the run's ceiling lines: rates, the clock after the GEMMs, a warning when it throttled", "[ceilings]") {
    auto ceiling = [](double v, std::optional<double> mhz) {
        nlohmann::json c = {{"value", v}, {"reason", nullptr}, {"sm_clock_mhz_after", nullptr}};
        if (mhz) c["sm_clock_mhz_after"] = *mhz;
        return c;
    };
    nlohmann::json j = {{"copy_gbps", ceiling(3008.6, 1996.0)},
                        {"read_gbps", ceiling(3142.8, 1990.0)},
                        {"write_gbps", {{"value", nullptr}, {"reason", "no_device"}}},
                        {"bf16_tflops", ceiling(785.0, 1992.8)},
                        {"fp16_tflops", ceiling(751.6, 1976.1)},
                        {"fp8_tflops", ceiling(1389.3, 1996.0)},
                        {"fp32_tflops", ceiling(65.7, 1996.0)},
                        {"max_sm_clock_mhz", 1980.0}};
    auto lines = describe_ceilings(j);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "measured copy bandwidth 3009 GB/s (read stream 3143, write stream not measured (no_device) GB/s)");
    CHECK(lines[1] == "measured tensor-core GEMMs bf16 785 / fp16 752 / fp8 1389 TFLOP/s (SM clock after them 1993 / 1976 / 1996 MHz), "
                      "FMA 66 TFLOP/s");
    // A throttled GEMM ceiling (the back-to-back FP8 reading of 1269 TFLOP/s at 1407 MHz) is called out.
    j["fp8_tflops"] = ceiling(1269.3, 1407.3);
    lines = describe_ceilings(j);
    REQUIRE(lines.size() == 3);
    CHECK_THAT(lines[2], ContainsSubstring("fp8 ceiling's GEMMs read 1407 MHz, below 85% of the maximum 1980 MHz"));
    // Without the maximum clock nothing is judged; without a block nothing is printed.
    j.erase("max_sm_clock_mhz");
    CHECK(describe_ceilings(j).size() == 2);
    CHECK(describe_ceilings(nlohmann::json(nullptr)).empty());
}

TEST_CASE("an idle-gap burst schedule needs bursts and 1 <= keep <= launches", "[ceilings]") {
    int calls = 0;
    const auto op = [&] { ++calls; };
    CHECK_THROWS_AS(time_idle_bursts(op, {0, 5, 3, 0}, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(time_idle_bursts(op, {2, 5, 6, 0}, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(time_idle_bursts(op, {2, 5, 0, 0}, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(time_idle_bursts(op, {2, 0, 0, 0}, nullptr), std::invalid_argument);
    CHECK(calls == 0);  // rejected before anything ran
}

// ---------------------------------------------------------------- GPU

TEST_CASE("idle-gap bursts time each burst's last launches and read the clock after each", "[gpu][ceilings]") {
    FUSEBENCH_REQUIRE_GPU();
    cuda_stream s;
    int launches = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const burst_times b = time_idle_bursts(
        [&] {
            detail::launch_empty_kernel(s.get());
            ++launches;
        },
        {4, 3, 2, 50}, s.get());
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(launches == 12);
    REQUIRE(b.ms.size() == 4);
    REQUIRE(b.sm_clock_mhz.size() == 4);
    for (double t : b.ms) {
        CHECK(t > 0.0);
        CHECK(t < 50.0);  // an empty kernel between two events
    }
    for (double mhz : b.sm_clock_mhz) CHECK(mhz > 100.0);
    CHECK(wall_ms >= 4 * 50.0);  // the gaps were idle time on the host
}

TEST_CASE("the SM clock reads plausibly", "[gpu][ceilings]") {
    FUSEBENCH_REQUIRE_GPU();
    cuda_stream s;
    const max_sm_clock mx = query_max_sm_clock(0);
    REQUIRE(mx.mhz.has_value());
    const double mhz = measure_sm_clock_mhz(s.get());
    INFO("measured " << mhz << " MHz, max " << *mx.mhz << " MHz (" << mx.source << ")");
    CHECK(mhz > 100.0);
    CHECK(mhz < *mx.mhz * 1.05);
}

TEST_CASE("measured ceilings are plausible and below the theoretical peaks", "[gpu][ceilings]") {
    FUSEBENCH_REQUIRE_GPU();
    cuda_stream s;
    const device_ceilings c = measure_ceilings(0, s.get(), true);
    INFO(to_json(c).dump(2));
    for (const auto* m : {&c.copy_gbps, &c.read_gbps, &c.write_gbps, &c.copy_kernel_gbps, &c.bf16_tflops,
                          &c.fp16_tflops, &c.fp8_tflops, &c.fp32_tflops}) {
        REQUIRE(m->value.has_value());
        CHECK(m->samples >= 10);
        CHECK(m->noise < 0.10);
    }
    REQUIRE(c.theoretical_dram_gbps.has_value());
    REQUIRE(c.theoretical_fp32_tflops.has_value());
    const double dram = *c.theoretical_dram_gbps, fp32 = *c.theoretical_fp32_tflops;
    CHECK(*c.copy_gbps.value > 0.3 * dram);
    CHECK(*c.copy_gbps.value < 1.02 * dram);
    CHECK(*c.read_gbps.value > 0.3 * dram);
    CHECK(*c.read_gbps.value < 1.02 * dram);
    CHECK(*c.copy_kernel_gbps.value < 1.02 * dram);
    CHECK(*c.write_gbps.value > 0.3 * dram);
    CHECK(*c.write_gbps.value < 1.02 * dram);
    // The guard's rates: both read kernels and both write methods were timed (the method names
    // each with its figure), and the measured tensor rate stays under the peak at the max clock.
    CHECK_THAT(c.read_gbps.method, ContainsSubstring("grid-stride") && ContainsSubstring("block-contiguous"));
    CHECK_THAT(c.write_gbps.method, ContainsSubstring("cudaMemsetAsync") && ContainsSubstring("store kernel"));
    // The tensor-core GEMMs run in bursts after idle gaps so that they are timed at the clock the
    // judged kernels run at, not the power-limited one of a long back-to-back run: the clock read
    // after the bursts stays near the maximum (the H100s and H200s read 1938-2000 MHz of 1980).
    const max_sm_clock mx = query_max_sm_clock(0);
    for (const auto* m : {&c.bf16_tflops, &c.fp16_tflops, &c.fp8_tflops}) {
        CHECK_THAT(m->method, ContainsSubstring("bursts of 5 launches"));
        CHECK(m->samples == burst_schedule{}.bursts);
        REQUIRE(m->sm_clock_mhz.has_value());
        if (mx.mhz) CHECK(*m->sm_clock_mhz > 0.85 * *mx.mhz);
    }
    if (c.theoretical_tensor_16bit_tflops) {
        CHECK(*c.bf16_tflops.value < 1.02 * *c.theoretical_tensor_16bit_tflops);
        CHECK(*c.fp16_tflops.value < 1.02 * *c.theoretical_tensor_16bit_tflops);
    }
    CHECK(*c.fp32_tflops.value > 0.5 * fp32);
    CHECK(*c.fp32_tflops.value < 1.02 * fp32);
    // Tensor cores: well above the FP32 rate on any GPU that has them.
    CHECK(*c.bf16_tflops.value > 4 * *c.fp32_tflops.value);
    CHECK(*c.fp16_tflops.value > 4 * *c.fp32_tflops.value);
    // FP8 tensor cores: faster than bf16 (twice the peak on Hopper), under their own peak.
    CHECK(*c.fp8_tflops.value > 1.2 * *c.bf16_tflops.value);
    if (c.theoretical_tensor_fp8_tflops) CHECK(*c.fp8_tflops.value < 1.02 * *c.theoretical_tensor_fp8_tflops);
}
