// The softmax_topk suite: its case list covers the axes; its check passes the reference's
// own answer and tie swaps and fails wrong, duplicate, out-of-range and poisoned outputs (CPU);
// launchers reject K > V. On a GPU: every variant passes every small case inside its declared
// domain, the seed designs fail outside it on the adversarial inputs, and the fused kernel breaks
// ties by lower index exactly.
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/dtype.hpp"
#include "harness/runner.hpp"
#include "kernels/softmax_topk/softmax_topk.hpp"
#include "suites/suites.hpp"
#include "support/gpu.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace fusebench;

namespace {

const suite& find_suite(registry& reg, const std::string& name) {
    if (reg.suites().empty()) register_softmax_topk(reg);
    const suite* s = reg.find(name);
    REQUIRE(s != nullptr);
    return *s;
}

case_desc small_case(dtype t, std::int64_t rows, std::int64_t V, std::int64_t K, std::string kind) {
    case_desc c;
    c.name = "test";
    c.type = t;
    c.dims = {{"rows", rows}, {"V", V}, {"K", K}};
    c.params = {{"std", 3.0}};
    c.input_kind = std::move(kind);
    c.timed = false;
    return c;
}

struct checked_case {
    std::vector<host_tensor> inputs;
    std::vector<std::vector<double>> reference;
    std::vector<host_tensor> outputs;  // initialised to the reference's answer
};

checked_case prepare(const suite& s, const case_desc& c, std::uint64_t seed) {
    checked_case cc;
    for (const auto& spec : s.input_specs(c)) cc.inputs.emplace_back(spec);
    s.generate(c, rng(seed), cc.inputs);
    cc.reference = s.reference(c, cc.inputs);
    for (const auto& spec : s.output_specs(c)) cc.outputs.emplace_back(spec);
    for (std::size_t i = 0; i < cc.reference[0].size(); ++i) {
        cc.outputs[0].set(i, cc.reference[0][i]);
        cc.outputs[1].set(i, cc.reference[1][i]);
    }
    return cc;
}

std::vector<output_check> run_check(const suite& s, const case_desc& c, const checked_case& cc) {
    return s.custom_check(check_input{c, cc.inputs, cc.reference, cc.outputs});
}

bool all_pass(const std::vector<output_check>& checks) {
    return std::all_of(checks.begin(), checks.end(), [](const output_check& o) { return o.pass; });
}

std::int32_t index_at(const host_tensor& t, std::size_t i) {
    std::int32_t v;
    std::memcpy(&v, t.data.data() + i * sizeof(v), sizeof(v));
    return v;
}

void set_index(host_tensor& t, std::size_t i, std::int32_t v) { std::memcpy(t.data.data() + i * sizeof(v), &v, sizeof(v)); }

}  // namespace

TEST_CASE("softmax_topk cases cover every V x K for rows = 4096 in fp32 and bf16, fp16, quick and adversarial", "[softmax_topk]") {
    registry reg;
    const suite& s = find_suite(reg, "softmax_topk");
    const auto cases = s.cases();
    std::set<std::string> names;
    std::size_t quick = 0;
    for (const auto& c : cases) {
        CHECK(names.insert(c.name + "/" + std::string(dtype_name(c.type))).second);
        CHECK(c.dim("K") <= c.dim("V"));
        CHECK(c.dim("K") >= 1);
        quick += c.quick ? 1 : 0;
        if (c.input_kind != "random") CHECK_FALSE(c.timed);
    }
    CHECK(quick > 0);
    CHECK(quick < cases.size() / 4);
    const auto has = [&](dtype t, std::int64_t rows, std::int64_t V, std::int64_t K, const std::string& kind) {
        return std::any_of(cases.begin(), cases.end(), [&](const case_desc& c) {
            return c.type == t && c.dim("rows") == rows && c.dim("V") == V && c.dim("K") == K && c.input_kind == kind;
        });
    };
    for (dtype t : {dtype::f32, dtype::bf16})
        for (std::int64_t V : {32000, 50257, 128256, 151936})
            for (std::int64_t K : {1, 10, 50, 256}) CHECK(has(t, 4096, V, K, "random"));
    CHECK(has(dtype::f16, 4096, 50257, 10, "random"));
    for (const char* kind : {"all_equal", "ties", "cluster256", "cluster32", "ascending", "descending", "huge", "masked",
                             "all_masked", "nan", "posinf", "misaligned", "stride_trap"})
        CHECK(has(dtype::f32, 6, 32000, 50, kind));
    CHECK(has(dtype::f32, 3, 1, 1, "random"));  // V = 1
    CHECK(has(dtype::f32, 1, 50257, 1024, "random"));
    CHECK(std::any_of(cases.begin(), cases.end(), [](const case_desc& c) { return c.dim("rows") == 1 && c.timed; }));
    CHECK(std::any_of(cases.begin(), cases.end(), [](const case_desc& c) { return c.dim("rows") == 64 && c.timed; }));
}

TEST_CASE("softmax_topk generation is deterministic and follows the input kind", "[softmax_topk]") {
    registry reg;
    const suite& s = find_suite(reg, "softmax_topk");
    const case_desc c = small_case(dtype::bf16, 4, 1000, 10, "nan");
    const auto a = prepare(s, c, 99), b = prepare(s, c, 99);
    CHECK(a.inputs[0].data == b.inputs[0].data);
    std::size_t nan_rows = 0;
    for (std::size_t r = 0; r < 4; ++r) {
        bool any_nan = false;
        for (std::size_t j = 0; j < 1000; ++j) any_nan |= std::isnan(a.inputs[0].get(r * 1000 + j));
        nan_rows += any_nan;
        CHECK(any_nan == (r % 2 == 0));
    }
    CHECK(nan_rows == 2);
    const auto cl = prepare(s, small_case(dtype::f32, 2, 4096, 16, "cluster256"), 5);
    for (std::size_t q = 0; q < 32; ++q) CHECK(static_cast<std::int64_t>(cl.reference[1][q]) % 256 == 3);
    // plateau: 1.0 with a 3.0 at every (V / 40)-th element from 7; the top 41 are those peaks, by index
    const auto pl = prepare(s, small_case(dtype::bf16, 2, 50256, 41, "plateau"), 5);
    for (std::size_t q = 0; q < 82; ++q) {
        CAPTURE(q);
        CHECK(static_cast<std::int64_t>(pl.reference[1][q]) == 7 + 1256 * static_cast<std::int64_t>(q % 41));
        CHECK(pl.reference[0][q] == pl.reference[0][0]);
    }
    CHECK(pl.inputs[0].get(1) == 1.0);
}

