// The rmsnorm suite: its case list covers the axes; its generator is replayable; its
// tolerance admits fp32 arithmetic and rejects the kernels it must reject (CPU). On a GPU: every
// variant passes every small case, and a kernel that ignores gamma fails.
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/runner.hpp"
#include "kernels/rmsnorm/rmsnorm.hpp"
#include "suites/suite_util.hpp"
#include "suites/suites.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace fusebench;

namespace {

const suite& rmsnorm_suite(registry& reg) {
    register_rmsnorm(reg);
    const suite* s = reg.find("rmsnorm");
    REQUIRE(s != nullptr);
    return *s;
}

const case_desc& find_case(const std::vector<case_desc>& cases, const std::string& name, dtype t) {
    const auto it = std::find_if(cases.begin(), cases.end(), [&](const case_desc& c) { return c.name == name && c.type == t; });
    REQUIRE(it != cases.end());
    return *it;
}

std::vector<host_tensor> make_inputs(const suite& s, const case_desc& c, std::uint64_t seed) {
    std::vector<host_tensor> in;
    for (const auto& spec : s.input_specs(c)) in.emplace_back(spec);
    s.generate(c, rng(seed), in);
    return in;
}

std::vector<host_tensor> make_outputs(const suite& s, const case_desc& c) {
    std::vector<host_tensor> out;
    for (const auto& spec : s.output_specs(c)) out.emplace_back(spec);
    return out;
}

// What an fp32 kernel computes: fp32 add rounded to storage, sum of squares in fp32 over 256
// strided per-thread partials then a pairwise tree (the block kernels' order), fp32 scale and
// products, one rounding to storage. With_gamma = false models a kernel that ignores gamma.
void emulate_fp32_kernel(const case_desc& c, const std::vector<host_tensor>& in, std::vector<host_tensor>& out,
                         bool with_gamma) {
    const std::size_t tokens = static_cast<std::size_t>(c.dim("tokens")), hidden = static_cast<std::size_t>(c.dim("hidden"));
    const float eps = static_cast<float>(c.param("eps", 1e-6));
    for (std::size_t row = 0; row < tokens; ++row) {
        std::vector<float> r(hidden);
        for (std::size_t j = 0; j < hidden; ++j) {
            const std::size_t i = row * hidden + j;
            const float sum = static_cast<float>(in[0].get(i)) + static_cast<float>(in[1].get(i));
            out[1].set(i, sum);  // one rounding of the fp32 sum to storage
            r[j] = static_cast<float>(out[1].get(i));
        }
        std::vector<float> partial(256, 0.0f);
        for (std::size_t j = 0; j < hidden; ++j) partial[j % 256] = std::fma(r[j], r[j], partial[j % 256]);
        for (std::size_t width = 128; width >= 1; width /= 2) {
            for (std::size_t k = 0; k < width; ++k) partial[k] += partial[k + width];
        }
        const float scale = 1.0f / std::sqrt(partial[0] / static_cast<float>(hidden) + eps);
        for (std::size_t j = 0; j < hidden; ++j) {
            const float g = with_gamma ? static_cast<float>(in[2].get(j)) : 1.0f;
            out[0].set(row * hidden + j, r[j] * scale * g);
        }
    }
}

bool all_pass(const std::vector<output_check>& checks) {
    return std::all_of(checks.begin(), checks.end(), [](const output_check& c) { return c.pass; });
}

// Bit pattern + 1: the next representable value away from zero (the value must be finite, non-zero).
void bump_one_ulp(host_tensor& t, std::size_t i) {
    const std::size_t el = dtype_size(t.spec.type);
    std::byte* p = t.data.data() + i * el;
    if (el == 4) {
        std::uint32_t b;
        std::memcpy(&b, p, 4);
        ++b;
        std::memcpy(p, &b, 4);
    } else {
        std::uint16_t b;
        std::memcpy(&b, p, 2);
        ++b;
        std::memcpy(p, &b, 2);
    }
}

}  // namespace

