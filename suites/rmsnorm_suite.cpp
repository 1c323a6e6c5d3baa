// Residual-add + RMSNorm suite, in fp32, fp16 and bf16. Binds kernels/rmsnorm (naive baseline,
// fused block-per-row, fused vectorized register-resident, fused warp-per-row) to
// references/rmsnorm_reference.

#include "harness/parallel.hpp"
#include "kernels/rmsnorm/rmsnorm.hpp"
#include "references/rmsnorm_reference.hpp"
#include "suites/suite_util.hpp"
#include "suites/suites.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fusebench {
namespace {

constexpr double default_eps = 1e-6;

std::size_t tokens_of(const case_desc& c) { return static_cast<std::size_t>(c.dim("tokens")); }
std::size_t hidden_of(const case_desc& c) { return static_cast<std::size_t>(c.dim("hidden")); }
bool in_place(const case_desc& c) { return c.param("inplace", 0) != 0; }
bool misaligned(const case_desc& c) { return c.param("misalign", 0) != 0; }

// Whether the launch can use 16-byte accesses: the runner's buffers are 16-byte aligned unless the
// case misaligns them, and the row pitch must keep every row on the 16-byte grid.
bool vectorizable(const case_desc& c) {
    return !misaligned(c) && hidden_of(c) % kernels::residual_rmsnorm_vector_width(to_kernel_elem(c.type)) == 0;
}

// Cases. Timed: every dtype at 4096 tokens over every hidden size (768..16384 and 4097, which is no
// multiple of any vector width), in-place at 4096 x {4096, 8192} for every dtype, and 1 / 128
// tokens (launch- and latency-bound) at small, middle and very wide rows. Verified only: the
// adversarial input kinds, tiny shapes, rows off the 16-byte grid, in-place on those.
std::vector<case_desc> rmsnorm_cases() {
    std::vector<case_desc> out;
    for (dtype t : {dtype::bf16, dtype::f16, dtype::f32}) {
        auto add = [&](std::int64_t tokens, std::int64_t hidden, const std::string& kind, bool inplace,
                       bool misalign, bool quick, bool timed) {
            case_desc c;
            c.name = std::to_string(tokens) + "x" + std::to_string(hidden) + (kind == "random" ? "" : ":" + kind) +
                     (misalign ? ":misaligned" : "") + (inplace ? ":inplace" : "");
            c.type = t;
            c.dims = {{"tokens", tokens}, {"hidden", hidden}};
            c.params = {{"eps", default_eps}, {"inplace", inplace ? 1.0 : 0.0}, {"misalign", misalign ? 1.0 : 0.0}};
            c.input_kind = kind;
            c.quick = quick;
            c.timed = timed;
            // Default run: in bf16 the production widths 768, 4096 and 8192, the ragged 4097, the
            // in-place 8192 and the 1- and 128-token rows at 4096; 4096x8192 in fp16 and 4096x4096
            // in fp32. The rest of the timed grid in --full; every verified-only case in both.
            const bool representative =
                t == dtype::bf16 ? (tokens == 4096 ? (hidden == 768 || hidden == 4096 || hidden == 4097 ||
                                                      (hidden == 8192 && (inplace || kind == "random")))
                                                   : (hidden == 4096 && !inplace))
                : t == dtype::f16 ? (tokens == 4096 && hidden == 8192 && !inplace)
                                  : (tokens == 4096 && hidden == 4096 && !inplace);
            c.full_only = timed && !representative;
            out.push_back(std::move(c));
        };
        for (std::int64_t h : {768, 2048, 4096, 5120, 8192, 16384, 4097}) add(4096, h, "random", false, false, false, true);
        for (std::int64_t h : {4096, 8192}) add(4096, h, "random", true, false, false, true);
        for (std::int64_t tokens : {1, 128}) {
            for (std::int64_t h : {768, 4096, 16384}) {
                add(tokens, h, "random", false, false, tokens == 128 && h == 4096, true);
            }
        }
        add(128, 4096, "random", true, false, t == dtype::bf16, true);

        add(1, 1, "random", false, false, true, false);
        add(3, 7, "random", false, false, true, false);
        add(5, 31, "random", true, false, false, false);
        add(13, 4097, "random", false, false, true, false);
        add(16, 4096, "zero_rows", false, false, true, false);
        add(16, 4096, "tiny_rows", false, false, false, false);
        add(16, 4096, "constant_rows", false, false, false, false);
        add(16, 4096, "near_fp16_max", false, false, true, false);
        add(16, 768, "near_fp16_max", false, false, false, false);
        add(16, 4096, "huge_element", false, false, false, false);
        add(9, 4096, "random", false, true, true, false);
        add(7, 4097, "random", true, true, false, false);
        add(9, 768, "random", false, true, false, false);
        add(9, 768, "random", true, false, false, false);
    }
    return out;
}

std::vector<std::int64_t> row_shape(const case_desc& c) { return {c.dim("tokens"), c.dim("hidden")}; }

std::size_t misalign_bytes(const case_desc& c) { return misaligned(c) ? dtype_size(c.type) : 0; }

std::vector<tensor_spec> rmsnorm_inputs(const case_desc& c) {
    const std::size_t m = misalign_bytes(c);
    return {{"x", c.type, row_shape(c), m, -1},
            {"residual", c.type, row_shape(c), m, -1},
            {"gamma", c.type, {c.dim("hidden")}, m, -1}};
}

std::vector<tensor_spec> rmsnorm_outputs(const case_desc& c) {
    const std::size_t m = misalign_bytes(c);
    const bool ip = in_place(c);
    return {{"y", c.type, row_shape(c), m, ip ? 0 : -1}, {"residual_out", c.type, row_shape(c), m, ip ? 1 : -1}};
}

// Element i of a stream is scale * rng.fork(name).normal(i): parallel and replayable from the seed.
// random: x ~ N(0, 1), residual ~ N(0, 4^2) (the residual stream is the larger of the two in a
// deep transformer), gamma ~ 1 + N(0, 0.5^2) (never all ones: a kernel that ignores it fails).
// zero_rows: every other row all zeros (mean square 0: eps keeps y finite, y = 0).
// tiny_rows: x, residual ~ 1e-3 N(0, 1): mean square ~ 1e-6 = eps, so eps sets the scale.
// constant_rows: row r is the constant 0.75 (r mod 7 - 3) + 0.125 (y = +-gamma / sqrt(1 + eps/c^2)).
// near_fp16_max: x, residual ~ U(-30000, 30000): residual_out stays finite in fp16 but its sum of
// squares (~1e9 per element) overflows fp16 by far, so only fp32 accumulation gets it right.
// huge_element: 1e-2 N(0, 1) rows with one element 30000: the rms is set by one element.
void rmsnorm_generate(const case_desc& c, const rng& r, std::vector<host_tensor>& in) {
    const rng x_rng = r.fork("x"), res_rng = r.fork("residual"), g_rng = r.fork("gamma"), k_rng = r.fork("kind");
    const std::size_t hidden = hidden_of(c), n = tokens_of(c) * hidden;
    const std::string& kind = c.input_kind;
    for (std::size_t j = 0; j < hidden; ++j) in[2].set(j, 1.0 + 0.5 * g_rng.normal(j));
    // The kind, once (a string comparison per element costs more than the random numbers).
    enum class kind_id { random, zero_rows, tiny_rows, constant_rows, near_fp16_max, huge_element };
    const kind_id k = kind == "zero_rows" ? kind_id::zero_rows
                      : kind == "tiny_rows" ? kind_id::tiny_rows
                      : kind == "constant_rows" ? kind_id::constant_rows
                      : kind == "near_fp16_max" ? kind_id::near_fp16_max
                      : kind == "huge_element" ? kind_id::huge_element
                                               : kind_id::random;
    parallel_normals(n, std::array<rng, 2>{x_rng, res_rng}, [&](std::size_t i, const std::array<double, 2>& z) {
        const std::size_t row = i / hidden, col = i % hidden;
        double x = z[0], res = 4.0 * z[1];
        switch (k) {
            case kind_id::zero_rows:
                if (row % 2 == 0) x = res = 0.0;
                break;
            case kind_id::tiny_rows:
                x *= 1e-3;
                res *= 0.25e-3;
                break;
            case kind_id::constant_rows:
                x = 0.75 * (static_cast<double>(row % 7) - 3.0) + 0.125;
                res = 0.0;
                break;
            case kind_id::near_fp16_max:
                x = 30000.0 * (2.0 * x_rng.uniform(i) - 1.0);
                res = 30000.0 * (2.0 * res_rng.uniform(i) - 1.0);
                break;
            case kind_id::huge_element:
                x *= 1e-2;
                res *= 0.25e-2;
                if (col == k_rng.bits(row) % hidden) x = 30000.0;
                break;
            case kind_id::random: break;
        }
        in[0].set(i, x);
        in[1].set(i, res);
    });
}

std::vector<std::vector<double>> rmsnorm_reference_outputs(const case_desc& c, const std::vector<host_tensor>& in) {
    const std::size_t tokens = tokens_of(c), hidden = hidden_of(c);
    std::vector<double> y(tokens * hidden), residual_out(tokens * hidden);
    const std::vector<double> gamma = in[2].to_double();
    const dtype t = c.type;
    const auto round_to_storage = [t](double v) { return round_to_dtype(v, t); };
    const double eps = c.param("eps", default_eps);
    parallel_for(
        tokens,
        [&](std::size_t b, std::size_t e) {
            const std::size_t first = b * hidden, count = (e - b) * hidden;
            std::vector<double> x(count), res(count);
            for (std::size_t i = 0; i < count; ++i) {
                x[i] = in[0].get(first + i);
                res[i] = in[1].get(first + i);
            }
            references::residual_rmsnorm_reference(x, res, gamma, hidden, eps, round_to_storage,
                                                   std::span<double>(y).subspan(first, count),
                                                   std::span<double>(residual_out).subspan(first, count));
        },
        std::max<std::size_t>(1, (std::size_t{1} << 16) / hidden));
    return {std::move(y), std::move(residual_out)};
}

// Tolerance for y (per element, relative; derivation in the comment at register_rmsnorm).
tolerance y_tolerance(dtype t) {
    const double unit_roundoff = t == dtype::f32 ? 0x1p-24 : t == dtype::f16 ? 0x1p-11 : 0x1p-8;
    return {unit_roundoff + 0x1p-17, 0.0, 1.0};
}

// residual_out must be bit-exact (see register_rmsnorm); y uses the per-dtype tolerance.
std::vector<output_check> rmsnorm_check(const check_input& in) {
    const dtype t = in.c.type;
    return {compare_elementwise("y", t, in.outputs[0].data.data(), in.reference[0], y_tolerance(t)),
            compare_elementwise("residual_out", t, in.outputs[1].data.data(), in.reference[1], {0.0, 0.0, 0.0})};
}

// Traffic in passes over [tokens, hidden] plus gamma once; flops: add, square-accumulate (2),
// two multiplies per element.
traffic_model passes(const case_desc& c, double reads, double writes) {
    const double n = static_cast<double>(tokens_of(c) * hidden_of(c));
    const double s = static_cast<double>(dtype_size(c.type));
    return {reads * n * s + static_cast<double>(hidden_of(c)) * s, writes * n * s, 5.0 * n};
}

using launcher = void (*)(kernels::elem, const void*, const void*, const void*, void*, void*, std::size_t,
                          std::size_t, float, cudaStream_t);

std::function<void(const launch_args&)> bind(launcher f) {
    return [f](const launch_args& a) {
        f(to_kernel_elem(a.c.type), a.in[0], a.in[1], a.in[2], a.out[0], a.out[1], tokens_of(a.c), hidden_of(a.c),
          static_cast<float>(a.c.param("eps", default_eps)), a.stream);
    };
}

std::optional<std::string> within(std::size_t max_hidden, const case_desc& c, const char* what) {
    if (hidden_of(c) <= max_hidden) return std::nullopt;
    return "hidden " + std::to_string(hidden_of(c)) + " > " + std::to_string(max_hidden) + ", the most " + what +
           (vectorizable(c) ? " holds with 16-byte accesses" : " holds with element accesses (row off the 16-byte grid)");
}

}  // namespace