TEST_CASE("softmax_topk check: the drift of a plain fp32 lane sum on a plateau row fails, the compensated sum's passes",
          "[softmax_topk]") {
    // Session l: fused_stream and fused_bound, each lane adding its ~1570 terms of a bf16 plateau row of 50256
    // straight into its fp32 sum, gave every probability 1.1e-5 above its fp64 value (an H100; the CPU emulation
    // reports/examples/bound-1127l/sum_drift.py gives 1.05e-5), beyond the suite's bound; with each vector's terms
    // summed first and a Kahan add, 6e-8. The check must tell the two apart.
    registry reg;
    const suite& s = find_suite(reg, "softmax_topk");
    const case_desc c = small_case(dtype::bf16, 2, 50256, 10, "plateau");
    auto cc = prepare(s, c, 3);
    const auto scale_probs = [&](double f) {
        for (std::size_t q = 0; q < 20; ++q) cc.outputs[0].set(q, cc.reference[0][q] * f);
    };
    scale_probs(1.0 + 6e-8);
    CHECK(all_pass(run_check(s, c, cc)));
    scale_probs(1.0 + 1.1e-5);
    CHECK_FALSE(all_pass(run_check(s, c, cc)));
}

TEST_CASE("softmax_topk check passes the reference's answer and tie swaps", "[softmax_topk]") {
    registry reg;
    const suite& s = find_suite(reg, "softmax_topk");
    const std::string kind = GENERATE("random", "ties", "all_equal", "masked", "huge", "nan", "posinf", "all_masked");
    const case_desc c = small_case(dtype::f32, 4, 500, 20, kind);
    auto cc = prepare(s, c, 7);
    CAPTURE(kind);
    CHECK(all_pass(run_check(s, c, cc)));
    if (kind == "all_equal") {  // every value ties: any distinct indices pass
        for (std::size_t q = 0; q < 20; ++q) set_index(cc.outputs[1], q, static_cast<std::int32_t>(499 - q));
        CHECK(all_pass(run_check(s, c, cc)));
    }
    if (kind == "nan") {  // no finite softmax in row 0: any distinct in-range indices pass
        for (std::size_t q = 0; q < 20; ++q) set_index(cc.outputs[1], q, static_cast<std::int32_t>(100 + q));
        CHECK(all_pass(run_check(s, c, cc)));
    }
}

TEST_CASE("softmax_topk check fails wrong, duplicate, out-of-range and poisoned outputs", "[softmax_topk]") {
    registry reg;
    const suite& s = find_suite(reg, "softmax_topk");
    const case_desc c = small_case(dtype::f32, 3, 777, 10, "random");
    const auto good = prepare(s, c, 11);
    REQUIRE(all_pass(run_check(s, c, good)));
    const auto fails = [&](auto mutate, std::size_t which) {
        auto cc = good;
        mutate(cc);
        const auto checks = run_check(s, c, cc);
        REQUIRE(checks.size() == 2);
        return !checks[which].pass;
    };
    // An index outside the top K (the row's smallest logit).
    CHECK(fails([&](checked_case& cc) {
        std::size_t worst = 0;
        for (std::size_t j = 1; j < 777; ++j)
            if (cc.inputs[0].get(j) < cc.inputs[0].get(worst)) worst = j;
        set_index(cc.outputs[1], 5, static_cast<std::int32_t>(worst));
    }, 1));
    CHECK(fails([](checked_case& cc) { set_index(cc.outputs[1], 3, index_at(cc.outputs[1], 2)); }, 1));  // duplicate
    CHECK(fails([](checked_case& cc) { set_index(cc.outputs[1], 0, -1); }, 1));                           // poison 1
    CHECK(fails([](checked_case& cc) { set_index(cc.outputs[1], 9, 0x7B7B7B7B); }, 1));                   // poison 2
    CHECK(fails([](checked_case& cc) { set_index(cc.outputs[1], 4, 777); }, 1));                          // == V
    CHECK(fails([](checked_case& cc) { cc.outputs[0].set(7, std::numeric_limits<double>::quiet_NaN()); }, 0));
    CHECK(fails([](checked_case& cc) { cc.outputs[0].set(1, 1.3e36); }, 0));
    CHECK(fails([](checked_case& cc) { cc.outputs[0].set(2, cc.reference[0][2] * (1 + 3e-5)); }, 0));
    CHECK_FALSE(fails([](checked_case& cc) { cc.outputs[0].set(2, cc.reference[0][2] * (1 + 2e-6)); }, 0));
    // Swapping two distinct values breaks both positions.
    CHECK(fails([](checked_case& cc) {
        const auto a = index_at(cc.outputs[1], 0), b = index_at(cc.outputs[1], 1);
        set_index(cc.outputs[1], 0, b);
        set_index(cc.outputs[1], 1, a);
    }, 1));
    // A row without a finite softmax must carry NaN probabilities.
    const case_desc cn = small_case(dtype::f32, 2, 300, 5, "posinf");
    auto nan_rows = prepare(s, cn, 3);
    REQUIRE(all_pass(run_check(s, cn, nan_rows)));
    nan_rows.outputs[0].set(0, 0.25);
    CHECK_FALSE(run_check(s, cn, nan_rows)[0].pass);
}

TEST_CASE("softmax_topk seed variants declare their domains", "[softmax_topk]") {
    registry reg;
    const suite& s = find_suite(reg, "softmax_topk");
    const auto variant_named = [&](const std::string& n) {
        const auto it = std::find_if(s.variants.begin(), s.variants.end(), [&](const variant& v) { return v.name == n; });
        REQUIRE(it != s.variants.end());
        return *it;
    };
    const variant sb = variant_named("seed_block"), sv = variant_named("seed_block_vec"), sw = variant_named("seed_warp");
    const variant fused = variant_named("fused_v2");
    const auto reason = [](const variant& v, const case_desc& c) { return v.req.supports(c).value_or(""); };
    CHECK(reason(sb, small_case(dtype::f32, 6, 32000, 50, "cluster256")).find("16") != std::string::npos);
    CHECK_FALSE(sb.req.supports(small_case(dtype::f32, 6, 32000, 16, "cluster256")).has_value());
    CHECK(reason(sb, small_case(dtype::f32, 6, 32000, 10, "nan")).find("finite softmax") != std::string::npos);
    CHECK(reason(sb, small_case(dtype::bf16, 6, 32000, 10, "random")).find("float32") != std::string::npos);
    CHECK(reason(sv, small_case(dtype::f32, 4, 50257, 10, "random")).find("V % 4") != std::string::npos);
    CHECK(reason(sw, small_case(dtype::f32, 6, 32000, 10, "masked")).find("-inf") != std::string::npos);
    CHECK_FALSE(sw.req.supports(small_case(dtype::f32, 6, 32000, 10, "nan")).has_value());
    for (const char* kind : {"nan", "masked", "cluster256", "ascending"})
        CHECK_FALSE(fused.req.supports(small_case(dtype::bf16, 6, 32000, 256, kind)).has_value());
    CHECK(fused.req.supports(small_case(dtype::f32, 1, 2000, 1025, "random")).has_value());
    const suite& o = find_suite(reg, "softmax_topk_outside_domain");
    CHECK_FALSE(o.default_run);
    CHECK_FALSE(o.cases().empty());
}

