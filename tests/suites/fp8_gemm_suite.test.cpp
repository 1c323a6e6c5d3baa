// The fp8_gemm suite. CPU: the case set the issue asks for; the generated codes are the sources
// quantized with the declared block layout; the check passes a CPU emulation of the naive path's
// rounding and of an exact FP8 kernel (the latter within 2x the former), and fails emulations of
// the three mutants (per-tensor scale, transposed tile scales, E5M2 decoding); the quantization
// figure is reported beside the verdict; the sampled path names its rows. GPU: every variant passes
// every untimed case it runs, deterministically, with the figures attached.
#include "harness/check.hpp"
#include "harness/device_info.hpp"
#include "harness/runner.hpp"
#include "references/fp8_gemm_reference.hpp"
#include "references/fp8_reference.hpp"
#include "suites/suites.hpp"
#include "support/gpu.hpp"

#include <catch2/catch_test_macros.hpp>

#include <Eigen/Core>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>

using namespace fusebench;
using fusebench::test::verify_untimed_cases;

namespace {

const suite& fp8_suite(registry& reg) {
    register_fp8_gemm(reg);
    const suite* s = reg.find("fp8_gemm");
    REQUIRE(s != nullptr);
    return *s;
}

case_desc find_case(const suite& s, const std::string& name) {
    for (const auto& c : s.cases()) {
        if (c.name == name) return c;
    }
    FAIL("no case " << name);
    return {};
}

case_desc shape_case(const suite& s, std::int64_t m, std::int64_t n, std::int64_t k) {
    user_shape u;
    u.suite = "fp8_gemm";
    u.dims = {{"M", m}, {"N", n}, {"K", k}};
    return s.shapes->make_case(u, dtype::e4m3);
}

std::vector<host_tensor> inputs_of(const suite& s, const case_desc& c, std::uint64_t seed) {
    std::vector<host_tensor> in;
    for (const auto& t : s.input_specs(c)) in.emplace_back(t);
    s.generate(c, rng(seed), in);
    return in;
}

std::size_t blocks(std::size_t x) { return (x + 127) / 128; }

// E5M2 (bias 15, 2 mantissa bits; exponent 31: inf / NaN), for the mutant emulation.
double e5m2_to_double(std::uint8_t b) {
    const int sign = b >> 7, e = (b >> 2) & 31, f = b & 3;
    double v;
    if (e == 31) v = f ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else if (e == 0) v = std::ldexp(f / 4.0, -14);
    else v = std::ldexp(1.0 + f / 4.0, e - 15);
    return sign ? -v : v;
}

struct emulation {
    std::function<double(std::uint8_t)> decode = [](std::uint8_t b) { return references::e4m3_to_double(b); };
    // Scale indices of A's element (r, j) and B's element (n, j), given the block counts.
    std::function<std::size_t(std::size_t r, std::size_t j, std::size_t kb)> a_index = [](std::size_t r, std::size_t j, std::size_t kb) {
        return r * kb + j / 128;
    };
    std::function<std::size_t(std::size_t n, std::size_t j, std::size_t kb, std::size_t nb)> b_index =
        [](std::size_t n, std::size_t j, std::size_t kb, std::size_t) { return (n / 128) * kb + j / 128; };
    bool bf16_inputs = false;  // round each dequantized element (computed in fp32) to bf16, as the naive path does
};

// D of a GEMM on the generated codes, dequantized as `e` says, in fp64, rounded to bf16.
host_tensor emulate(const case_desc& c, const std::vector<host_tensor>& in, const emulation& e) {
    const auto m = static_cast<std::size_t>(c.dim("M")), n = static_cast<std::size_t>(c.dim("N")), k = static_cast<std::size_t>(c.dim("K"));
    const std::size_t kb = blocks(k), nb = blocks(n);
    const auto* a = reinterpret_cast<const std::uint8_t*>(in[0].data.data());
    const auto* as = reinterpret_cast<const float*>(in[1].data.data());
    const auto* b = reinterpret_cast<const std::uint8_t*>(in[2].data.data());
    const auto* bs = reinterpret_cast<const float*>(in[3].data.data());
    auto deq = [&](std::uint8_t code, float scale) {
        if (!e.bf16_inputs) return e.decode(code) * static_cast<double>(scale);
        const float v = static_cast<float>(e.decode(code)) * scale;  // the kernel's fp32 product
        return static_cast<double>(bf16_bits_to_float(float_to_bf16_bits(v)));
    };
    Eigen::MatrixXd ad(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(k)), bd(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(k));
    for (std::size_t r = 0; r < m; ++r) {
        for (std::size_t j = 0; j < k; ++j) ad(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = deq(a[r * k + j], as[e.a_index(r, j, kb)]);
    }
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t j = 0; j < k; ++j) bd(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = deq(b[r * k + j], bs[e.b_index(r, j, kb, nb)]);
    }
    const Eigen::MatrixXd d = ad * bd.transpose();
    host_tensor out(tensor_spec{"d", dtype::bf16, {static_cast<std::int64_t>(m), static_cast<std::int64_t>(n)}, 0, -1});
    for (std::size_t r = 0; r < m; ++r) {
        for (std::size_t j = 0; j < n; ++j) out.set(r * n + j, d(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)));
    }
    return out;
}

