// The registry: what a suite declares. Variants and suites are data (structs of values and
// std::function), not class hierarchies, so a test can build a private registry and a new family
// is one `register_<family>(registry&)` call.
#pragma once

#include "harness/check.hpp"
#include "harness/rng.hpp"
#include "harness/tensor.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fusebench {

// One point of a suite's case space: a shape, a dtype, parameters and an input kind. `name` is a
// report key together with suite, dtype and variant: keep it stable.
struct case_desc {
    std::string name;                         // e.g. "4096x14336" or "3x7:misaligned"
    dtype type = dtype::f32;                  // the case's element type
    std::map<std::string, std::int64_t> dims; // e.g. {"tokens", 4096}, {"inter", 14336}
    std::map<std::string, double> params;     // e.g. {"eps", 1e-6}
    std::string input_kind = "random";        // "random" or the name of an adversarial generator
    bool quick = false;                       // part of the --quick selection
    bool timed = true;                        // timed after verification (small edge cases are not)
    // Part of the --full sweep only (a shape the default run's other cases already represent);
    // also selected when --case names it.
    bool full_only = false;

    std::int64_t dim(const std::string& key) const;     // throws std::out_of_range naming the key
    double param(const std::string& key, double fallback) const;
};

// peer: a vendor library's implementation of the operation (cuDNN, cuBLASLt), shown in tables and
// compared, never the baseline that speedups are relative to.
enum class variant_role { fused, baseline, peer };

// The unit that executes a model's flops: what "% of ceiling" compares against (the measured
// ceiling of that unit) and what the speed-of-light guard's compute term divides by (its peak).
// `any`: the fastest unit the device has (a sound, loose bound for elementwise work).
// tensor_tf32: fp32 operands rounded to TF32 on the tensor cores (no ceiling is measured for it: its
// % of ceiling is null; the speed-of-light guard uses half the 16-bit dense peak, TF32's rate on sm_80 and sm_90).
enum class compute_unit { any, fp32, tensor_bf16, tensor_fp16, tensor_fp8, tensor_tf32 };
const char* to_string(compute_unit u) noexcept;

// Model of the compulsory traffic and work of one launch of a variant on a case.
struct traffic_model {
    double bytes_read = 0;     // [bytes]
    double bytes_written = 0;  // [bytes]
    double flops = 0;          // [floating-point operations]
    compute_unit unit = compute_unit::any;
};

// What a launch function receives. Pointers follow the order of the suite's input_specs and
// output_specs. Launchers never synchronize.
struct launch_args {
    const case_desc& c;
    std::span<const void* const> in;
    std::span<void* const> out;
    void* workspace = nullptr;      // scratch from variant::workspace_bytes, contents undefined
    std::size_t workspace_bytes = 0;
    cudaStream_t stream = nullptr;
    std::string_view config = {};   // the tuning configuration this launch runs (empty: none)
};

// A tuning configuration of a variant (tile sizes, stages, warp split): verified and timed as its
// own result, named in the report (`config`), selected with --config; the table shows the best
// configuration of each case.
// A configuration may narrow or change what its entry declares: a tile size can change the shapes
// a kernel takes, the workspace it needs, or where it is worth timing. Each override, when set,
// replaces the variant's own for this configuration's entry only.
struct variant_config {
    std::string name;         // stable report key, e.g. "V0" or "bq128_bkv64_s2"
    std::string description;  // what it sets
    // nullopt when the case is in this configuration's domain, else the reason (as
    // requirements::supports); empty: the variant's.
    std::function<std::optional<std::string>(const case_desc&)> supports = {};
    std::string domain = {};                                             // empty: the variant's
    std::function<std::size_t(const case_desc&)> workspace_bytes = {};  // empty: the variant's
};

struct requirements {
    int min_compute_capability = 0;  // e.g. 90 for sm_90
    // nullopt when the case is in the variant's domain, else the reason it is not (reported as
    // `skipped` with that reason). Leave empty for "every case".
    std::function<std::optional<std::string>(const case_desc&)> supports;
    std::string domain;  // human description of the correct domain, for the report and `list`
};

