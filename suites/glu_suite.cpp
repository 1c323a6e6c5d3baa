// GLU suite: SwiGLU and GeGLU (tanh and erf), y = act(gate) * up, in fp32, fp16 and bf16.
// Binds kernels/glu (naive baseline, fused scalar, fused vectorized) to references/glu_reference.

#include "harness/parallel.hpp"
#include "kernels/glu/glu.hpp"
#include "references/glu_reference.hpp"
#include "suites/suite_util.hpp"
#include "suites/suites.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fusebench {
namespace {

struct activation_info {
    const char* name;  // case-name prefix
    kernels::glu_act kernel;
    references::glu_activation reference;
    double flops_per_element;  // act + multiply, counting exp/erfc/div as one operation each
};

constexpr std::array<activation_info, 3> activations{{
    {"swiglu", kernels::glu_act::silu, references::glu_activation::silu, 4},
    {"geglu_tanh", kernels::glu_act::gelu_tanh, references::glu_activation::gelu_tanh, 9},
    {"geglu_erf", kernels::glu_act::gelu_erf, references::glu_activation::gelu_erf, 5},
}};

const activation_info& activation_of(const case_desc& c) {
    return activations.at(static_cast<std::size_t>(c.param("act", 0)));
}

std::size_t elements(const case_desc& c) {
    return static_cast<std::size_t>(c.dim("tokens")) * static_cast<std::size_t>(c.dim("inter"));
}

// Case list: per activation and dtype, the LLaMA-style production shape, awkward shapes (1x1, 3x7,
// 4095x14337: odd sizes, tails that do not fill a vector), misaligned pointers (same offset on all
// three: vector head path; different offsets: scalar fallback) and an input kind of IEEE specials.
std::vector<case_desc> glu_cases() {
    std::vector<case_desc> out;
    for (std::size_t a = 0; a < activations.size(); ++a) {
        for (dtype t : {dtype::f32, dtype::bf16, dtype::f16}) {
            auto add = [&](std::int64_t tokens, std::int64_t inter, std::string kind, bool quick, bool timed,
                           double misalign = 0) {
                case_desc c;
                c.name = std::string(activations[a].name) + ":" + std::to_string(tokens) + "x" +
                         std::to_string(inter) + (kind == "random" ? "" : ":" + kind);
                c.type = t;
                c.dims = {{"tokens", tokens}, {"inter", inter}};
                c.params = {{"act", static_cast<double>(a)}, {"misalign", misalign}};
                c.input_kind = kind;
                c.quick = quick;
                c.timed = timed;
                // Default run: every shape of SwiGLU in bf16, the production shape in fp32 and
                // fp16 and for both GeGLUs in bf16; the rest of the timed grid in --full. Every
                // verified-only edge case runs in both.
                const bool representative = a == 0 ? (t == dtype::bf16 || (tokens == 4096 && inter == 14336))
                                                   : (t == dtype::bf16 && tokens == 4096 && inter == 14336);
                c.full_only = timed && !representative;
                out.push_back(std::move(c));
            };
            add(4096, 14336, "random", false, true);
            add(4095, 14337, "random", false, true);
            add(128, 4096, "random", true, true);
            add(1, 1, "random", true, false);
            add(3, 7, "random", true, false);
            add(3, 7, "misaligned", true, false, 1);
            add(257, 1031, "misaligned", false, false, 1);
            add(257, 1031, "mixed_misaligned", true, false, 2);
            add(7, 333, "specials", true, false);
            add(64, 4096, "tiny", false, false);
        }
    }
    return out;
}

std::vector<tensor_spec> glu_inputs(const case_desc& c) {
    const std::vector<std::int64_t> shape{c.dim("tokens"), c.dim("inter")};
    const auto mode = static_cast<int>(c.param("misalign", 0));
    const std::size_t el = dtype_size(c.type);
    // mode 1: every pointer one element past a 16-byte boundary; mode 2: gate only.
    return {{"gate", c.type, shape, mode ? el : 0, -1}, {"up", c.type, shape, mode == 1 ? el : 0, -1}};
}

std::vector<tensor_spec> glu_outputs(const case_desc& c) {
    const auto mode = static_cast<int>(c.param("misalign", 0));
    return {{"y", c.type, {c.dim("tokens"), c.dim("inter")}, mode == 1 ? dtype_size(c.type) : 0, -1}};
}

// gate ~ N(0, 2^2) and up ~ N(0, 1): activations cover the curved region and both tails.
// "specials": +-inf, NaN, values at the format's extremes, signed zeros and tiny values, mixed into
// random data. "tiny": all values scaled by 1e-3 of the format's smallest normal ratio so outputs
// are small: a kernel flushing them to zero must fail.
void glu_generate(const case_desc& c, const rng& r, std::vector<host_tensor>& in) {
    const rng g_rng = r.fork("gate"), u_rng = r.fork("up"), s_rng = r.fork("specials");
    const double big = std::sqrt(dtype_max_finite(c.type)) * 0.5;
    const double inf = std::numeric_limits<double>::infinity();
    const std::array<double, 10> specials{inf, -inf, std::numeric_limits<double>::quiet_NaN(), big, -big,
                                          0.0, -0.0, 1e-30, -88.0, 30.0};
    const double tiny_scale = c.input_kind == "tiny" ? (c.type == dtype::f16 ? 1e-3 : 1e-20) : 1.0;
    const bool with_specials = c.input_kind == "specials";
    parallel_normals(in[0].numel(), std::array<rng, 2>{g_rng, u_rng}, [&](std::size_t i, const std::array<double, 2>& z) {
        double g = 2.0 * z[0] * tiny_scale;
        double u = z[1] * tiny_scale;
        if (with_specials && s_rng.uniform(i) < 0.25) {
            g = specials[s_rng.bits(i) % specials.size()];
            if (s_rng.uniform(i + (1ull << 40)) < 0.3) u = specials[s_rng.bits(i + (1ull << 41)) % specials.size()];
        }
        in[0].set(i, g);
        in[1].set(i, u);
    });
}

std::vector<std::vector<double>> glu_reference_outputs(const case_desc& c, const std::vector<host_tensor>& in) {
    const std::size_t n = elements(c);
    std::vector<double> y(n);
    const auto act = activation_of(c).reference;
    parallel_for(n, [&](std::size_t b, std::size_t e) {
        Eigen::ArrayXd gate(static_cast<Eigen::Index>(e - b)), up(static_cast<Eigen::Index>(e - b));
        for (std::size_t i = b; i < e; ++i) {
            gate[static_cast<Eigen::Index>(i - b)] = in[0].get(i);
            up[static_cast<Eigen::Index>(i - b)] = in[1].get(i);
        }
        Eigen::Map<Eigen::ArrayXd> out(y.data() + b, static_cast<Eigen::Index>(e - b));
        // The kernels keep act(gate) in an fp32 register: the reference rounds it the same way.
        references::glu_reference(act, gate, up, out, [](double v) { return round_to_dtype(v, dtype::f32); });
    });
    return {std::move(y)};
}

traffic_model passes(const case_desc& c, double reads, double writes) {
    const double n = static_cast<double>(elements(c));
    const double s = static_cast<double>(dtype_size(c.type));
    return {reads * n * s, writes * n * s, n * activation_of(c).flops_per_element};
}

}  // namespace