TEST_CASE("softmax_topk launchers reject K > V, K < 1 and K above their caps", "[softmax_topk]") {
    namespace k = kernels;
    {  // fused_bound: 16-bit rows, V <= 65536, K <= 32 (before any device call)
        k::softmax_topk_args b;
        b.rows = 1;
        b.V = 100;
        b.K = 10;
        b.type = k::elem::f32;
        CHECK_THROWS_AS(k::launch_softmax_topk_fused_bound(b, nullptr), std::invalid_argument);
        b.type = k::elem::bf16;
        b.V = k::softmax_topk_bound_max_v + 1;
        CHECK_THROWS_AS(k::launch_softmax_topk_fused_bound(b, nullptr), std::invalid_argument);
        b.V = 100;
        b.K = k::softmax_topk_bound_max_k + 1;
        CHECK_THROWS_AS(k::launch_softmax_topk_fused_bound(b, nullptr), std::invalid_argument);
    }
    k::softmax_topk_args a;
    a.rows = 1;
    a.V = 5;
    a.K = 6;
    CHECK_THROWS_AS(k::launch_softmax_topk_fused(a, k::fused_version::v2, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k::launch_softmax_topk_naive(a, nullptr, 0, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k::launch_softmax_topk_seed_block(a, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k::launch_softmax_topk_seed_warp(a, nullptr), std::invalid_argument);
    a.K = 0;
    CHECK_THROWS_AS(k::launch_softmax_topk_fused(a, k::fused_version::v1, nullptr), std::invalid_argument);
    a.V = 5000;
    a.K = 33;
    CHECK_THROWS_AS(k::launch_softmax_topk_seed_warp(a, nullptr), std::invalid_argument);
    a.K = 1025;
    CHECK_THROWS_AS(k::launch_softmax_topk_fused(a, k::fused_version::v1, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k::launch_softmax_topk_fused_radix(a, nullptr), std::invalid_argument);
    a.K = 0;
    CHECK_THROWS_AS(k::launch_softmax_topk_fused_radix(a, nullptr), std::invalid_argument);
    a.V = 5;
    a.K = 6;
    CHECK_THROWS_AS(k::launch_softmax_topk_fused_radix(a, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(k::launch_softmax_topk_fused_smem(a, nullptr), std::invalid_argument);
    a.V = 5000;
    a.K = 1025;
    CHECK_THROWS_AS(k::launch_softmax_topk_fused_smem(a, nullptr), std::invalid_argument);
    a.K = 10;
    a.V = k::softmax_topk_smem_max_row_bytes / 4 + 1;  // fp32: more than 16 chunks
    CHECK_THROWS_AS(k::launch_softmax_topk_fused_smem(a, nullptr), std::invalid_argument);
}

namespace {

// Runs an fp32 softmax_topk launcher on x [rows, V] and requires the exact answer: the K largest
// by value descending, ties (and -inf entries) by lower index, probabilities within 1e-5 relative
// of the fp64 softmax.
// bf16: the logits are rounded to bf16 first (the reference takes the rounded values).
// The launch's top K of x (rounded to dt first; the reference is taken on the rounded values) against a stable
// sort in double: every index exact, every probability within 1e-5 relative.
void expect_exact_topk_as(void (*launch)(const kernels::softmax_topk_args&, cudaStream_t), std::vector<float> x,
                          std::int64_t rows, std::int64_t V, std::int64_t K, kernels::elem dt) {
    const bool half = dt != kernels::elem::f32;
    device_buffer d_x(x.size() * (half ? 2 : sizeof(float)));
    if (half) {
        std::vector<std::uint16_t> b(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            b[i] = dt == kernels::elem::bf16 ? float_to_bf16_bits(x[i]) : float_to_half_bits(x[i]);
            x[i] = dt == kernels::elem::bf16 ? bf16_bits_to_float(b[i]) : half_bits_to_float(b[i]);
        }
        CUDA_CHECK(cudaMemcpy(d_x.get(), b.data(), b.size() * 2, cudaMemcpyHostToDevice));
    } else {
        CUDA_CHECK(cudaMemcpy(d_x.get(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    device_buffer d_p(static_cast<std::size_t>(rows * K) * 4), d_i(static_cast<std::size_t>(rows * K) * 4);
    kernels::softmax_topk_args a{dt, d_x.get(), static_cast<float*>(d_p.get()), static_cast<std::int32_t*>(d_i.get()),
                                 rows, V, K};
    launch(a, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> p(static_cast<std::size_t>(rows * K));
    std::vector<std::int32_t> idx(static_cast<std::size_t>(rows * K));
    CUDA_CHECK(cudaMemcpy(p.data(), d_p.get(), p.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(idx.data(), d_i.get(), idx.size() * 4, cudaMemcpyDeviceToHost));
    for (std::int64_t r = 0; r < rows; ++r) {
        std::vector<std::int32_t> order(static_cast<std::size_t>(V));
        std::iota(order.begin(), order.end(), 0);
        const float* row = x.data() + r * V;
        std::stable_sort(order.begin(), order.end(), [&](std::int32_t u, std::int32_t v) { return row[u] > row[v]; });
        double m = -std::numeric_limits<double>::infinity(), s = 0.0;
        for (std::int64_t j = 0; j < V; ++j) m = std::max(m, static_cast<double>(row[j]));
        for (std::int64_t j = 0; j < V; ++j) s += std::exp(static_cast<double>(row[j]) - m);
        for (std::int64_t q = 0; q < K; ++q) {
            CAPTURE(K, r, q);
            const auto at = static_cast<std::size_t>(r * K + q);
            REQUIRE(idx[at] == order[static_cast<std::size_t>(q)]);
            const double want = std::exp(static_cast<double>(row[order[static_cast<std::size_t>(q)]]) - m) / s;
            // A positive probability below the smallest normal float has no relative accuracy in a float
            // output (the kernels flush denormals): it must come out below that bound too. A probability
            // of exactly 0 in double keeps the relative check (the output must be 0).
            if (want > 0.0 && want < static_cast<double>(std::numeric_limits<float>::min()))
                CHECK(p[at] <= std::numeric_limits<float>::min());
            else
                CHECK(std::abs(p[at] - want) <= 1e-5 * want);
        }
    }
}

void expect_exact_topk(void (*launch)(const kernels::softmax_topk_args&, cudaStream_t), std::vector<float> x,
                       std::int64_t rows, std::int64_t V, std::int64_t K, bool bf16 = false) {
    expect_exact_topk_as(launch, std::move(x), rows, V, K, bf16 ? kernels::elem::bf16 : kernels::elem::f32);
}

run_options verify_only_options() {
    run_options o;
    o.seed = 4242;
    o.verify_only = true;
    return o;
}

}  // namespace

TEST_CASE("every softmax_topk variant passes every small case inside its declared domain", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    registry reg;
    register_softmax_topk(reg);
    const device_info dev = query_device(0);
    runner run(dev, verify_only_options());
    selection_filter f;
    f.suites = {"softmax_topk"};
    std::size_t passed = 0, skipped = 0;
    for (const auto& item : select_work(reg, f)) {
        if (item.c.timed) continue;  // the big shapes run in `fusebench run`
        for (const auto& r : run.run_item(item)) {
            CAPTURE(r.c.name, std::string(dtype_name(r.c.type)), r.variant, r.reason);
            CHECK((r.result == outcome::pass || (r.result == outcome::skipped && !r.reason.empty())));
            if (r.result == outcome::pass) {
                REQUIRE(r.correctness.has_value());
                CHECK(r.correctness->deterministic == true);
            }
            passed += r.result == outcome::pass;
            skipped += r.result == outcome::skipped;
        }
    }
    CHECK(passed > 300);
    CHECK(skipped > 0);
}

TEST_CASE("the seed designs fail outside their declared domains", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    registry reg;
    register_softmax_topk(reg);
    const device_info dev = query_device(0);
    runner run(dev, verify_only_options());
    const auto outcome_of = [&](const std::string& case_name, const std::string& variant) {
        selection_filter f;
        f.suites = {"softmax_topk_outside_domain"};
        f.cases = {case_name};
        f.variants = {variant};
        f.dtypes = {dtype::f32};
        const auto items = select_work(reg, f);
        REQUIRE(items.size() == 1);
        const auto rs = run.run_item(items[0]);
        REQUIRE(rs.size() == 1);
        return rs[0];
    };
    // A top-K on one thread's stride overflows the per-thread list of 16.
    const auto a = outcome_of("6x32000:K50:cluster256", "seed_block");
    CHECK(a.result == outcome::fail);
    CHECK(a.reason.find("indices") != std::string::npos);
    CHECK(outcome_of("6x32000:K256:cluster256", "seed_block_vec").result == outcome::fail);
    // Rows without a finite softmax leave the lists empty: index -1.
    const auto b = outcome_of("6x32000:K10:nan", "seed_block");
    CHECK(b.result == outcome::fail);
    CHECK(b.reason.find("out of range") != std::string::npos);
    // -inf entries poison the per-element rescale of the warp design.
    CHECK(outcome_of("6x32000:K10:masked", "seed_warp").result == outcome::fail);
    // Inside the domain the same designs pass.
    CHECK(outcome_of("6x32000:K10:cluster256", "seed_block").result == outcome::pass);
    CHECK(outcome_of("6x32000:K10:cluster32", "seed_warp").result == outcome::pass);
}

TEST_CASE("fused softmax_topk orders ties by lower index exactly", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    namespace k = kernels;
    const std::int64_t rows = 3, V = 20000;
    std::vector<float> x(static_cast<std::size_t>(rows * V), 0.25f);
    for (std::int64_t j = 0; j < V; j += 3) x[static_cast<std::size_t>(V + j)] = 1.0f;  // row 1: ties on every 3rd column
    device_buffer d_x(x.size() * sizeof(float));
    CUDA_CHECK(cudaMemcpy(d_x.get(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    const std::int64_t K = GENERATE(1, 7, 100, 1024);
    device_buffer d_p(static_cast<std::size_t>(rows * K) * 4), d_i(static_cast<std::size_t>(rows * K) * 4);
    // Block per row (v1-v3) and fused_stream (3), which reads rows with K > 32 in stratified order:
    // equal values there arrive out of index order, and row 2's sample holds only ties.
    // fused_radix (4): row 0 is all equal (ties at the exact K-th key taken in index order), row 1's
    // ties fill the candidate buffer only for K = 1024.
    // fused_smem (5): the same tie paths from shared memory.
    for (int version = 0; version < 6; ++version) {
        k::softmax_topk_args a{k::elem::f32, d_x.get(), static_cast<float*>(d_p.get()),
                               static_cast<std::int32_t*>(d_i.get()), rows, V, K};
        if (version < 3) {
            const k::fused_version versions[] = {k::fused_version::v1, k::fused_version::v2, k::fused_version::v3};
            k::launch_softmax_topk_fused(a, versions[version], nullptr);
        } else if (version == 3) {
            k::launch_softmax_topk_fused_stream(a, nullptr);
        } else if (version == 4) {
            k::launch_softmax_topk_fused_radix(a, nullptr);
        } else {
            k::launch_softmax_topk_fused_smem(a, nullptr);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<std::int32_t> idx(static_cast<std::size_t>(rows * K));
        CUDA_CHECK(cudaMemcpy(idx.data(), d_i.get(), idx.size() * 4, cudaMemcpyDeviceToHost));
        for (std::int64_t q = 0; q < K; ++q) {
            CAPTURE(K, q, version);
            CHECK(idx[static_cast<std::size_t>(q)] == q);
            CHECK(idx[static_cast<std::size_t>(K + q)] == 3 * q);
            CHECK(idx[static_cast<std::size_t>(2 * K + q)] == q);
        }
    }
}

TEST_CASE("fused_stream with fewer finite entries than K > 256 keeps them all, sorted, then the -inf ones",
          "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // Rows of 600 and 200 finite entries among -inf, K above both or between them: the end of a row
    // holds fewer than K candidates (more than the 256 its register sort takes, or fewer), keeps
    // them all and completes the K with -inf entries in index order.
    const std::int64_t rows = 2, V = 4096;
    const std::int64_t K = GENERATE(300, 1024);
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<float> x(static_cast<std::size_t>(rows * V), ninf);
    const std::int64_t finite[rows] = {600, 200};
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < finite[r]; ++j) {
            const std::int64_t col = (j * 6 + 5) % V;                     // spread over the row
            x[static_cast<std::size_t>(r * V + col)] = std::sin(0.37f * static_cast<float>(j)) * 4.0f;  // distinct
        }
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K);
}

TEST_CASE("fused_stream: rows of extreme logits next to ordinary ones, in bf16 and fp32", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // Extreme magnitudes for the sums' exponent arithmetic (an FFMA form 2^(x log2e - c), c = m
    // log2e rounded, was measured and dropped in topk8: it fails rows 0 and 2-4, where c's rounding
    // is far above 1 in the exponent; NOTES.md, "topk8"). Row 0: five ties at 2.5e38 spread over the
    // row (probability 0.2 each, lower indices first), the rest small; row 1: ordinary logits; row 2:
    // one 3e38 above ties at 2.4e38; row 3: +-(0.5..1.5)e30 (the adversarial kind "huge"); row 4: the
    // first 4096 entries -1e30 (lanes whose running maximum starts huge and negative), the rest
    // ordinary. Rows 5-8 for fused_stream's 16-bit one-FFMA terms (fused_stream.cu, above
    // lane_stats_t; rows with 2^20 < |M| summed again exactly): row 5, 1e7 + 4 sin (all ties in
    // bf16); row 6, 2^29 (1 + 3 frac), spaced 64 or more apart; row 7, every entry -1e30 (a uniform
    // softmax); row 8, 2^30 - 2^22 (j mod 7): ties at 2^30 beside lanes whose maximum is 2^22 below.
    // K <= 32 (K = 7) and K > 32 (sampled: 100, 300); bf16 (logits rounded) and fp32.
    const std::int64_t rows = 9, V = 20000;
    const std::int64_t K = GENERATE(7, 100, 300);
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < V; ++j)
            x[static_cast<std::size_t>(r * V + j)] = std::sin(0.37f * static_cast<float>(j) + static_cast<float>(r)) * 4.0f;
    for (std::int64_t q = 0; q < 5; ++q) x[static_cast<std::size_t>(q * 3917 + 11)] = 2.5e38f;
    for (std::int64_t q = 0; q < 40; ++q) x[static_cast<std::size_t>(2 * V + q * 491 + 3)] = 2.4e38f;
    x[static_cast<std::size_t>(2 * V + 19999)] = 3.0e38f;
    for (std::int64_t j = 0; j < V; ++j) {
        const float u = std::sin(1.13f * static_cast<float>(j));
        x[static_cast<std::size_t>(3 * V + j)] = (j % 2 == 0 ? 1e30f : -1e30f) * (1.0f + 0.5f * u);
    }
    for (std::int64_t j = 0; j < 4096; ++j) x[static_cast<std::size_t>(4 * V + j)] = -1e30f;
    for (std::int64_t j = 0; j < V; ++j) {
        const float fr = 0.5f + 0.5f * std::sin(2.71f * static_cast<float>(j));
        x[static_cast<std::size_t>(5 * V + j)] = 1e7f + 4.0f * std::sin(0.61f * static_cast<float>(j));
        x[static_cast<std::size_t>(6 * V + j)] = 0x1p29f * (1.0f + 3.0f * fr);
        x[static_cast<std::size_t>(7 * V + j)] = -1e30f;
        x[static_cast<std::size_t>(8 * V + j)] = 0x1p30f - 0x1p22f * static_cast<float>(j % 7);
    }
    const bool bf16 = GENERATE(true, false);
    CAPTURE(bf16);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, bf16);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream_resample, x, rows, V, K, bf16);
}

TEST_CASE("fused_stream_resample: rows that rise along the index (its resample path), exact, beside fused_stream",
          "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // V = 20000 (fp32: 5000 vectors, 39 batches; bf16: 2500, 26). Row 0 rises strictly (bf16 rounds
    // it into runs of ties); row 1 rises in plateaus of 7 equal values; row 2 falls for its first
    // half, then rises above every earlier value (the dense batches come late); row 3 rises to a
    // peak of 40 equal values in its last quarter, then falls; row 4: ordinary logits (the resample
    // never runs). Every batch of rows 0-2 past the first brings more than half a batch of
    // candidates, so the resample runs (more than once on row 2).
    const std::int64_t rows = 5, V = 20000;
    const std::int64_t K = GENERATE(1, 7, 32);
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    for (std::int64_t j = 0; j < V; ++j) {
        const auto f = static_cast<float>(j);
        x[static_cast<std::size_t>(j)] = -10.0f + f * 1e-3f;
        x[static_cast<std::size_t>(V + j)] = static_cast<float>(j / 7) * 0.01f;
        x[static_cast<std::size_t>(2 * V + j)] = j < V / 2 ? -f * 1e-3f : (f - V / 2.0f) * 2e-3f;
        x[static_cast<std::size_t>(3 * V + j)] = j < 15000 ? f * 1e-3f : j < 15040 ? 20.0f : 19.0f - (f - 15040.0f) * 1e-3f;
        x[static_cast<std::size_t>(4 * V + j)] = std::sin(0.37f * f) * 4.0f;
    }
    const bool bf16 = GENERATE(true, false);
    CAPTURE(bf16);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream_resample, x, rows, V, K, bf16);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, bf16);
}

namespace {

// The fused_bound tests' six rows of length V (their comments say what each exercises).
constexpr std::int64_t bound_test_row_count = 6;
std::vector<float> bound_test_rows(std::int64_t V) {
    std::vector<float> x(static_cast<std::size_t>(bound_test_row_count * V));
    for (std::int64_t j = 0; j < V; ++j) {
        const auto f = static_cast<float>(j);
        x[static_cast<std::size_t>(j)] = -10.0f + f * 3e-4f;
        x[static_cast<std::size_t>(V + j)] = static_cast<float>(j / 7) * 0.01f;
        x[static_cast<std::size_t>(2 * V + j)] = std::sin(0.37f * f) * 4.0f + static_cast<float>(j % 89) * 1e-2f;
        x[static_cast<std::size_t>(3 * V + j)] = j % (V / 40) == 7 ? 3.0f : 1.0f;
        x[static_cast<std::size_t>(4 * V + j)] = j < V / 2 ? -f * 1e-3f : (f - static_cast<float>(V) / 2.0f) * 2e-3f;
        x[static_cast<std::size_t>(5 * V + j)] = 0.5f;
    }
    return x;
}

}  // namespace

TEST_CASE("fused_bound: rising, plateaued, tied and ordinary bf16 rows, exact, beside fused_stream", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // fused_bound (v9e) holds the K best vectors in registers and reads them again at the row's end.
    // Row 0 rises strictly (every step merges 32 records by networks; bf16 rounds it into runs of ties);
    // row 1 rises in plateaus of 7 (ties by index inside the held set); row 2: ordinary logits (records one
    // by one); row 3: 40 equal peaks, one a vector, over ties of lower value (ties among the held vectors);
    // row 4 falls, then rises above every earlier value; row 5: every entry equal (8 K candidates: above 64
    // from K = 9, the end's K rounds). V: an odd row length (rows start at every 16-byte offset), one that
    // fills whole vectors, and the largest.
    const std::int64_t rows = bound_test_row_count;
    const std::int64_t V = GENERATE(20001, 50256, 65536);
    const std::int64_t K = GENERATE(1, 7, 16, 32);
    CAPTURE(V, K);
    const std::vector<float> x = bound_test_rows(V);
    expect_exact_topk(kernels::launch_softmax_topk_fused_bound, x, rows, V, K, true);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, true);
}

TEST_CASE("fused_bound: K = 33..256 (the list kernel) on rising, plateaued, tied and ordinary rows, exact",
          "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // K > 32 takes the list kernel (fused_bound.cu, session q): the joining vectors appended to a list in
    // shared memory, exact compactions to the top K vectors (ties by list order), then the K vectors' elements
    // at or above the K-th vector key selected by histograms and sorted. The rows of the K <= 32 test above;
    // row 0 rises (a compaction every 27 steps), row 5 is all equal (8 K candidates at one key: the end takes
    // the first K in index order), row 3's peaks are fewer than K at K > 40 (the rest: ties of 1.0 by index).
    // V = 300 and 2100: rows of fewer vectors than K (no threshold: every element a candidate) and rows
    // compacted only at their end. (fp16: the suite's small adversarial cases, every variant in its domain.)
    const std::int64_t rows = bound_test_row_count;
    const std::int64_t V = GENERATE(300, 2100, 20001, 50256, 65536);
    const std::int64_t K = GENERATE(33, 64, 65, 128, 129, 200, 256);
    if (K > V) return;
    CAPTURE(V, K);
    const std::vector<float> x = bound_test_rows(V);
    expect_exact_topk(kernels::launch_softmax_topk_fused_bound, x, rows, V, K, true);
}

TEST_CASE("fused_bound: the list kernel on the suite's input kinds in fp16 and bf16, at every vector offset and two rows a warp, exact",
          "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // Rows of the suite's own generator (softmax_topk_generate) for its kinds with a finite softmax, and rows with
    // fewer finite elements than K (made here from random ones: every element but each 300th set to -inf; the top K
    // then ends in -inf ties by index). A block of 8 rows a kind; row r is row r % 8 of kind (r / 8)'s block, so with
    // V odd (row r starts at element r V) every kind meets all 8 offsets of a row in its first 16-byte vector. The
    // suite's ties (values in steps of 0.5) put fp16 keys 256 apart, at the edge of a compaction's histogram window
    // (session q's bug). V = 2101 with 32 x SMs + 160 rows: 160 warps take a second row (the list, the histogram and
    // the end's shared memory used again; the default run's 4096 rows give every warp one).
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const bool long_rows = GENERATE(true, false);
    const std::int64_t V = long_rows ? 32001 : 2101;
    const std::int64_t K = GENERATE(33, 50, 129, 256);
    if (long_rows ? K == 33 || K == 129 : K == 50) return;  // long rows: K 50 and 256; short ones: 33, 129, 256
    const std::vector<std::string> kinds = {"random", "all_equal", "ties", "cluster256", "cluster32", "ascending",
                                            "descending", "masked", "stride_trap", "plateau", "few_finite"};
    const auto n_kinds = static_cast<std::int64_t>(kinds.size());
    const std::int64_t rows = long_rows ? 8 * n_kinds : 32 * static_cast<std::int64_t>(sms) + 160;
    const kernels::elem dt = GENERATE(kernels::elem::f16, kernels::elem::bf16);
    CAPTURE(V, rows, K, dt == kernels::elem::f16 ? "fp16" : "bf16");
    registry reg;
    const suite& s = find_suite(reg, "softmax_topk");
    std::vector<std::vector<float>> blocks;  // 8 rows of each kind
    for (const auto& kind : kinds) {
        const bool few = kind == "few_finite";
        const case_desc c = small_case(dtype::f32, 8, V, K, few ? "random" : kind);
        std::vector<host_tensor> in;
        for (const auto& spec : s.input_specs(c)) in.emplace_back(spec);
        s.generate(c, rng(20261128), in);
        std::vector<float> b(static_cast<std::size_t>(8 * V));
        for (std::size_t i = 0; i < b.size(); ++i)
            b[i] = few && i % 300 != 7 ? -std::numeric_limits<float>::infinity() : static_cast<float>(in[0].get(i));
        blocks.push_back(std::move(b));
    }
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto& b = blocks[static_cast<std::size_t>((r / 8) % n_kinds)];
        std::copy_n(b.begin() + (r % 8) * V, V, x.begin() + r * V);
    }
    expect_exact_topk_as(kernels::launch_softmax_topk_fused_bound, x, rows, V, K, dt);
}

TEST_CASE("fused_stream: bf16 K = 12..32 on each side of the devices' kernel choices (Lean, the K > 32 kernel), exact",
          "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // fused_stream picks its kernel by device, K and V (fused_stream.cu, stream_small_max_k and
    // stream_lean): on an H100 bf16 rows take Lean (lane-at-a-time appends) from K = 12 at
    // V <= 65536 and the K > 32 kernel from K = 20 at V <= 32768 and K = 31 at V <= 65536; on an H200
    // the K > 32 kernel from K = 16 at every V. These K and V sit on both sides of each boundary, so
    // whichever device runs this, Lean with and without the L2 prefetch, the K <= 32 kernel without
    // Lean and the K > 32 kernel all meet the exact answer. Row 0: ordinary logits; row 1: rising in
    // plateaus of 5 (dense candidates: Lean's steps with more than 4 candidate lanes); row 2: ties of
    // lower value everywhere with 40 distinct peaks; row 3: falling, then a late rise above every earlier value.
    const std::int64_t rows = 4;
    const std::int64_t V = GENERATE(20000, 40000, 70000);
    const std::int64_t K = GENERATE(12, 19, 20, 24, 30, 31, 32);
    CAPTURE(V, K);
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    for (std::int64_t j = 0; j < V; ++j) {
        const auto f = static_cast<float>(j);
        x[static_cast<std::size_t>(j)] = std::sin(0.37f * f) * 4.0f + static_cast<float>(j % 89) * 1e-2f;
        x[static_cast<std::size_t>(V + j)] = static_cast<float>(j / 5) * 1e-3f;
        x[static_cast<std::size_t>(2 * V + j)] = j % (V / 40) == 7 ? 3.0f + static_cast<float>(j) * 1e-4f : 1.0f;
        x[static_cast<std::size_t>(3 * V + j)] = j < V / 2 ? -f * 1e-3f : (f - static_cast<float>(V) / 2.0f) * 2e-3f;
    }
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, true);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream_resample, x, rows, V, K, true);
}

TEST_CASE("fused_stream: bf16 K = 16..32 on short rows (V from K to 1000), exact", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // Short rows with K where both devices may send a 16-bit row to the K > 32 kernel (H200 from
    // K = 16 at any V, H100 from K = 20 at V <= 32768): rows of fewer full warp steps than its sample
    // needs (no sampled pass), K = V, and V one vector past K. Rows: a sine, ties of one value, a rise.
    const std::int64_t K = GENERATE(16, 20, 31, 32);
    const std::int64_t V = GENERATE_COPY(K, K + 1, K + 9, 100, 1000);
    CAPTURE(V, K);
    const std::int64_t rows = 3;
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    for (std::int64_t j = 0; j < V; ++j) {
        x[static_cast<std::size_t>(j)] = std::sin(0.37f * static_cast<float>(j)) * 4.0f;
        x[static_cast<std::size_t>(V + j)] = 0.5f;
        x[static_cast<std::size_t>(2 * V + j)] = static_cast<float>(j) * 0.01f;
    }
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, true);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, false);
}

TEST_CASE("fused_stream: rows that make one wave of 32 rows an SM, exact", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // The rows where fused_stream's K <= 32 kernel runs one block of 32 warps an SM
    // (FUSEBENCH_STREAM_WHOLE_SM: one wave at 32 rows an SM, at most 4 SMs without a block;
    // fused_stream.cu, stream_whole_sm_blocks): both ends of that range, 32 x SMs and 32 x SMs - 128
    // rows (4 SMs without a block; 4096 rows on 132 SMs, as the suite's cases), and 32 x SMs - 127 (a
    // last block of one row). Four kinds of rows by row index (a sine of its own phase, ties of one
    // value with one peak, a rise, hashed values), V odd so the scalar head and tail run too.
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const std::int64_t rows = 32 * static_cast<std::int64_t>(sms) - GENERATE(0, 127, 128);
    const std::int64_t K = GENERATE(1, 10);
    const bool bf16 = GENERATE(true, false);
    CAPTURE(rows, K, bf16);
    const std::int64_t V = 3001;
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t j = 0; j < V; ++j) {
            const auto f = static_cast<float>(j);
            float& e = x[static_cast<std::size_t>(r * V + j)];
            switch (r % 4) {
                case 0: e = std::sin(0.37f * f + 0.1f * static_cast<float>(r)) * 4.0f; break;
                case 1: e = j == (r * 7) % V ? 2.0f : 0.5f; break;
                case 2: e = f * 1e-3f - static_cast<float>(r % 13); break;
                default: e = static_cast<float>((static_cast<std::uint32_t>(r * 2654435761u) ^ static_cast<std::uint32_t>(j * 40503u)) % 1000u) * 1e-2f;
            }
        }
    }
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, bf16);
    if (K == 10) expect_exact_topk(kernels::launch_softmax_topk_fused_stream_resample, x, rows, V, K, bf16);
}