struct variant {
    std::string name;  // stable report key: never rename, retire and add
    variant_role role = variant_role::fused;
    std::string description;  // what changed vs the previous version and what it should buy
    std::function<void(const launch_args&)> launch;
    std::function<traffic_model(const case_desc&)> model;
    std::function<std::size_t(const case_desc&)> workspace_bytes;  // optional
    requirements req;
    // Two runs on the same inputs must agree bitwise unless the variant declares otherwise (for
    // example atomics in a reduction); a race then shows up as a failure, not a footnote.
    bool may_be_nondeterministic = false;
    // Verifier self-test only (the mutants suite): the check that must flag this deliberately
    // broken variant, as a keyword of the failure reason ("never written", "out-of-bounds write",
    // "modified its input", "out of tolerance", "nondeterministic", "faster than physics", ...).
    // Empty for real variants.
    std::string must_be_caught_by;
    // Part of the --full sweep only (an earlier version kept for comparison tables); also
    // selected when --variant names it.
    bool full_only = false;
    // Tuning configurations the variant declares; registration expands the variant into one entry
    // per configuration (same name, `config` set, the launch receiving it in launch_args::config).
    std::vector<variant_config> configs;
    std::string config;  // on an expanded entry: its configuration
    // The same-precision baseline that judges this variant under the suite's baseline-relative
    // tolerance: the name of another variant of the suite (without configurations). Empty: the
    // suite's baseline (suite::baseline()). A variant whose arithmetic differs in precision from
    // the suite's baseline (FP8 scores against the bf16 naive path) names a baseline of its own
    // precision, so that its budget is that path's error on the same case, not a tighter one it
    // cannot meet or a looser one it need not. The runner verifies the named variant before this
    // one on every case and selects it with this one; the report records which baseline judged
    // each output (relative_to_baseline.baseline).
    std::string baseline_variant;
    // Declarations in the suite's own vocabulary that its custom_check reads through
    // check_input::v, for example attention's "fp8_accumulated_scores" (Q K^T summed in the FP8
    // tensor cores' reduced-precision accumulator, which sets its element-wise lse bound).
    // Empty for most variants; the harness itself reads none.
    std::vector<std::string> traits;

    bool has_trait(std::string_view t) const {
        for (const auto& x : traits)
            if (x == t) return true;
        return false;
    }

    std::string label() const { return config.empty() ? name : name + "[" + config + "]"; }  // "name[config]"
};

// How outputs are judged. The default compares every output element-wise against the fp64
// reference with the per-dtype tolerance; a suite with richer semantics (top-k index sets)
// supplies `custom_check`, which sees every output at once.
struct tolerance_policy {
    std::map<dtype, tolerance> per_dtype;  // keyed by the output tensor's dtype
    tolerance for_type(dtype t) const;     // throws if the suite declared none for t
};

// Tolerance relative to the baseline variant run in the same precision (the way attention
// libraries judge kernels): for every output a non-baseline variant's error against the fp64
// reference must satisfy
//   max_abs <= multiple * baseline max_abs + atol_scale * rms(reference)
//   rel_l2  <= multiple * baseline rel_l2  + atol_scale
// on top of the element-wise check, which still judges every variant, the baseline included.
// The runner verifies the baseline first and adds it to any selection of the suite's cases, so
// the check is always made; when the baseline itself fails or errors the check fails (there is no
// trustworthy budget to judge against).
struct baseline_relative_tolerance {
    double multiple = 2.0;
    double atol_scale = 0.0;
};

struct check_input {
    const case_desc& c;
    const std::vector<host_tensor>& inputs;
    const std::vector<std::vector<double>>& reference;  // one vector per output
    const std::vector<host_tensor>& outputs;            // what the variant wrote
    // The variant being judged (its traits), or nullptr (a test judging bare outputs): a check
    // that reads it treats nullptr as a variant without traits.
    const variant* v = nullptr;
};

