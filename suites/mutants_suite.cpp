// The verifier self-test: deliberately broken copies of the real kernels (kernels/mutants), each
// declaring the check of the harness that must flag it, next to the real variants of their
// family, which must pass on the same cases. Not part of the default run:
// `fusebench run --suite mutants` prints the catch rate and exits 1 when a mutant slips through.
//
// Cases, input generators, references and correctness checks are the real suites' own, copied out
// of a private registry; a case belongs to one family (case name "<family suite>/<real case
// name>", parameter "family"), and each variant runs only on its family's cases (mutants only on
// the cases their bug needs), so the others show as skipped with that reason.

#include "harness/check.hpp"
#include "kernels/attention/attention.hpp"
#include "kernels/mutants/attention_fp8_mutants.hpp"
#include "kernels/mutants/attention_mutants.hpp"
#include "kernels/mutants/fp8_gemm_mutants.hpp"
#include "kernels/mutants/mutants.hpp"
#include "suites/suite_util.hpp"
#include "suites/suites.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusebench {
namespace {

namespace mk = kernels::mutants;

enum class family : int { glu = 0, rmsnorm = 1, softmax_topk = 2, attention = 3, fp8_gemm = 4, attention_fp8 = 5 };
constexpr std::array<const char*, 6> family_names{"glu", "rmsnorm", "softmax_topk", "attention", "fp8_gemm", "attention_fp8"};

const char* name_of(family f) { return family_names[static_cast<std::size_t>(f)]; }

family family_of(const case_desc& c) {
    const double f = c.param("family", -1);
    if (f == 0) return family::glu;
    if (f == 1) return family::rmsnorm;
    if (f == 2) return family::softmax_topk;
    if (f == 3) return family::attention;
    if (f == 4) return family::fp8_gemm;
    if (f == 5) return family::attention_fp8;
    throw std::invalid_argument("mutants: case '" + c.name + "' names no family");
}

// The real suites, as registered: their cases, generators, references and checks are reused.
struct real_suites {
    std::array<suite, 6> by_family;
    const suite& of(family f) const { return by_family[static_cast<std::size_t>(f)]; }
    const suite& of(const case_desc& c) const { return of(family_of(c)); }
};

std::shared_ptr<const real_suites> load_real_suites() {
    registry reg;
    register_glu(reg);
    register_rmsnorm(reg);
    register_softmax_topk(reg);
    register_attention(reg);  // attention and attention_fp8
    register_fp8_gemm(reg);
    auto out = std::make_shared<real_suites>();
    for (family f : {family::glu, family::rmsnorm, family::softmax_topk, family::attention, family::fp8_gemm,
                     family::attention_fp8}) {
        const suite* s = reg.find(name_of(f));
        if (!s) throw std::logic_error(std::string("mutants: the ") + name_of(f) + " suite is not registered");
        out->by_family[static_cast<std::size_t>(f)] = *s;
    }
    return out;
}

std::string case_key(const case_desc& c) { return c.name + " " + std::string(dtype_name(c.type)); }

// A real case of family f, renamed "<family>/<name>". `dims` (when given) replaces the real
// dimensions, for a shape the real suite does not list.
case_desc real_case(const real_suites& real, family f, const std::string& name, dtype t, bool quick, bool timed,
                    const std::map<std::string, std::int64_t>& dims = {}, const std::string& new_name = {}) {
    for (auto& c : real.of(f).cases()) {
        if (c.name != name || c.type != t) continue;
        case_desc m = c;
        m.name = std::string(name_of(f)) + "/" + (new_name.empty() ? name : new_name);
        for (const auto& [k, v] : dims) m.dims.at(k) = v;
        m.params["family"] = static_cast<double>(f);
        m.quick = quick;
        m.timed = timed;
        return m;
    }
    throw std::logic_error(std::string("mutants: the ") + name_of(f) + " suite has no case '" + name + "' (" +
                           std::string(dtype_name(t)) + ")");
}

// Small-to-medium shapes, untimed, except the one the speed-of-light guard needs (its traffic
// model must exceed 4x the L2: 587 MB for the naive GLU on 4096 x 14336 bf16). The case of the
// illegal-address mutant is last: nothing can run after it in the same process.
std::vector<case_desc> mutant_cases(const real_suites& real) {
    const auto f32 = dtype::f32, bf16 = dtype::bf16, f16 = dtype::f16;
    const auto glu = family::glu, rms = family::rmsnorm, smx = family::softmax_topk, att = family::attention;
    const auto fp8 = family::fp8_gemm;
    const auto e4m3 = dtype::e4m3;
    return {
        real_case(real, glu, "swiglu:3x7", f32, true, false),
        real_case(real, glu, "swiglu:3x7", f32, true, false, {{"tokens", 257}, {"inter", 1031}}, "swiglu:257x1031"),
        real_case(real, glu, "swiglu:128x4096", f32, true, false),  // mutant 16: the run must go on after it
        real_case(real, glu, "swiglu:64x4096:tiny", f32, true, false),
        real_case(real, glu, "swiglu:4096x14336", bf16, false, true),
        real_case(real, rms, "13x4097", f32, true, false),
        real_case(real, rms, "13x4097", bf16, true, false),
        real_case(real, rms, "128x4096", f16, true, false),
        real_case(real, rms, "16x4096:near_fp16_max", f16, true, false),
        real_case(real, rms, "4096x4096", f32, true, false),
        real_case(real, smx, "6x32000:K10:huge", f32, true, false),
        real_case(real, smx, "6x32000:K10:huge", bf16, true, false),
        real_case(real, smx, "6x32000:K10:all_equal", f32, true, false),
        real_case(real, smx, "6x32000:K50:all_equal", bf16, true, false),
        real_case(real, smx, "1x50257:K1024:std10", f32, true, false),
        real_case(real, att, "b1h2s1000d128:causal", bf16, true, false),
        real_case(real, att, "b1h2s1000d128:causal", f16, true, false),
        real_case(real, att, "b1h4s1000d128:causal:large_logits", bf16, true, false),
        real_case(real, fp8, "M128:N384:K384", e4m3, true, false),
        real_case(real, fp8, "M17:N130:K300", e4m3, true, false),
        real_case(real, family::attention_fp8, "b1h2s1000d128:causal:fp8_qk", bf16, true, false),
        real_case(real, family::attention_fp8, "b2h8kv2s1000d128:causal:fp8_qk", bf16, true, false),
    };
}

// ------------------------------------------------------------------ launch bindings
std::size_t glu_elements(const case_desc& c) {
    return static_cast<std::size_t>(c.dim("tokens")) * static_cast<std::size_t>(c.dim("inter"));
}

using glu_launcher = void (*)(kernels::elem, const void*, const void*, void*, std::size_t, cudaStream_t);
std::function<void(const launch_args&)> bind_glu(glu_launcher f) {
    return [f](const launch_args& a) {
        f(to_kernel_elem(a.c.type), a.in[0], a.in[1], a.out[0], glu_elements(a.c), a.stream);
    };
}

using rms_launcher = void (*)(kernels::elem, const void*, const void*, const void*, void*, void*, std::size_t,
                              std::size_t, float, cudaStream_t);
std::function<void(const launch_args&)> bind_rms(rms_launcher f) {
    return [f](const launch_args& a) {
        f(to_kernel_elem(a.c.type), a.in[0], a.in[1], a.in[2], a.out[0], a.out[1],
          static_cast<std::size_t>(a.c.dim("tokens")), static_cast<std::size_t>(a.c.dim("hidden")),
          static_cast<float>(a.c.param("eps", 1e-6)), a.stream);
    };
}

using smx_launcher = void (*)(const kernels::softmax_topk_args&, void*, std::size_t, cudaStream_t);
std::function<void(const launch_args&)> bind_smx(smx_launcher f) {
    return [f](const launch_args& a) {
        const kernels::softmax_topk_args args{to_kernel_elem(a.c.type), a.in[0], static_cast<float*>(a.out[0]),
                                              static_cast<std::int32_t*>(a.out[1]), a.c.dim("rows"), a.c.dim("V"),
                                              a.c.dim("K")};
        f(args, a.workspace, a.workspace_bytes, a.stream);
    };
}

std::size_t smx_workspace(const case_desc& c) { return mk::softmax_topk_mutant_workspace_bytes(c.dim("rows"), c.dim("V")); }

using att_launcher = void (*)(const kernels::attention_shape&, kernels::elem, const void*, const void*, const void*,
                              void*, float*, cudaStream_t);
// An attention case's shape as the attention suite's launchers see it (scale 1 / sqrt(head_dim)).
kernels::attention_shape att_shape(const case_desc& c) {
    kernels::attention_shape s;
    s.batch = static_cast<int>(c.dim("batch"));
    s.heads_q = static_cast<int>(c.dim("heads_q"));
    s.heads_kv = static_cast<int>(c.dim("heads_kv"));
    s.seq_q = static_cast<int>(c.dim("seq_q"));
    s.seq_kv = static_cast<int>(c.dim("seq_kv"));
    s.head_dim = static_cast<int>(c.dim("head_dim"));
    s.causal = c.param("causal", 0) != 0;
    s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
    return s;
}
std::function<void(const launch_args&)> bind_att(att_launcher f) {
    return [f](const launch_args& a) {
        f(att_shape(a.c), to_kernel_elem(a.c.type), a.in[0], a.in[1], a.in[2], a.out[0], static_cast<float*>(a.out[1]), a.stream);
    };
}

using fp8_launcher = void (*)(const kernels::fp8_gemm_shape&, const std::uint8_t*, const float*, const std::uint8_t*,
                              const float*, void*, void*, std::size_t, cudaStream_t);
std::function<void(const launch_args&)> bind_fp8(fp8_launcher f) {
    return [f](const launch_args& a) {
        const kernels::fp8_gemm_shape s{static_cast<std::size_t>(a.c.dim("M")), static_cast<std::size_t>(a.c.dim("N")),
                                        static_cast<std::size_t>(a.c.dim("K"))};
        f(s, static_cast<const std::uint8_t*>(a.in[0]), static_cast<const float*>(a.in[1]), static_cast<const std::uint8_t*>(a.in[2]),
          static_cast<const float*>(a.in[3]), a.out[0], a.workspace, a.workspace_bytes, a.stream);
    };
}

// ------------------------------------------------------------------ variants
// The runner asks every variant's model on every case, also where it is skipped: a family's model
// reads dimensions that other families' cases do not have, so it answers zero there (the variant
// is skipped on those cases, and the runner's floor counts only variants that ran).
std::function<traffic_model(const case_desc&)> family_model(family f, std::function<traffic_model(const case_desc&)> m) {
    return [f, m = std::move(m)](const case_desc& c) { return family_of(c) == f ? m(c) : traffic_model{}; };
}

const variant& find_variant(const suite& s, const std::string& name) {
    for (const auto& v : s.variants) {
        if (v.name == name) return v;
    }
    throw std::logic_error("mutants: the " + s.name + " suite has no variant '" + name + "'");
}

// A real variant, renamed "<family>_<name>", restricted to its family's cases: the control that
// must pass where the mutants fail.
variant control(const real_suites& real, family f, const std::string& name) {
    variant v = find_variant(real.of(f), name);
    v.name = std::string(name_of(f)) + "_" + name;
    v.model = family_model(f, v.model);
    v.description = "control, the real " + std::string(name_of(f)) + " variant '" + name + "': " + v.description;
    auto inner = v.req.supports;
    v.req.supports = [f, inner](const case_desc& c) -> std::optional<std::string> {
        if (family_of(c) != f) return std::string("a ") + name_of(f) + " variant, and this case is a " + name_of(family_of(c)) + " case";
        return inner ? inner(c) : std::nullopt;
    };
    v.req.domain = std::string("the ") + name_of(f) + " cases" + (v.req.domain.empty() ? "" : "; " + v.req.domain);
    // A same-precision baseline is a control of the same family, renamed alike.
    if (!v.baseline_variant.empty()) v.baseline_variant = std::string(name_of(f)) + "_" + v.baseline_variant;
    return v;
}

struct mutant_spec {
    std::string name;
    family fam;
    std::string base;         // the real variant whose traffic model (and workspace) it keeps
    std::string description;  // the bug, and why the named check catches it
    std::string caught_by;    // keyword of the failure reason
    std::function<void(const launch_args&)> launch;
    std::vector<std::string> targets;  // case_key()s it runs on
    std::function<std::size_t(const case_desc&)> workspace_bytes = nullptr;
    bool keep_base_workspace = false;
};

variant make_mutant(const real_suites& real, mutant_spec m) {
    const variant& base = find_variant(real.of(m.fam), m.base);
    variant v;
    v.name = std::move(m.name);
    v.role = variant_role::fused;
    v.description = std::move(m.description);
    v.launch = std::move(m.launch);
    v.model = family_model(m.fam, base.model);
    v.workspace_bytes = m.keep_base_workspace ? base.workspace_bytes : std::move(m.workspace_bytes);
    v.must_be_caught_by = std::move(m.caught_by);
    // Judged as its base is: the same traits, the same-precision baseline (the control of that name),
    // the same compute capability.
    v.traits = base.traits;
    if (!base.baseline_variant.empty()) v.baseline_variant = std::string(name_of(m.fam)) + "_" + base.baseline_variant;
    v.req.min_compute_capability = base.req.min_compute_capability;
    std::string list;
    for (const auto& t : m.targets) list += (list.empty() ? "" : ", ") + t;
    v.req.domain = "the cases its bug needs: " + list;
    v.req.supports = [targets = std::move(m.targets), list](const case_desc& c) -> std::optional<std::string> {
        if (std::find(targets.begin(), targets.end(), case_key(c)) != targets.end()) return std::nullopt;
        return "a mutant that runs only on " + list;
    };
    return v;
}

std::vector<variant> mutant_variants(const real_suites& real) {
    const auto glu = family::glu, rms = family::rmsnorm, smx = family::softmax_topk, att = family::attention;
    const std::vector<std::string> glu_small{"glu/swiglu:3x7 fp32", "glu/swiglu:257x1031 fp32"};
    std::vector<mutant_spec> specs;
    specs.push_back({"glu_vec_no_tail", glu, "fused_vec",
                     "1. fused_vec without its scalar tail: the last n % 4 fp32 elements stay unwritten (poison check)",
                     "never written", bind_glu(mk::launch_glu_vec_no_tail), glu_small});
    specs.push_back({"rmsnorm_warp_drop_last_rows", rms, "fused_warp",
                     "2. warp per row on tokens / 4 blocks instead of rounding up: the last row (13 = 3 x 4 + 1) is "
                     "dropped (poison check)",
                     "never written", bind_rms(mk::launch_rmsnorm_warp_drop_last_rows),
                     {"rmsnorm/13x4097 fp32", "rmsnorm/13x4097 bf16"}});
    specs.push_back({"rmsnorm_block_wrong_stride", rms, "fused_block",
                     "3. fused_block reading rows at a pitch in 16-byte vectors instead of elements: right only for "
                     "one row (tolerance, and residual_out must be bit-exact)",
                     "out of tolerance", bind_rms(mk::launch_rmsnorm_block_wrong_stride),
                     {"rmsnorm/13x4097 fp32", "rmsnorm/4096x4096 fp32"}});
    specs.push_back({"softmax_topk_partial_write", smx, "naive",
                     "4. naive top-k whose final write has no stride loop: outputs k >= 256 of K = 1024 are never "
                     "written (poison check)",
                     "never written", bind_smx(mk::launch_softmax_topk_partial_write), {"softmax_topk/1x50257:K1024:std10 fp32"},
                     smx_workspace});
    specs.push_back({"glu_scalar_past_end", glu, "fused_scalar",
                     "5. fused_scalar with `i <= n`: writes one element past the end of y (guard band; "
                     "compute-sanitizer memcheck with FUSEBENCH_SANITIZE=1)",
                     "out-of-bounds write", bind_glu(mk::launch_glu_scalar_past_end), glu_small});
    specs.push_back({"glu_naive_gate_as_scratch", glu, "naive",
                     "6. naive GLU writing act(gate) over gate to save its workspace (input hash check)",
                     "modified its input", bind_glu(mk::launch_glu_naive_gate_as_scratch), glu_small});
    specs.push_back({"rmsnorm_block_no_gamma", rms, "fused_block",
                     "7. fused_block without the gamma multiply: right only for gamma = 1, and the generator's gamma "
                     "is 1 + N(0, 0.25) (tolerance)",
                     "out of tolerance", bind_rms(mk::launch_rmsnorm_block_no_gamma),
                     {"rmsnorm/13x4097 fp32", "rmsnorm/128x4096 fp16"}});
    specs.push_back({"softmax_topk_no_max", smx, "naive",
                     "8. naive softmax without the max subtraction: exp overflows on logits of 1e30, probabilities "
                     "become NaN (tolerance: NaN where the reference is finite)",
                     "out of tolerance", bind_smx(mk::launch_softmax_topk_no_max),
                     {"softmax_topk/6x32000:K10:huge fp32", "softmax_topk/6x32000:K10:huge bf16"}, smx_workspace});
    specs.push_back({"rmsnorm_block_fp16_accumulator", rms, "fused_block",
                     "9. fused_block summing squares in fp16: the sum of 4096 squares (~7e4 on random rows, ~1e12 "
                     "near fp16's max) overflows 65504, the scale becomes 0 (tolerance)",
                     "out of tolerance", bind_rms(mk::launch_rmsnorm_block_half_accumulator),
                     {"rmsnorm/128x4096 fp16", "rmsnorm/16x4096:near_fp16_max fp16"}});
    specs.push_back({"softmax_topk_argmax_repeats_index", smx, "naive",
                     "10. top-k by K rounds of arg-max that exclude only the previous winner: on tied logits two "
                     "indices alternate (the index check rejects duplicates)",
                     "duplicate index", bind_smx(mk::launch_softmax_topk_argmax_rounds),
                     {"softmax_topk/6x32000:K10:all_equal fp32", "softmax_topk/6x32000:K50:all_equal bf16"},
                     smx_workspace});
    specs.push_back({"rmsnorm_block_missing_sync", rms, "fused_block",
                     "11. fused_block whose block reduction lost its __syncthreads: warps read partials not yet "
                     "written, results vary run to run (determinism check; compute-sanitizer racecheck)",
                     "nondeterministic", bind_rms(mk::launch_rmsnorm_block_missing_sync), {"rmsnorm/4096x4096 fp32"}});
    specs.push_back({"glu_side_stream", glu, "fused_scalar",
                     "12. fused_scalar launched on a stream the launcher creates, never joined with the harness "
                     "stream (stream-order check on CUPTI records)",
                     "side stream", bind_glu(mk::launch_glu_side_stream), glu_small});
    specs.push_back({"glu_cached_by_output", glu, "fused_scalar",
                     "13. fused_scalar caching its result per output pointer: a second call on the same buffer "
                     "returns the first call's result whatever the inputs are now (decoy launch on other inputs)",
                     "stale result", bind_glu(mk::launch_glu_cached_by_output), glu_small});
    specs.push_back({"glu_flush_tiny_to_zero", glu, "fused_scalar",
                     "14. fused_scalar flushing fp32 results below FLT_MIN to zero, as -ftz=true does: the tiny case's "
                     "outputs (~1e-40) become 0 (tolerance scales with the output's RMS)",
                     "out of tolerance", bind_glu(mk::launch_glu_flush_tiny), {"glu/swiglu:64x4096:tiny fp32"}});
    specs.push_back({"glu_unreset_queue", glu, "fused_vec",
                     "15. persistent fused GLU taking tiles from a workspace counter that its reset pass clears "
                     "only on the workspace's first use: verified right (the harness poisons the workspace), then "
                     "every timed launch returns at once (speed-of-light guard)",
                     "faster than physics",
                     [](const launch_args& a) {
                         mk::launch_glu_unreset_queue(to_kernel_elem(a.c.type), a.in[0], a.in[1], a.out[0], a.workspace,
                                                      a.workspace_bytes, glu_elements(a.c), a.stream);
                     },
                     {"glu/swiglu:4096x14336 bf16"},
                     [](const case_desc&) { return mk::glu_unreset_queue_workspace_bytes(); }});
    const std::vector<std::string> att_cases{"attention/b1h2s1000d128:causal bf16", "attention/b1h2s1000d128:causal fp16"};
    specs.push_back({"attention_mask_off_by_one", att, "wmma",
                     "17. wmma attention whose causal diagonal is off by one: each row also sees the next key (the "
                     "tolerance: early rows, which see few keys, change most)",
                     "out of tolerance", bind_att(mk::launch_attention_mask_off_by_one), att_cases});
    specs.push_back({"attention_no_scale", att, "wmma",
                     "18. wmma attention without the 1/sqrt(d) scale: logits 11x too large for head_dim 128 (tolerance)",
                     "out of tolerance", bind_att(mk::launch_attention_no_scale), att_cases});
    specs.push_back({"attention_no_rescale", att, "wmma",
                     "19. wmma attention whose running max grows without rescaling the accumulator and the sum: "
                     "earlier KV tiles keep weights relative to a stale max (tolerance; needs more than one KV tile)",
                     "out of tolerance", bind_att(mk::launch_attention_no_rescale),
                     {"attention/b1h2s1000d128:causal bf16", "attention/b1h4s1000d128:causal:large_logits bf16"}});
    specs.push_back({"attention_p_fp8", att, "wmma",
                     "20. wmma attention rounding P to fp8 e4m3 before P V: 2^-4 relative error per probability, "
                     "about 16x the bf16/fp16 rounding (the baseline-relative tolerance)",
                     "out of tolerance", bind_att(mk::launch_attention_p_fp8), att_cases});
    specs.push_back({"attention_skip_partial_kv_tile", att, "wmma",
                     "21. wmma attention skipping the last partial KV tile (1000 keys = 7 tiles of 128 + 104): the "
                     "rows that see those keys miss them (tolerance)",
                     "out of tolerance", bind_att(mk::launch_attention_skip_partial_kv_tile), att_cases});
    // FP8 GEMM: the naive path with a broken dequantize step (its workspace, its model).
    const std::vector<std::string> fp8_cases{"fp8_gemm/M128:N384:K384 fp8_e4m3", "fp8_gemm/M17:N130:K300 fp8_e4m3"};
    auto fp8_mutant = [&](std::string name, std::string description, fp8_launcher f) {
        mutant_spec m{std::move(name), family::fp8_gemm, "naive", std::move(description), "out of tolerance", bind_fp8(f), fp8_cases};
        m.keep_base_workspace = true;
        specs.push_back(std::move(m));
    };
    fp8_mutant("fp8_gemm_per_tensor_scale",
               "22. naive FP8 GEMM applying one scale per tensor (the first block's) where 1x128 and 128x128 block scales "
               "are declared: the generator's blocks differ by up to 16x (tolerance)",
               mk::launch_fp8_gemm_per_tensor_scale);
    fp8_mutant("fp8_gemm_transposed_b_scale",
               "23. naive FP8 GEMM reading the weights' tile scales [N/128, K/128] in the other major order: 3x3 and 2x3 "
               "tile grids, each tile scaled by another tile's scale (tolerance)",
               mk::launch_fp8_gemm_transposed_b_scale);
    fp8_mutant("fp8_gemm_e5m2_decode",
               "24. naive FP8 GEMM decoding the E4M3 bytes as E5M2: every value off by a power of two or worse (tolerance)",
               mk::launch_fp8_gemm_e5m2_decode);
    // FP8 attention: the real wgmma_fp8qk launched with a wrong scale, judged as wgmma_fp8qk is (FP8 lse
    // bound, relative to naive_fp8).
    specs.push_back({"attention_fp8_scale_doubled", family::attention_fp8, "wgmma_fp8qk",
                     "25. wgmma_fp8qk with its effective scale doubled (2 * scale * q_scale * k_scale): every logit twice "
                     "its size, lse off by O(1) and O by far more than naive_fp8's error (tolerance)",
                     "out of tolerance",
                     [](const launch_args& a) {
                         const kernels::attention_shape s = att_shape(a.c);
                         // Inputs of an fp8_qk case: q, k, v, q codes, q scales, k codes, k scales, ...
                         mk::launch_attention_fp8_scale_doubled(
                             s, static_cast<const std::uint8_t*>(a.in[3]), static_cast<const float*>(a.in[4]),
                             static_cast<const std::uint8_t*>(a.in[5]), static_cast<const float*>(a.in[6]), a.in[2], a.out[0],
                             static_cast<float*>(a.out[1]), a.workspace, a.workspace_bytes, a.stream);
                     },
                     {"attention_fp8/b1h2s1000d128:causal:fp8_qk bf16", "attention_fp8/b2h8kv2s1000d128:causal:fp8_qk bf16"},
                     nullptr, true});
    // Last variant of an early case: it corrupts the CUDA context, and the run must go on past it
    // (crash isolation: a fresh worker process resumes at the next variant).
    specs.push_back({"glu_naive_null_workspace", glu, "naive",
                     "16. naive GLU bound without its workspace: the intermediate is written through a null pointer "
                     "(illegal address; the context is lost, crash isolation must carry the run on)",
                     "cudaErrorIllegalAddress",
                     [](const launch_args& a) {
                         mk::launch_glu_naive_unchecked_workspace(to_kernel_elem(a.c.type), a.in[0], a.in[1], a.out[0],
                                                                  a.workspace, glu_elements(a.c), a.stream);
                     },
                     {"glu/swiglu:128x4096 fp32"}});
    std::vector<variant> out;
    for (auto& m : specs) out.push_back(make_mutant(real, std::move(m)));
    return out;
}

}  // namespace