TEST_CASE("rmsnorm suite covers the issue's axes", "[suites][rmsnorm]") {
    registry reg;
    const suite& s = rmsnorm_suite(reg);
    REQUIRE(s.baseline() != nullptr);
    CHECK(s.baseline()->name == "naive");
    std::set<std::string> names;
    for (const auto& v : s.variants) names.insert(v.name);
    CHECK(names == std::set<std::string>{"naive", "fused_block", "fused_vec", "fused_warp", "fused_vec4"});

    const auto cases = s.cases();
    std::set<std::string> keys;
    for (const auto& c : cases) CHECK(keys.insert(c.name + "/" + std::string(dtype_name(c.type))).second);
    for (dtype t : {dtype::f32, dtype::bf16, dtype::f16}) {
        auto has = [&](auto pred) {
            return std::any_of(cases.begin(), cases.end(), [&](const case_desc& c) { return c.type == t && pred(c); });
        };
        for (std::int64_t h : {768, 2048, 4096, 5120, 8192, 16384, 4097}) {
            CAPTURE(dtype_name(t), h);
            CHECK(has([&](const case_desc& c) {
                return c.timed && c.dim("tokens") == 4096 && c.dim("hidden") == h && c.input_kind == "random";
            }));
        }
        for (std::int64_t tokens : {1, 128, 4096}) {
            CHECK(has([&](const case_desc& c) { return c.timed && c.dim("tokens") == tokens; }));
        }
        CHECK(has([](const case_desc& c) { return c.timed && c.param("inplace", 0) != 0 && c.dim("tokens") == 4096; }));
        CHECK(has([](const case_desc& c) { return c.param("inplace", 0) != 0 && c.param("misalign", 0) != 0; }));
        CHECK(has([](const case_desc& c) { return c.quick; }));
        for (const char* kind : {"zero_rows", "tiny_rows", "constant_rows", "near_fp16_max", "huge_element"}) {
            CAPTURE(kind);
            CHECK(has([&](const case_desc& c) { return c.input_kind == kind; }));
        }
    }
    for (const auto& c : cases) {
        CAPTURE(c.name);
        if (c.input_kind != "random" || c.param("misalign", 0) != 0) CHECK_FALSE(c.timed);
        CHECK(c.param("eps", 0) == 1e-6);
    }
}

TEST_CASE("rmsnorm tensors: in-place outputs alias their inputs, misaligned cases move every pointer",
          "[suites][rmsnorm]") {
    registry reg;
    const suite& s = rmsnorm_suite(reg);
    const auto cases = s.cases();
    const auto& ip = find_case(cases, "7x4097:misaligned:inplace", dtype::bf16);
    const auto outs = s.output_specs(ip);
    REQUIRE(outs.size() == 2);
    CHECK(outs[0].name == "y");
    CHECK(outs[0].alias_of_input == 0);
    CHECK(outs[1].name == "residual_out");
    CHECK(outs[1].alias_of_input == 1);
    for (const auto& t : s.input_specs(ip)) CHECK(t.misalign_bytes == 2);
    for (const auto& t : outs) CHECK(t.misalign_bytes == 2);
    const auto& oop = find_case(cases, "4096x4096", dtype::f32);
    for (const auto& t : s.output_specs(oop)) CHECK(t.alias_of_input == -1);
    // Traffic: fused 4 passes + gamma, naive 5 passes + gamma.
    const double pass = 4096.0 * 4096 * 4, gamma = 4096.0 * 4;
    const auto fused = s.variants[1].model(oop);
    const auto naive = s.variants[0].model(oop);
    CHECK(fused.bytes_read == 2 * pass + gamma);
    CHECK(fused.bytes_written == 2 * pass);
    CHECK(naive.bytes_read == 3 * pass + gamma);
    CHECK(naive.bytes_written == 2 * pass);
}

TEST_CASE("rmsnorm inputs are replayable from the seed, gamma is not constant", "[suites][rmsnorm]") {
    registry reg;
    const suite& s = rmsnorm_suite(reg);
    const auto cases = s.cases();
    const auto& c = find_case(cases, "13x4097", dtype::bf16);
    const auto a = make_inputs(s, c, 42), b = make_inputs(s, c, 42), other = make_inputs(s, c, 43);
    for (std::size_t k = 0; k < a.size(); ++k) {
        CHECK(a[k].data == b[k].data);
        CHECK(a[k].data != other[k].data);
    }
    const auto g = a[2].to_double();
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    CHECK(*hi - *lo > 1.0);
    CHECK(std::count(g.begin(), g.end(), 1.0) < static_cast<std::ptrdiff_t>(g.size() / 10));
}