// Shapes from the command line: tokens x inter, the activation as an option; named as the built-in
// cases, so a user shape that matches one compares against it.
shape_support glu_shapes() {
    shape_support sh;
    sh.axes = {{"tokens", "rows (tokens)", 1, 2147483647, std::nullopt, ""},
               {"inter", "intermediate size (elements per row of gate, up and y)", 1, 2147483647, std::nullopt, ""}};
    shape_option act{"act", "activation", {}};
    for (const auto& a : activations) act.values.emplace_back(a.name);
    sh.options = {act};
    sh.dtypes = {dtype::f32, dtype::bf16, dtype::f16};
    sh.default_dtypes = {dtype::bf16};
    sh.make_case = [](const user_shape& u, dtype t) {
        std::size_t a = 0;
        while (a + 1 < activations.size() && u.options.at("act") != activations[a].name) ++a;
        case_desc c;
        const std::int64_t tokens = u.dims.at("tokens"), inter = u.dims.at("inter");
        c.name = std::string(activations[a].name) + ":" + std::to_string(tokens) + "x" + std::to_string(inter);
        c.type = t;
        c.dims = {{"tokens", tokens}, {"inter", inter}};
        c.params = {{"act", static_cast<double>(a)}, {"misalign", 0.0}};
        return c;
    };
    return sh;
}

// The element-wise check: |y - ref| <= rtol |ref| + atol_scale rms(ref) + g / 2 |up_i| + g, g the
// dtype's smallest subnormal. The g / 2 |up_i| term: an implementation may round act(gate) to the
// storage dtype before the multiply (the naive baseline does), and below the dtype's smallest
// normal that rounding is absolute, up to g / 2, which the multiply scales by |up_i|; rtol covers
// it only where act(gate) is normal. In fp16 (g = 6e-8) gelu(gate) is subnormal for gate in about
// [-5.5, -4.1]: on a one-element case the RMS term is as small as the output, and the baseline
// failed 1x1 geglu_tanh with that error alone (H100, seed 7624762632314889). In bf16 and fp32 the
// term is below 1e-38 |up_i|. A non-finite up leaves a non-finite reference, judged by position.
std::vector<output_check> glu_check(const check_input& in, const tolerance& tol) {
    const auto& ref = in.reference[0];
    const host_tensor& up = in.inputs[1];
    const double rms_term = tol.atol_scale * finite_rms(ref);
    const double half_grain = 0.5 * dtype_min_subnormal(in.c.type);
    auto bound = [&](std::size_t i) {
        const double u = std::abs(up.get(i));
        return rms_term + (std::isfinite(u) ? half_grain * u : 0.0);
    };
    return {compare_elementwise_bounded("y", in.c.type, in.outputs[0].data.data(), ref, tol.rtol, bound, tol.subnormal_ulps)};
}