void register_mutants(registry& reg) {
    const std::shared_ptr<const real_suites> real = load_real_suites();
    suite s;
    s.name = "mutants";
    s.family = "verifier self-test";
    s.description =
        "deliberately broken copies of the real kernels (kernels/mutants), each declaring the check that must flag "
        "it, run next to the real variants of their family on the real suites' cases, generators and references";
    s.semantics =
        "a mutant counts as caught when it fails (or errors) with its declared keyword in the reason; the controls "
        "(the real variants) must pass. `fusebench run --suite mutants` prints the catch rate and exits 1 on a miss.";
    s.default_run = false;
    s.cases = [real] { return mutant_cases(*real); };
    s.input_specs = [real](const case_desc& c) { return real->of(c).input_specs(c); };
    s.output_specs = [real](const case_desc& c) { return real->of(c).output_specs(c); };
    s.generate = [real](const case_desc& c, const rng& r, std::vector<host_tensor>& in) { real->of(c).generate(c, r, in); };
    s.reference = [real](const case_desc& c, const std::vector<host_tensor>& in) { return real->of(c).reference(c, in); };
    // Each family's own judgement: its custom check, or the element-wise comparison with its tolerance.
    s.custom_check = [real](const check_input& in) {
        const suite& fs = real->of(in.c);
        if (fs.custom_check) return fs.custom_check(in);
        std::vector<output_check> checks;
        const auto specs = fs.output_specs(in.c);
        for (std::size_t o = 0; o < specs.size(); ++o) {
            checks.push_back(compare_elementwise(specs[o].name, specs[o].type, in.outputs[o].data.data(), in.reference[o],
                                                 fs.tolerance.for_type(specs[o].type)));
        }
        return checks;
    };
    // s.tolerance stays empty: the families' tolerances differ per dtype, and custom_check applies each.
    s.relative_tolerance = [real](const case_desc& c) {
        const suite& fs = real->of(c);
        return fs.relative_tolerance ? fs.relative_tolerance(c) : std::map<std::string, baseline_relative_tolerance>{};
    };

    s.variants.push_back(control(*real, family::glu, "naive"));
    s.variants.push_back(control(*real, family::glu, "fused_vec"));
    s.variants.push_back(control(*real, family::rmsnorm, "naive"));
    s.variants.push_back(control(*real, family::rmsnorm, "fused_block"));
    s.variants.push_back(control(*real, family::rmsnorm, "fused_vec"));
    s.variants.push_back(control(*real, family::softmax_topk, "naive"));
    s.variants.push_back(control(*real, family::softmax_topk, "fused_v1"));
    s.variants.push_back(control(*real, family::attention, "naive"));
    s.variants.push_back(control(*real, family::attention, "wmma"));
    s.variants.push_back(control(*real, family::fp8_gemm, "naive"));
    s.variants.push_back(control(*real, family::attention_fp8, "naive"));
    s.variants.push_back(control(*real, family::attention_fp8, "naive_fp8"));
    s.variants.push_back(control(*real, family::attention_fp8, "wgmma_fp8qk"));
    for (auto& v : mutant_variants(*real)) s.variants.push_back(std::move(v));
    reg.add(std::move(s));
}

}  // namespace fusebench