TEST_CASE("fused_stream_resample at K > 32: rows its sampled pass gives up, read again by the retry kernel, exact",
          "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // V = 20011 (odd: the rows' heads before the first 128-byte boundary differ), fp32 156 warp
    // steps a row, bf16 78: sampled at K = 64 and 256 (P = 2 and 10), fp32 at K = 1024 too (P = 40).
    // Row 0 rises (fails at its end or is given up after the second phase: the safe sample),
    // row 1 is all equal (its sample's top ties: in order with the index vote), row 2 falls and
    // row 3 holds its large values in every tenth 512-byte run (the sampled steps at P = 10: given
    // up after the first phase, read in order in the main kernel), row 4 rises in plateaus of 9
    // equal values, row 5 holds 600 equal maxima spread over the row above ordinary logits, row 6 is
    // ordinary (never given up). Rows 7 and 8 hold 1000 equal maxima, more than the sample keeps, so
    // the sample's kept keys tie at the top: row 7 rises to them at its end (a maximum first met in the
    // row's second half: FUSEBENCH_RESAMPLE_RISING_SAFE sends it to the safe sample), row 8 starts with
    // them and falls (the in-order pass with the index vote). Every row beside fused_stream, whose
    // kernels have no retry.
    const std::int64_t rows = 9, V = 20011;
    const std::int64_t K = GENERATE(64, 256, 1024);
    const bool bf16 = GENERATE(true, false);
    CAPTURE(K, bf16);
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    const std::int64_t trap = bf16 ? 256 : 128;  // elements of a 512-byte run
    for (std::int64_t j = 0; j < V; ++j) {
        const auto f = static_cast<float>(j);
        const float z = std::sin(0.37f * f) * 2.0f;
        x[static_cast<std::size_t>(j)] = -4.0f + 8.0f * f / static_cast<float>(V);
        x[static_cast<std::size_t>(V + j)] = 0.5f;
        x[static_cast<std::size_t>(2 * V + j)] = 4.0f - 8.0f * f / static_cast<float>(V);
        x[static_cast<std::size_t>(3 * V + j)] = (j / trap) % 10 == 0 ? 20.0f + z : z - 5.0f;
        x[static_cast<std::size_t>(4 * V + j)] = static_cast<float>(j / 9) * 0.01f;
        x[static_cast<std::size_t>(5 * V + j)] = j % 33 == 7 ? 9.0f : z;
        x[static_cast<std::size_t>(6 * V + j)] = std::sin(1.13f * f + 0.5f) * 3.0f + std::sin(0.011f * f);
        x[static_cast<std::size_t>(7 * V + j)] = -4.0f + 8.0f * static_cast<float>(std::min(j, V - 1000)) / static_cast<float>(V);
        x[static_cast<std::size_t>(8 * V + j)] = 4.0f - 8.0f * static_cast<float>(std::max<std::int64_t>(j - 999, 0)) / static_cast<float>(V);
    }
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream_resample, x, rows, V, K, bf16);
    expect_exact_topk(kernels::launch_softmax_topk_fused_stream, x, rows, V, K, bf16);
}