// Shapes from the command line (`--shape`, `--shapes FILE`): a suite that takes them declares its
// named dimensions (axes), its named choices (options) and how to build a case from them.
struct shape_axis {
    std::string name;  // as in case_desc::dims, e.g. "tokens"
    std::string description;
    std::int64_t min = 1;
    std::int64_t max = 2147483647;
    // The value when the user leaves the axis out; nullopt: required, unless `derived` says how
    // make_case fills it from the others.
    std::optional<std::int64_t> fallback;
    std::string derived;  // e.g. "heads_q" (shown in `list`); empty: none
};
struct shape_option {
    std::string name;  // e.g. "act"
    std::string description;
    std::vector<std::string> values;  // the accepted values, the first is the default
};
// One user shape after parsing: every axis the user gave (others are left to make_case) and every
// option (defaults filled in).
struct user_shape {
    std::string suite;
    std::map<std::string, std::int64_t> dims;
    std::map<std::string, std::string> options;
    std::string text;  // as given, for messages
};
struct shape_support {
    std::vector<shape_axis> axes;
    std::vector<shape_option> options;
    std::vector<dtype> dtypes;          // the dtypes a user shape may take
    std::vector<dtype> default_dtypes;  // those it runs in without --dtype
    // nullopt when the shape is valid, else the reason (heads_q not a multiple of heads_kv, ...).
    std::function<std::optional<std::string>(const user_shape&)> check;
    // The case for a valid shape (timed, named as the suite names its own cases).
    std::function<case_desc(const user_shape&, dtype)> make_case;
};

struct suite {
    std::string name;         // CLI and report key, e.g. "glu"
    std::string family;       // e.g. "gated linear unit"
    std::string description;  // semantics, in a few lines
    std::string semantics;    // documented edge-case behaviour (NaN/Inf, ties, ...)
    bool default_run = true;  // part of `fusebench run` without --suite (mutants are not)

    std::function<std::vector<case_desc>()> cases;
    std::function<std::vector<tensor_spec>(const case_desc&)> input_specs;
    std::function<std::vector<tensor_spec>(const case_desc&)> output_specs;
    // Fills the inputs (already sized from input_specs) from the case's generator.
    std::function<void(const case_desc&, const rng&, std::vector<host_tensor>&)> generate;
    // fp64 expected outputs, one vector per output (numel elements each), in output order. A
    // suite with a custom_check may append auxiliary vectors after them (per-element quantities
    // the check reads, such as the terms of an error bound): the runner hands them to the check
    // and reads nothing else of them.
    std::function<std::vector<std::vector<double>>(const case_desc&, const std::vector<host_tensor>&)>
        reference;
    tolerance_policy tolerance;
    // Optional: the baseline-relative tolerance of each output (by name) on a case; outputs not
    // in the map are judged by the element-wise check alone.
    std::function<std::map<std::string, baseline_relative_tolerance>(const case_desc&)> relative_tolerance;
    // Optional: replaces the element-wise comparison (the runner still checks guards, poison,
    // input hashes and determinism).
    std::function<std::vector<output_check>(const check_input&)> custom_check;
    std::vector<variant> variants;
    std::optional<shape_support> shapes;  // set when the suite takes shapes from the command line

    const variant* baseline() const;  // the first variant with role baseline, or nullptr
    // The name of the variant that judges `v` under the baseline-relative tolerance:
    // v.baseline_variant, else the suite's baseline (empty when there is none).
    std::string judging_baseline(const variant& v) const;
};

// Suites in registration order. Explicit: `register_all(reg)` in suites/ adds each family.
class registry {
public:
    suite& add(suite s);  // throws std::invalid_argument on a duplicate or malformed suite
    // A variant of an already registered suite (a kernel of your own in a built-in family): fused
    // or peer, with a name the suite does not have yet; throws std::invalid_argument otherwise.
    variant& add_variant(const std::string& suite_name, variant v);
    const std::vector<suite>& suites() const noexcept { return m_suites; }
    const suite* find(const std::string& name) const noexcept;

private:
    std::vector<suite> m_suites;
};

}  // namespace fusebench