TEST_CASE("rmsnorm tolerance admits fp32 arithmetic and rejects wrong kernels", "[suites][rmsnorm]") {
    registry reg;
    const suite& s = rmsnorm_suite(reg);
    const auto cases = s.cases();
    const dtype t = GENERATE(dtype::f32, dtype::bf16, dtype::f16);
    const std::string name = GENERATE(as<std::string>{}, "13x4097", "16x4096:tiny_rows", "16x4096:near_fp16_max",
                                      "16x4096:huge_element", "16x4096:constant_rows", "16x4096:zero_rows");
    CAPTURE(dtype_name(t), name);
    const auto& c = find_case(cases, name, t);
    const auto in = make_inputs(s, c, 7);
    const auto ref = s.reference(c, in);
    REQUIRE(ref.size() == 2);

    auto out = make_outputs(s, c);
    emulate_fp32_kernel(c, in, out, true);
    CHECK(all_pass(s.custom_check(check_input{c, in, ref, out})));

    SECTION("a kernel that ignores gamma fails") {
        emulate_fp32_kernel(c, in, out, false);
        const auto checks = s.custom_check(check_input{c, in, ref, out});
        CHECK_FALSE(checks[0].pass);
        CHECK(checks[1].pass);
    }
    SECTION("residual_out one ulp off fails") {
        std::size_t i = 0;
        while (out[1].get(i) == 0.0) ++i;
        bump_one_ulp(out[1], i);
        const auto checks = s.custom_check(check_input{c, in, ref, out});
        CHECK(checks[0].pass);
        CHECK_FALSE(checks[1].pass);
    }
    SECTION("y zeroed where it is small fails") {
        // Zero the smallest non-zero |y|: the tolerance is relative, so no absolute slack hides it.
        std::size_t k = 0;
        double smallest = INFINITY;
        for (std::size_t i = 0; i < ref[0].size(); ++i) {
            const double v = std::fabs(ref[0][i]);
            if (v > 0 && v < smallest) {
                smallest = v;
                k = i;
            }
        }
        if (std::isfinite(smallest) && smallest > dtype_min_subnormal(t) * 2) {
            out[0].set(k, 0.0);
            CHECK_FALSE(s.custom_check(check_input{c, in, ref, out})[0].pass);
        }
    }
}

TEST_CASE("rmsnorm variants declare their domains", "[suites][rmsnorm]") {
    registry reg;
    const suite& s = rmsnorm_suite(reg);
    const auto cases = s.cases();
    const auto& warp = s.variants[3];
    REQUIRE(warp.name == "fused_warp");
    CHECK_FALSE(warp.req.supports(find_case(cases, "4096x768", dtype::bf16)).has_value());
    CHECK_FALSE(warp.req.supports(find_case(cases, "4096x2048", dtype::bf16)).has_value());
    CHECK(warp.req.supports(find_case(cases, "4096x2048", dtype::f32)).has_value());
    CHECK(warp.req.supports(find_case(cases, "4096x4096", dtype::bf16)).has_value());
    for (std::size_t k : {std::size_t{2}, std::size_t{4}}) {
        const auto& vec = s.variants[k];
        REQUIRE(vec.name.rfind("fused_vec", 0) == 0);
        for (const auto& c : cases) {
            CAPTURE(vec.name, c.name, dtype_name(c.type));
            CHECK_FALSE(vec.req.supports(c).has_value());  // every case of the suite is in v2's and v4's domain
        }
    }
}

TEST_CASE("every rmsnorm variant passes every small case", "[gpu][rmsnorm]") {
    if (cuda_device_count() == 0) SKIP("no CUDA device");
    registry reg;
    register_rmsnorm(reg);
    const device_info dev = query_device(0);
    run_options opts;
    opts.seed = 2024;
    opts.verify_only = true;
    runner run(dev, opts);
    selection_filter f;
    f.suites = {"rmsnorm"};
    std::size_t passed = 0, misaligned_vec = 0, in_place = 0;
    for (const auto& item : select_work(reg, f)) {
        if (item.c.dim("tokens") * item.c.dim("hidden") > (std::int64_t{1} << 20)) continue;  // big ones: `fusebench run`
        for (const auto& r : run.run_item(item)) {
            CAPTURE(r.c.name, std::string(dtype_name(r.c.type)), r.variant, r.reason);
            if (r.result == outcome::skipped) {
                CHECK(r.variant == "fused_warp");
                CHECK(r.reason.find("outside declared domain") != std::string::npos);
                continue;
            }
            CHECK(r.result == outcome::pass);
            REQUIRE(r.correctness.has_value());
            CHECK(r.correctness->deterministic == true);
            if (r.result != outcome::pass) continue;
            ++passed;
            if (r.variant == "fused_vec" && r.c.param("misalign", 0) != 0) ++misaligned_vec;
            if (r.c.param("inplace", 0) != 0) ++in_place;
        }
    }
    CHECK(passed >= 3 * 20 * 3);
    CHECK(misaligned_vec >= 3 * 3);
    CHECK(in_place >= 3 * 4 * 3);
}