TEST_CASE("fused_radix takes ties at the K-th key in index order across the blocks of a cluster", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // V = 60000 fp32 is five blocks of 12032 columns. Row 0: 1.0 on every 20th column (3000 ties,
    // ~600 per block) and 2.0 on columns 7919 q: the top K is the 2.0 entries, then the 1.0 ties by
    // index, which for K = 1024 spans blocks 0 and 1. Row 1: 40 distinct values above a floor of
    // ties (the candidates fit after the first digit for small K). Row 2: a strictly descending row.
    const std::int64_t rows = 3, V = 60000;
    const std::int64_t K = GENERATE(1, 9, 100, 1024);
    std::vector<float> x(static_cast<std::size_t>(rows * V), 0.0f);
    for (std::int64_t j = 0; j < V; ++j) {
        float& a = x[static_cast<std::size_t>(j)];
        a = j % 20 == 0 ? 1.0f : -1.0f;
        if (j % 7919 == 0) a = 2.0f;
        x[static_cast<std::size_t>(V + j)] = j % 1500 == 7 ? 3.0f + static_cast<float>(j) * 1e-4f : 0.5f;
        x[static_cast<std::size_t>(2 * V + j)] = 4.0f - static_cast<float>(j) * 1e-4f;
    }
    expect_exact_topk(kernels::launch_softmax_topk_fused_radix, x, rows, V, K);
    expect_exact_topk(kernels::launch_softmax_topk_fused_smem, x, rows, V, K);
}