output_check check_of(const suite& s, const case_desc& c, const std::vector<host_tensor>& in, const std::vector<std::vector<double>>& ref,
                      host_tensor out) {
    std::vector<host_tensor> outs;
    outs.push_back(std::move(out));
    auto checks = s.custom_check(check_input{c, in, ref, outs});
    REQUIRE(checks.size() == 1);
    return checks[0];
}

}  // namespace

TEST_CASE("fp8_gemm declares the model shapes, every token count, ragged and partial-block cases", "[suites][fp8]") {
    registry reg;
    const suite& s = fp8_suite(reg);
    CHECK_FALSE(s.default_run);  // until verified on a GPU
    REQUIRE(s.baseline() != nullptr);
    CHECK(s.baseline()->name == "naive");
    std::set<std::string> names;
    std::set<std::int64_t> ms;
    std::size_t default_timed = 0;
    bool ragged_m = false, partial_k = false, partial_n = false;
    for (const auto& c : s.cases()) {
        CAPTURE(c.name);
        names.insert(c.name);
        CHECK(c.type == dtype::e4m3);
        const std::int64_t m = c.dim("M"), n = c.dim("N"), k = c.dim("K");
        ms.insert(m);
        if (c.timed && !c.full_only) ++default_timed;
        ragged_m = ragged_m || m == 1000;
        partial_k = partial_k || k % 128 != 0;
        partial_n = partial_n || n % 128 != 0;
        // FLOPs 2 M N K on the FP8 tensor cores (the peer) and on the bf16 ones (the naive path,
        // which also moves the bf16 copies of A and B).
        const variant& naive = s.variants[0];
        const variant& peer = s.variants[1];
        CHECK(peer.role == variant_role::peer);
        CHECK(peer.model(c).flops == 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
        CHECK(peer.model(c).unit == compute_unit::tensor_fp8);
        CHECK(naive.model(c).unit == compute_unit::tensor_bf16);
        CHECK(naive.model(c).bytes_read > peer.model(c).bytes_read);
        // The sources ride along but no model counts them: A and B codes are one byte an element.
        CHECK(peer.model(c).bytes_read < 1.1 * static_cast<double>(m * k + n * k) + 4.0 * static_cast<double>(m + n) * static_cast<double>((k + 127) / 128) + 1024);
    }
    for (std::int64_t m : {1, 16, 128, 1024, 4096, 8192}) CHECK(ms.count(m));
    for (const char* n : {"M4096:N4096:K4096:llama3-8b.qo", "M8192:N28672:K8192:llama3-70b.gate_up", "M8192:N8192:K28672:llama3-70b.down",
                          "M4096:N7168:K2048:deepseek-v3.expert_down", "M1:N2048:K7168:deepseek-v3.expert_gate_up",
                          "M1024:N24576:K1536:deepseek-v3.q_b", "M16:N7168:K18432:deepseek-v3.dense_down",
                          "M128:N4096:K14336:llama3-8b.down", "M33:N256:K4000", "M17:N130:K300", "M128:N384:K384:outliers",
                          "M128:N384:K384:zero_blocks"}) {
        CAPTURE(n);
        CHECK(names.count(n));
    }
    CHECK(ragged_m);
    CHECK(partial_k);
    CHECK(partial_n);
    CHECK(default_timed <= 6);  // the default selection stays short; the grid is --full
    // The peer's domain: K and N multiples of 16 (whatever the device says beyond that).
    const variant& peer = s.variants[1];
    CHECK(peer.req.supports(find_case(s, "M17:N130:K300")).has_value());
    CHECK(peer.req.supports(find_case(s, "M3:N5:K7")).has_value());
}

TEST_CASE("fp8_gemm inputs: the codes are the bf16 sources quantized in 1x128 runs and 128x128 tiles", "[suites][fp8]") {
    registry reg;
    const suite& s = fp8_suite(reg);
    for (const char* name : {"M17:N130:K300", "M128:N384:K384:outliers", "M128:N384:K384:zero_blocks"}) {
        CAPTURE(name);
        const case_desc c = find_case(s, name);
        const auto in = inputs_of(s, c, 11);
        const auto m = static_cast<std::size_t>(c.dim("M")), n = static_cast<std::size_t>(c.dim("N")), k = static_cast<std::size_t>(c.dim("K"));
        const std::size_t kb = blocks(k);
        // Each code times its block's scale is its source value within E4M3's rounding: half an
        // ulp (2^-4 relative) or half the subnormal step (2^-10 of the scale).
        auto close = [](double deq, double src, double scale) {
            return std::fabs(deq - src) <= std::ldexp(std::fabs(src), -4) + std::ldexp(scale, -10) * 1.0001;
        };
        std::size_t bad = 0, subnormal = 0, zero_blocks_a = 0;
        for (std::size_t r = 0; r < m; ++r) {
            for (std::size_t j = 0; j < k; ++j) {
                const std::uint8_t code = static_cast<std::uint8_t>(in[0].data[r * k + j]);
                const double scale = in[1].get(r * kb + j / 128);
                bad += !close(references::e4m3_to_double(code) * scale, in[4].get(r * k + j), scale);
                subnormal += (code & 0x78) == 0 && (code & 0x07) != 0;
            }
            for (std::size_t jb = 0; jb < kb; ++jb) zero_blocks_a += in[1].get(r * kb + jb) == 1.0;
        }
        for (std::size_t r = 0; r < n; ++r) {
            for (std::size_t j = 0; j < k; ++j) {
                const double scale = in[3].get((r / 128) * kb + j / 128);
                bad += !close(references::e4m3_to_double(static_cast<std::uint8_t>(in[2].data[r * k + j])) * scale, in[5].get(r * k + j), scale);
            }
        }
        CHECK(bad == 0);
        if (c.input_kind == "outliers") CHECK(subnormal > m * kb);  // the outlier pushes its block's small values down
        if (c.input_kind == "zero_blocks") CHECK(zero_blocks_a > 0);
        // Scales differ between blocks (a scale applied to the wrong block changes the result).
        std::set<float> scales;
        for (std::size_t i = 0; i < in[3].numel(); ++i) scales.insert(static_cast<float>(in[3].get(i)));
        CHECK(scales.size() >= std::min<std::size_t>(3, in[3].numel()));
    }
}

TEST_CASE("fp8_gemm check: the naive path's rounding passes, an exact FP8 kernel passes within 2x of it, the mutants fail",
          "[suites][fp8]") {
    registry reg;
    const suite& s = fp8_suite(reg);
    for (const case_desc& c : {find_case(s, "M128:N384:K384"), find_case(s, "M17:N130:K300"), find_case(s, "M128:N384:K384:outliers"),
                               find_case(s, "M33:N256:K4000"), shape_case(s, 64, 1024, 4096)}) {
        CAPTURE(c.name, c.input_kind);
        const auto in = inputs_of(s, c, 2026);
        const auto ref = s.reference(c, in);
        REQUIRE(ref.size() == 1);
        const double rms = finite_rms(ref[0]);

        emulation naive_e;
        naive_e.bf16_inputs = true;
        const output_check naive = check_of(s, c, in, ref, emulate(c, in, naive_e));
        CAPTURE(naive.reason);
        CHECK(naive.pass);
        // Its largest error uses at most half of the element-wise bound 2^-7 |ref| + 2^-4 rms(ref) (about a
        // quarter to a third here; the suite's comment expects about 0.4 at ~6e7 elements).
        {
            const host_tensor o = emulate(c, in, naive_e);
            double worst = 0;
            for (std::size_t i = 0; i < o.numel(); ++i) {
                const double allowed = 2.0 / 256 * std::fabs(ref[0][i]) + rms / 16;
                worst = std::max(worst, std::fabs(o.get(i) - ref[0][i]) / allowed);
            }
            CAPTURE(*naive.stats.max_abs / rms, *naive.stats.rel_l2);
            CHECK(worst > 0.05);  // the emulation rounds: it is not the reference
            CHECK(worst < 0.5);
        }

        const output_check exact = check_of(s, c, in, ref, emulate(c, in, emulation{}));
        CHECK(exact.pass);
        output_check rel = exact;
        apply_relative_tolerance(rel, &naive, 2.0, 1.0 / 1024, rms);
        CAPTURE(rel.reason);
        CHECK(rel.pass);

        // The quantization figure is there, beside the verdict, and says what E4M3 costs here.
        REQUIRE(exact.figures.count("quant_rel_l2"));
        REQUIRE(exact.figures.count("quant_floor_rel_l2"));
        CHECK(exact.figures.at("quant_cosine").value > 0.99);
        CHECK(exact.figures.at("quant_rel_l2").value > 1e-3);
        CHECK(exact.figures.at("quant_rel_l2").value < 0.2);
        CHECK(std::fabs(exact.figures.at("quant_rel_l2").value - exact.figures.at("quant_floor_rel_l2").value) < 0.01);

        // Mutants: per-tensor scale, transposed tile scales (only where the tile grid is not 1 x 1),
        // E5M2 decoding. Each is out of tolerance, element-wise or relative to the baseline.
        std::vector<std::pair<std::string, emulation>> mutants;
        emulation per_tensor;
        per_tensor.a_index = [](std::size_t, std::size_t, std::size_t) { return std::size_t{0}; };
        per_tensor.b_index = [](std::size_t, std::size_t, std::size_t, std::size_t) { return std::size_t{0}; };
        per_tensor.bf16_inputs = true;
        mutants.emplace_back("per-tensor scale", per_tensor);
        emulation transposed;
        transposed.b_index = [](std::size_t nn, std::size_t j, std::size_t, std::size_t nb) { return (j / 128) * nb + nn / 128; };
        transposed.bf16_inputs = true;
        mutants.emplace_back("transposed b_scale", transposed);
        emulation e5m2;
        e5m2.decode = e5m2_to_double;
        e5m2.bf16_inputs = true;
        mutants.emplace_back("e5m2 decode", e5m2);
        for (const auto& [what, e] : mutants) {
            CAPTURE(what);
            output_check mc = check_of(s, c, in, ref, emulate(c, in, e));
            apply_relative_tolerance(mc, &naive, 2.0, 1.0 / 1024, rms);
            CHECK_FALSE(mc.pass);
            CHECK(mc.reason.find("out of tolerance") != std::string::npos);
        }
    }
}

TEST_CASE("fp8_gemm's reference, split over threads in groups of rows, is the fp64 reference of every row", "[suites][fp8]") {
    registry reg;
    const suite& s = fp8_suite(reg);
    const case_desc c = find_case(s, "M128:N384:K384");
    const auto in = inputs_of(s, c, 3);
    const auto ref = s.reference(c, in);
    references::fp8_gemm_operands op;
    op.a = reinterpret_cast<const std::uint8_t*>(in[0].data.data());
    op.a_scale = reinterpret_cast<const float*>(in[1].data.data());
    op.b = reinterpret_cast<const std::uint8_t*>(in[2].data.data());
    op.b_scale = reinterpret_cast<const float*>(in[3].data.data());
    op.m = 128;
    op.n = 384;
    op.k = 384;
    std::vector<std::size_t> rows(128);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::vector<double> d(128 * 384);
    references::fp8_block_gemm_rows(op, references::fp8_dequantize_b(op), rows, d.data());
    REQUIRE(ref[0].size() == d.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < d.size(); ++i) differ += ref[0][i] != d[i];
    CHECK(differ == 0);
}

TEST_CASE("fp8_gemm above the verification budget checks a stated sample of rows", "[suites][fp8]") {
    registry reg;
    const suite& s = fp8_suite(reg);
    case_desc c = shape_case(s, 64, 32, 256);
    c.params["verification_macs"] = 65536;  // 64 x 32 x 256 = 524288 multiply-adds: sampled
    const auto in = inputs_of(s, c, 5);
    const auto ref = s.reference(c, in);
    std::set<std::size_t> rows;
    for (std::size_t r = 0; r < 64; ++r) {
        if (!std::isnan(ref[0][r * 32])) rows.insert(r);
    }
    CHECK(rows.size() == 16);  // max(16, 65536 / (32 x 256) = 8)
    for (std::size_t r : {0, 1, 62, 63}) CHECK(rows.count(r));
    host_tensor out = emulate(c, in, emulation{});
    const output_check good = check_of(s, c, in, ref, out);
    CHECK(good.pass);
    REQUIRE(good.coverage.has_value());
    CHECK(good.coverage->checked == 16);
    CHECK(good.coverage->total == 64);
    CHECK(good.coverage->which.size() == 16);
    CHECK(good.stats.checked == 16 * 32);
    // A wrong element in a sampled row fails, and the mismatch names its place in the whole D.
    const std::size_t bad_row = *std::next(rows.begin(), 5);
    out.set(bad_row * 32 + 7, out.get(bad_row * 32 + 7) * 3 + 1);
    const output_check bad = check_of(s, c, in, ref, out);
    CHECK_FALSE(bad.pass);
    REQUIRE_FALSE(bad.stats.first.empty());
    CHECK(bad.stats.first[0].index == bad_row * 32 + 7);
}

TEST_CASE("every fp8_gemm variant passes every untimed case it runs, with the quantization figure attached", "[gpu][fp8]") {
    FUSEBENCH_REQUIRE_GPU();
    registry reg;
    register_fp8_gemm(reg);
    const device_info dev = query_device(0);
    const bool hopper = dev.cc_major == 9 && dev.cc_minor == 0;
    std::size_t naive_passes = 0, peer_runs = 0, sampled = 0;
    std::map<std::string, std::size_t> wgmma_passes;  // per configuration
    for (const auto& r : verify_untimed_cases(reg, "fp8_gemm")) {
        CAPTURE(r.c.name, r.variant, r.reason);
        if (r.result == outcome::skipped) {
            // The baseline runs everywhere; wgmma_block runs every shape on Hopper.
            CHECK((r.variant == "cublaslt_fp8" || (r.variant == "wgmma_block" && !hopper)));
            continue;
        }
        CHECK(r.result == outcome::pass);
        REQUIRE(r.correctness.has_value());
        CHECK(r.correctness->deterministic == true);
        REQUIRE(r.correctness->outputs.size() >= 1);
        const auto& d = r.correctness->outputs[0];
        CHECK(d.figures.count("quant_rel_l2") == 1);
        CHECK(d.figures.count("quant_cosine") == 1);
        sampled += d.coverage.has_value();
        if (r.variant == "naive") naive_passes += r.result == outcome::pass;
        if (r.variant == "cublaslt_fp8") ++peer_runs;
        if (r.variant == "wgmma_block") wgmma_passes[r.config] += r.result == outcome::pass;
    }
    CHECK(naive_passes >= 9);
    if (hopper) {  // every configuration, every untimed case, ragged M, N and K included
        for (const char* cfg : {"c1_overlap", "c1", "c1_direct", "c2", "c2_sms", "c2_sms_overlap", "c1_overlap_serp",
                                "c1_overlap_stagger", "c1_n192", "c1_n192_overlap", "c1_n192_overlap_serp", "c1_n192_overlap_sk",
                                "c1_n256_overlap", "c1_n256_overlap_la", "c1_n144", "c1_n144_overlap", "c1_n192_mc2", "c1_n144_mc1x2",
                                "c1_n192_pf4"}) {
            CAPTURE(cfg);
            CHECK(wgmma_passes[cfg] == naive_passes);
        }
    }
    CHECK(sampled >= 1);  // M1000:N4096:K4096 is above the budget
    if (dev.cc_major == 9) CHECK(peer_runs >= 4);  // Hopper: cuBLASLt's block-scaled FP8
}