TEST_CASE("a fused rmsnorm that ignores gamma fails on the GPU", "[gpu][rmsnorm]") {
    if (cuda_device_count() == 0) SKIP("no CUDA device");
    registry reg;
    register_rmsnorm(reg);
    suite s = *reg.find("rmsnorm");
    s.name = "rmsnorm_broken";
    variant broken = s.variants[2];  // fused_vec with gamma replaced by ones from the workspace
    broken.name = "ignores_gamma";
    broken.workspace_bytes = [](const case_desc& c) { return static_cast<std::size_t>(c.dim("hidden")) * dtype_size(c.type); };
    broken.launch = [](const launch_args& a) {
        const auto hidden = static_cast<std::size_t>(a.c.dim("hidden"));
        host_tensor ones(tensor_spec{"ones", a.c.type, {static_cast<std::int64_t>(hidden)}, 0, -1});
        for (std::size_t j = 0; j < hidden; ++j) ones.set(j, 1.0);
        CUDA_CHECK(cudaMemcpyAsync(a.workspace, ones.data.data(), ones.data.size(), cudaMemcpyHostToDevice, a.stream));
        CUDA_CHECK(cudaStreamSynchronize(a.stream));  // `ones` dies with this call
        kernels::launch_residual_rmsnorm_vec(to_kernel_elem(a.c.type), a.in[0], a.in[1], a.workspace, a.out[0],
                                             a.out[1], static_cast<std::size_t>(a.c.dim("tokens")), hidden, 1e-6f,
                                             a.stream);
    };
    s.variants = {s.variants[2], broken};
    reg.add(s);
    const device_info dev = query_device(0);
    run_options opts;
    opts.seed = 99;
    opts.verify_only = true;
    runner run(dev, opts);
    selection_filter f;
    f.suites = {"rmsnorm_broken"};
    f.cases = {"128x4096:inplace"};
    f.dtypes = {dtype::bf16};
    const auto items = select_work(reg, f);
    REQUIRE(items.size() == 1);
    const auto rs = run.run_item(items[0]);
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].result == outcome::pass);
    CHECK(rs[1].result == outcome::fail);
    CHECK(rs[1].reason.find("'y'") != std::string::npos);
}

// The timer's reading of an empty kernel rides on every timed result (CUPTI records and, without
// the tracer, events), below the timed variant's own median, and turns into the floor with launch.
TEST_CASE("timed results carry the timer's empty-kernel reading and the floor with launch", "[gpu][timing]") {
    if (cuda_device_count() == 0) SKIP("no CUDA device");
    registry reg;
    register_rmsnorm(reg);
    const device_info dev = query_device(0);
    std::string why;
    auto tracer = activity_tracer::create(why);
    for (const bool with_tracer : {true, false}) {
        if (with_tracer && !tracer) {
            WARN("CUPTI tracing unavailable, events only: " << why);
            continue;
        }
        CAPTURE(with_tracer);
        run_options opts;
        opts.seed = 7;
        opts.counters = false;
        opts.copy_gbps = 2000.0;  // any positive rate: the figure's arithmetic is checked below
        opts.policy.min_samples = 10;
        opts.policy.budget_s = 0.05;
        measurement_tools tools;
        if (with_tracer) tools.tracer = tracer.get();
        runner run(dev, opts, tools);
        selection_filter f;
        f.suites = {"rmsnorm"};
        std::size_t checked = 0;
        for (const auto& item : select_work(reg, f)) {
            if (item.c.dim("tokens") * item.c.dim("hidden") < (std::int64_t{1} << 22) || checked >= 2) continue;
            for (const auto& r : run.run_item(item)) {
                if (r.result != outcome::pass) continue;
                CAPTURE(r.c.name, r.variant);
                REQUIRE(r.timing.has_value());
                REQUIRE(r.timing->empty_kernel_stats.has_value());
                const double empty = r.timing->empty_kernel_stats->median;
                CHECK(empty > 0.0);
                CHECK(empty < r.timing->stats.median);  // a 4M-element rmsnorm moves >= 16 MB
                REQUIRE(r.pct_of_floor.has_value());
                REQUIRE(r.pct_of_floor_with_launch.has_value());
                const double floor_us = *r.pct_of_floor / 100.0 * r.timing->stats.median;
                CHECK(*r.pct_of_floor_with_launch == Catch::Approx(100.0 * (floor_us + empty) / r.timing->stats.median).epsilon(1e-9));
                ++checked;
            }
            if (checked >= 2) break;
        }
        CHECK(checked >= 2);
    }
}