TEST_CASE("fused_radix: top values in one slot over equal ones, ties at the bound, more than 2048 above it",
          "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // V = 60000 fp32: 3 blocks per row for K <= 512, 4 for K = 1024 (4 K slot maxima). Row 0: 1.0
    // everywhere but columns 4096 q + 1 (5.0 + q, 15 of them): within a block those columns are one
    // thread's vectors at one batch position, so only ~3 slot maxima exceed 1.0 and the bound L is
    // exactly 1.0. K = 10: 15 above L, the 60000 - 15 ties at L are not stored (take the 15 above).
    // K >= 20: fewer than K above L, so the K - 15 ties of lowest index join (an in-order scan).
    // Row 1: strictly ascending: the top slot maxima are the ends of the row's last vectors, about
    // 4 K elements pass L, more than 2048 for K = 600 and 1024 (the digit path). Row 2: distinct
    // values in no order.
    const std::int64_t rows = 3, V = 60000;
    const std::int64_t K = GENERATE(10, 20, 600, 1024);
    std::vector<float> x(static_cast<std::size_t>(rows * V), 1.0f);
    for (std::int64_t q = 0; 4096 * q + 1 < V; ++q) x[static_cast<std::size_t>(4096 * q + 1)] = 5.0f + static_cast<float>(q);
    for (std::int64_t j = 0; j < V; ++j) {
        x[static_cast<std::size_t>(V + j)] = -30.0f + static_cast<float>(j) * 1e-3f;
        x[static_cast<std::size_t>(2 * V + j)] = std::sin(0.37f * static_cast<float>(j)) * 4.0f + static_cast<float>(j % 97) * 1e-3f;
    }
    expect_exact_topk(kernels::launch_softmax_topk_fused_radix, x, rows, V, K);
    // fused_smem: row 1 (ascending) puts more than 2048 above its bound at K = 600 / 1024 (the digit path).
    expect_exact_topk(kernels::launch_softmax_topk_fused_smem, x, rows, V, K);
}