// Shapes from the command line: tokens x hidden, in place or not; named as the built-in cases.
shape_support rmsnorm_shapes() {
    shape_support sh;
    sh.axes = {{"tokens", "rows (tokens)", 1, 2147483647, std::nullopt, ""},
               {"hidden", "hidden size (elements per row)", 1, 2147483647, std::nullopt, ""}};
    sh.options = {{"inplace", "write y over x and residual_out over residual", {"no", "yes"}}};
    sh.dtypes = {dtype::f32, dtype::bf16, dtype::f16};
    sh.default_dtypes = {dtype::bf16};
    sh.make_case = [](const user_shape& u, dtype t) {
        const bool inplace = u.options.at("inplace") == "yes";
        const std::int64_t tokens = u.dims.at("tokens"), hidden = u.dims.at("hidden");
        case_desc c;
        c.name = std::to_string(tokens) + "x" + std::to_string(hidden) + (inplace ? ":inplace" : "");
        c.type = t;
        c.dims = {{"tokens", tokens}, {"hidden", hidden}};
        c.params = {{"eps", default_eps}, {"inplace", inplace ? 1.0 : 0.0}, {"misalign", 0.0}};
        return c;
    };
    return sh;
}

void register_rmsnorm(registry& reg) {
    suite s;
    s.name = "rmsnorm";
    s.shapes = rmsnorm_shapes();
    s.family = "residual-add + RMSNorm";
    s.description =
        "residual_out = x + residual, rounded to the storage dtype; y = residual_out / sqrt(mean(residual_out^2) + "
        "eps) * gamma over rows of [tokens, hidden]; eps a parameter (default 1e-6). Sum of squares in fp32 (fp64 in "
        "the reference), over the rounded residual_out. Both y and residual_out are outputs; in-place cases write y "
        "over x and residual_out over residual.";
    s.semantics =
        "A row of zeros gives y = 0 (eps > 0 keeps the scale finite). The sum of squares is fp32, so fp16 rows whose "
        "squares overflow fp16 stay exact; a row whose fp32 sum of squares overflows (|residual_out| ~ 1e19) gets "
        "scale 0, unlike the fp64 reference. An infinite residual_out element makes its row's scale 0: y is NaN "
        "there and 0 elsewhere, as in the reference. NaN propagates to its whole row.";
    s.cases = rmsnorm_cases;
    s.input_specs = rmsnorm_inputs;
    s.output_specs = rmsnorm_outputs;
    s.generate = rmsnorm_generate;
    s.reference = rmsnorm_reference_outputs;
    // y: rtol = u + 2^-17, with u the storage unit roundoff (2^-8 bf16, 2^-11 fp16, 2^-24 fp32): one
    // rounding of the fp32 result to storage, plus the fp32 arithmetic, bounded by 2^-18: the sum of
    // squares is summed in chains of at most ~110 fp32 additions in every variant (<= 64 per thread,
    // 5 shuffle levels, <= 32 warp partials), ~110 u32 relative on the sum and half that on its
    // inverse square root, plus rsqrtf (2 ulp) and 4 roundings (mean, + eps, two products);
    // doubling it to 2^-17 covers the product of the two terms. The error is relative per
    // element (y_i = r_i * scale * gamma_i, every step multiplicative), so atol_scale is 0: only
    // the storage format's subnormal grain is absolute. The naive baseline rounds residual_out
    // exactly like the reference and passes under the same bound.
    // residual_out: bit-exact (custom_check). fp32 x + residual is one IEEE addition; for fp16/bf16
    // the fp32 sum rounded to 16 bits equals the correctly rounded sum because fp32 has at least
    // 2p + 2 bits for p = 11 and 8 (Figueroa 1995: double rounding is innocuous then).
    s.tolerance.per_dtype = {{dtype::f32, y_tolerance(dtype::f32)},
                             {dtype::bf16, y_tolerance(dtype::bf16)},
                             {dtype::f16, y_tolerance(dtype::f16)}};
    s.custom_check = rmsnorm_check;

    s.variants.push_back(variant{
        "naive", variant_role::baseline,
        "unfused: add kernel writes residual_out, block-per-row RMSNorm kernel reads it back (5 passes)",
        bind(kernels::launch_residual_rmsnorm_naive), [](const case_desc& c) { return passes(c, 3, 2); }, nullptr,
        {}});
    s.variants.push_back(variant{
        "fused_block", variant_role::fused,
        "v1: one 256-thread block per row, add + store + sum of squares in one loop, y from the L2-hot "
        "residual_out: 4 DRAM passes instead of 5",
        bind(kernels::launch_residual_rmsnorm_block), [](const case_desc& c) { return passes(c, 2, 2); }, nullptr,
        {}});
    s.variants.push_back(variant{
        "fused_vec", variant_role::fused,
        "v2: 16-byte accesses, the row held in registers (no read-back), warp shuffle + cross-warp reduction, "
        "gamma loaded with the row; element accesses when the row is off the 16-byte grid",
        bind(kernels::launch_residual_rmsnorm_vec), [](const case_desc& c) { return passes(c, 2, 2); }, nullptr,
        {0,
         [](const case_desc& c) {
             return within(kernels::residual_rmsnorm_vec_max_hidden(to_kernel_elem(c.type), vectorizable(c)), c,
                           "a 512-thread block");
         },
         "hidden <= 16384 with 16-byte accesses, <= 8192 with element accesses"}});
    s.variants.push_back(variant{
        "fused_warp", variant_role::fused,
        "v3: v2's data path with one warp per row: shuffle-only reduction, no block barrier, 4 rows per "
        "block, for small hidden",
        bind(kernels::launch_residual_rmsnorm_warp), [](const case_desc& c) { return passes(c, 2, 2); }, nullptr,
        {0,
         [](const case_desc& c) {
             return within(kernels::residual_rmsnorm_warp_max_hidden(to_kernel_elem(c.type), vectorizable(c)), c,
                           "one warp");
         },
         "hidden <= 256 x vector width (2048 fp16/bf16, 1024 fp32) with 16-byte accesses, <= 1024 otherwise"}});
    s.variants.push_back(variant{
        "fused_vec4", variant_role::fused,
        "v4: v2 with 4 accesses per thread (blocks of hidden / (4 x vector width) threads): 4 loads per operand "
        "in flight per thread, a quarter of the warps in the barrier, more registers per thread",
        bind(kernels::launch_residual_rmsnorm_vec4), [](const case_desc& c) { return passes(c, 2, 2); }, nullptr,
        {0,
         [](const case_desc& c) {
             return within(kernels::residual_rmsnorm_vec_max_hidden(to_kernel_elem(c.type), vectorizable(c)), c,
                           "a 512-thread block");
         },
         "hidden <= 16384 with 16-byte accesses, <= 8192 with element accesses"}});
    reg.add(std::move(s));
}

}  // namespace fusebench