void register_glu(registry& reg) {
    suite s;
    s.name = "glu";
    s.family = "gated linear unit (SwiGLU, GeGLU)";
    s.description =
        "y = act(gate) * up element-wise over [tokens, inter]; act = silu (SwiGLU), gelu tanh "
        "approximation or gelu erf (GeGLU). fp32 math; y rounded to the storage dtype. gelu erf at 16-bit "
        "storage evaluates erfc by a short form (kernels/common/gelu.cuh, relative error at most 1.21e-5), in fp32 by erfcf.";
    s.semantics =
        "silu(x) = x / (1 + exp(-x)); gelu_tanh(x) = x / (1 + exp(-2u)), u = sqrt(2/pi)(x + 0.044715x^3); "
        "gelu_erf(x) = 0.5 x erfc(-x/sqrt(2)). act(gate) is an fp32 intermediate (so an activation below "
        "fp32's range is 0 and 0 * inf = NaN). IEEE specials follow these formulas (act(-inf) = NaN, "
        "act(+inf) = +inf, NaN propagates); results that overflow the storage dtype are +-inf.";
    s.cases = glu_cases;
    s.shapes = glu_shapes();
    s.input_specs = glu_inputs;
    s.output_specs = glu_outputs;
    s.generate = glu_generate;
    s.reference = glu_reference_outputs;
    // rtol: twice the format's half-ulp (2^-8 bf16, 2^-11 fp16) so the baseline, which rounds the
    // intermediate once more, still fits; fp32: a few ulps of expf/erfcf. atol_scale: 1e-6 of the
    // output RMS, so zeroed small outputs fail. custom_check (glu_check) adds the intermediate's
    // subnormal rounding times |up| per element.
    s.tolerance.per_dtype = {{dtype::f32, {1e-5, 1e-6, 1}},
                             {dtype::bf16, {1e-2, 1e-6, 1}},
                             {dtype::f16, {2e-3, 1e-6, 1}}};
    s.custom_check = [policy = s.tolerance](const check_input& in) { return glu_check(in, policy.for_type(in.c.type)); };

    auto ptrs = [](const launch_args& a) {
        return std::array<const void*, 3>{a.in[0], a.in[1], a.out[0]};
    };
    s.variants.push_back(variant{
        "naive", variant_role::baseline,
        "unfused: activation kernel writes act(gate) in the storage dtype, multiply kernel reads it back",
        [ptrs](const launch_args& a) {
            const auto p = ptrs(a);
            kernels::launch_glu_naive(activation_of(a.c).kernel, to_kernel_elem(a.c.type), p[0], p[1],
                                      const_cast<void*>(p[2]), a.workspace, elements(a.c), a.stream);
        },
        [](const case_desc& c) { return passes(c, 3, 2); },
        [](const case_desc& c) { return elements(c) * dtype_size(c.type); },
        {0,
         [](const case_desc& c) -> std::optional<std::string> {
             // fp16's range ends at 6e-8: act(gate) for gate <= -88 underflows to 0 there while the
             // fp32 intermediate keeps it, so act * inf gives NaN instead of inf. bf16 and fp32
             // keep fp32's exponent range and are unaffected.
             if (c.type == dtype::f16 && c.input_kind == "specials") {
                 return std::string("the fp16 intermediate underflows where fp32 does not (0 * inf = NaN on IEEE-special inputs)");
             }
             return std::nullopt;
         },
         "every case except fp16 IEEE-special inputs (its fp16 intermediate underflows to 0, and 0 * inf = NaN)"}});
    s.variants.push_back(variant{
        "fused_scalar", variant_role::fused,
        "v1: one element per thread, the activation stays in a register: 3 passes instead of 5",
        [ptrs](const launch_args& a) {
            const auto p = ptrs(a);
            kernels::launch_glu_fused_scalar(activation_of(a.c).kernel, to_kernel_elem(a.c.type), p[0], p[1],
                                             const_cast<void*>(p[2]), elements(a.c), a.stream);
        },
        [](const case_desc& c) { return passes(c, 2, 1); },
        nullptr,
        {}});
    s.variants.push_back(variant{
        "fused_vec", variant_role::fused,
        "v2: 16-byte loads/stores, 2 in flight per thread: 4-8x fewer memory instructions; scalar head "
        "and tail, scalar fallback when pointers are misaligned differently",
        [ptrs](const launch_args& a) {
            const auto p = ptrs(a);
            kernels::launch_glu_fused_vec(activation_of(a.c).kernel, to_kernel_elem(a.c.type), p[0], p[1],
                                          const_cast<void*>(p[2]), elements(a.c), a.stream);
        },
        [](const case_desc& c) { return passes(c, 2, 1); },
        nullptr,
        {}});
    reg.add(std::move(s));
}

}  // namespace fusebench