TEST_CASE("fused_smem: more rows than resident clusters, rows in every order, ties, K up to 1024", "[gpu][softmax_topk]") {
    FUSEBENCH_REQUIRE_GPU();
    // V = 30011 fp32 (odd: consecutive rows start at every 4-byte phase of a 16-byte boundary, so
    // every ragged head and tail length occurs) is two blocks of 15040 columns; 600 rows are several
    // for each resident cluster: both buffers and both mbarrier phases turn over and the leader block
    // rotates. Row r % 6: distinct values in no order; ascending (the top K in block 1's last vectors;
    // more than 2048 above the bound at K = 1024: the digit path); descending; all equal (nothing
    // above the bound: the K ties of lowest index); 1.0 on every 7th column over -1.0 with a few 2.0
    // (ties at the bound across both blocks); the top 40 values on one thread's stride in block 1
    // (columns 15040 + 1024 q: one slot each, the bound from the other blocks).
    const std::int64_t rows = 600, V = 30011;
    const std::int64_t K = GENERATE(1, 10, 33, 256, 1024);
    std::vector<float> x(static_cast<std::size_t>(rows * V));
    for (std::int64_t r = 0; r < rows; ++r) {
        float* row = x.data() + r * V;
        for (std::int64_t j = 0; j < V; ++j) {
            const auto fj = static_cast<float>(j);
            float v = 0.0f;
            switch (r % 6) {
                case 0: v = std::sin(0.37f * fj + static_cast<float>(r)) * 4.0f + static_cast<float>(j % 97) * 1e-3f; break;
                case 1: v = -20.0f + fj * 1e-3f; break;
                case 2: v = 20.0f - fj * 1e-3f; break;
                case 3: v = 0.5f; break;
                case 4: v = j % 7 == 0 ? 1.0f : -1.0f; if (j % 3001 == 5) v = 2.0f; break;
                default: v = std::cos(0.11f * fj) - 3.0f; break;
            }
            row[j] = v;
        }
        if (r % 6 == 5) {
            for (std::int64_t q = 0; q < 14; ++q) row[15040 + 1024 * q] = 10.0f + static_cast<float>(q);
        }
    }
    expect_exact_topk(kernels::launch_softmax_topk_fused_smem, x, rows, V, K);
}
