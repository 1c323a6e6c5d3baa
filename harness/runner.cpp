#include "harness/runner.hpp"

#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/cupti_counters.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "harness/guard.hpp"
#include "harness/device_compare.hpp"
#include "harness/launch_checks.hpp"
#include "harness/nvtx.hpp"
#include "harness/parallel.hpp"
#include "harness/rng.hpp"
#include "harness/shapes.hpp"
#include "harness/stream_gate.hpp"

#include <cupti.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <atomic>

namespace fusebench {

const char* to_string(outcome o) noexcept {
    switch (o) {
        case outcome::pass: return "pass";
        case outcome::fail: return "fail";
        case outcome::error: return "error";
        case outcome::skipped: return "skipped";
    }
    return "?";
}

const char* to_string(variant_role r) noexcept {
    switch (r) {
        case variant_role::fused: return "fused";
        case variant_role::baseline: return "baseline";
        case variant_role::peer: return "peer";
    }
    return "?";
}

const char* to_string(compute_unit u) noexcept {
    switch (u) {
        case compute_unit::any: return "any";
        case compute_unit::fp32: return "fp32";
        case compute_unit::tensor_bf16: return "tensor_bf16";
        case compute_unit::tensor_fp16: return "tensor_fp16";
        case compute_unit::tensor_fp8: return "tensor_fp8";
        case compute_unit::tensor_tf32: return "tensor_tf32";
    }
    return "?";
}

std::vector<selection_item> select_work(const registry& reg, const selection_filter& f) {
    std::vector<const suite*> suites;
    if (f.suites.empty()) {
        for (const auto& s : reg.suites()) {
            if (s.default_run) suites.push_back(&s);
        }
    } else {
        for (const auto& name : f.suites) {
            const suite* s = reg.find(name);
            if (!s) {
                std::string known;
                for (const auto& k : reg.suites()) known += (known.empty() ? "" : ", ") + k.name;
                throw usage_error("unknown suite '" + name + "' (known: " + known + ")");
            }
            suites.push_back(s);
        }
    }
    for (const auto& vname : f.variants) {
        const bool found = std::any_of(suites.begin(), suites.end(), [&](const suite* s) {
            return std::any_of(s->variants.begin(), s->variants.end(),
                               [&](const variant& v) { return v.name == vname; });
        });
        if (!found) throw usage_error("no variant named '" + vname + "' in the selected suites (see `fusebench list`)");
    }
    // The selected variants of a suite; a suite that judges variants relative to its baseline
    // always verifies the baseline too.
    for (const auto& cname : f.configs) {
        const bool found = std::any_of(suites.begin(), suites.end(), [&](const suite* s) {
            return std::any_of(s->variants.begin(), s->variants.end(), [&](const variant& v) { return v.config == cname; });
        });
        if (!found) throw usage_error("no configuration named '" + cname + "' in the selected suites (see `fusebench list`)");
    }
    auto variants_of = [&](const suite& st) {
        std::vector<const variant*> vs;
        for (const auto& v : st.variants) {
            if (!f.configs.empty() && !v.config.empty() && std::find(f.configs.begin(), f.configs.end(), v.config) == f.configs.end()) {
                continue;
            }
            if (f.variants.empty() ? (f.full || !v.full_only)
                                   : std::find(f.variants.begin(), f.variants.end(), v.name) != f.variants.end()) {
                vs.push_back(&v);
            }
        }
        if (vs.empty()) return vs;
        if (st.relative_tolerance && !f.variants.empty()) {
            // With the suite's baselines, the same-precision baselines the selected variants name.
            std::set<std::string> named;
            for (const variant* v : vs) {
                if (!v->baseline_variant.empty()) named.insert(v->baseline_variant);
            }
            std::vector<const variant*> with;
            for (const auto& v : st.variants) {
                if (v.role == variant_role::baseline || named.count(v.name) ||
                    std::find(vs.begin(), vs.end(), &v) != vs.end()) {
                    with.push_back(&v);
                }
            }
            vs = std::move(with);
        }
        return vs;
    };
    std::vector<selection_item> out;
    if (!f.shapes.empty()) {
        // User shapes: the selection is these shapes, in the suites they name.
        std::vector<const suite*> candidates = suites;
        if (f.suites.empty()) {
            candidates.clear();
            for (const auto& s : reg.suites()) candidates.push_back(&s);
        }
        for (const auto& text : f.shapes) {
            const user_shape u = parse_user_shape(reg, candidates, text);
            const suite* s = reg.find(u.suite);
            std::vector<dtype> types = f.dtypes.empty() ? s->shapes->default_dtypes : f.dtypes;
            for (dtype t : types) {
                if (std::find(s->shapes->dtypes.begin(), s->shapes->dtypes.end(), t) == s->shapes->dtypes.end()) {
                    throw usage_error("--shape '" + text + "': suite '" + s->name + "' takes no " +
                                      std::string(dtype_name(t)) + " shapes (" + describe_shape_support(*s->shapes).back() + ")");
                }
            }
            std::vector<const variant*> vs = variants_of(*s);
            if (vs.empty()) throw usage_error("--shape '" + text + "': --variant selects no variant of suite '" + s->name + "'");
            for (dtype t : types) {
                case_desc c = s->shapes->make_case(u, t);
                // The inputs and outputs live on the host (generation, reference) and on the GPU:
                // refuse at once what no machine holds rather than fail after minutes of setup.
                long double bytes = 0;
                for (const auto& spec : s->input_specs(c)) bytes += static_cast<long double>(spec.numel()) * dtype_size(spec.type);
                for (const auto& spec : s->output_specs(c)) bytes += static_cast<long double>(spec.numel()) * dtype_size(spec.type);
                if (bytes > static_cast<long double>(std::size_t{1} << 40)) {
                    char buf[64];
                    std::snprintf(buf, sizeof buf, "%.0Lf GiB", bytes / (1024.0L * 1024.0L * 1024.0L));
                    throw usage_error("--shape '" + text + "': its " + std::string(dtype_name(t)) + " inputs and outputs take " +
                                      buf + ", more than any GPU holds (the limit here is 1 TiB)");
                }
                out.push_back({s, std::move(c), vs});
            }
        }
    }
    for (const suite* s : f.shapes.empty() ? suites : std::vector<const suite*>{}) {
        const std::vector<const variant*> vs = variants_of(*s);
        if (vs.empty()) continue;
        for (auto& c : s->cases()) {
            if (f.quick && !c.quick) continue;
            if (c.full_only && !f.full && f.cases.empty()) continue;
            if (!f.dtypes.empty() && std::find(f.dtypes.begin(), f.dtypes.end(), c.type) == f.dtypes.end()) continue;
            if (!f.cases.empty() && std::none_of(f.cases.begin(), f.cases.end(), [&](const std::string& sub) {
                    return c.name.find(sub) != std::string::npos;
                })) {
                continue;
            }
            out.push_back({s, std::move(c), vs});
        }
    }
    if (out.empty()) throw usage_error("the filters select no case (see `fusebench list`)");
    if (f.shard_count > 1) {
        std::vector<selection_item> mine;
        for (std::size_t k = 0; k < out.size(); ++k) {
            if (k % f.shard_count == f.shard_index) mine.push_back(std::move(out[k]));
        }
        if (mine.empty()) throw usage_error("shard " + std::to_string(f.shard_index + 1) + "/" + std::to_string(f.shard_count) + " is empty: fewer cases than shards");
        return mine;
    }
    return out;
}

void apply_ceilings(run_options& o, const nlohmann::json& ceilings, std::size_t l2_bytes) {
    auto value = [&](const char* k) { return ceiling_value(ceilings, k); };
    o.copy_gbps = value("copy_gbps");
    o.peak_tflops.reset();
    o.measured_tflops.clear();
    const std::pair<compute_unit, const char*> units[] = {
        {compute_unit::fp32, "fp32_tflops"}, {compute_unit::tensor_bf16, "bf16_tflops"}, {compute_unit::tensor_fp16, "fp16_tflops"}};
    for (const auto& [u, k] : units) {
        if (auto v = value(k)) {
            o.measured_tflops[u] = *v;
            o.peak_tflops = std::max(o.peak_tflops.value_or(0), *v);
        }
    }
    // FP8 has its own ceiling only: it is not part of `any` (the fastest of the rates above, which
    // places the ridge of models that name no unit).
    if (auto v = value("fp8_tflops")) o.measured_tflops[compute_unit::tensor_fp8] = *v;
    if (o.peak_tflops) o.measured_tflops[compute_unit::any] = *o.peak_tflops;
    o.sol = guard_rates_from_ceilings(ceilings, l2_bytes);
}

void apply_relative_tolerances(std::vector<output_check>& checks, const std::vector<output_check>* baseline,
                               const std::map<std::string, baseline_relative_tolerance>& relative,
                               const std::vector<tensor_spec>& out_specs, const std::vector<std::vector<double>>& reference,
                               const std::string& baseline_label) {
    for (auto& ch : checks) {
        const auto rel = relative.find(ch.output);
        if (rel == relative.end()) continue;
        const output_check* base = nullptr;
        if (baseline != nullptr) {
            for (const auto& b : *baseline) {
                if (b.output == ch.output) base = &b;
            }
        }
        double rms = 0, rounding = 0;
        for (std::size_t o = 0; o < out_specs.size() && o < reference.size(); ++o) {
            if (out_specs[o].name != ch.output) continue;
            rms = finite_rms(reference[o]);
            rounding = relative_rounding_term(out_specs[o].type, reference[o]);
        }
        apply_relative_tolerance(ch, base, rel->second.multiple, rel->second.atol_scale, rms, rounding);
        if (ch.relative) ch.relative->baseline = baseline_label;
    }
}

std::uint64_t case_seed(std::uint64_t run_seed, const std::string& suite_name, const case_desc& c) {
    return splitmix64(run_seed ^ hash_string(suite_name + "/" + c.name + "/" + std::string(dtype_name(c.type))));
}

namespace {

// A device allocation with guard bands: [guard][misalign][data][guard]. `guard` is
// guard_band_bytes, or 0 under FUSEBENCH_SANITIZE (see runner::impl).
struct guarded_tensor {
    tensor_spec spec;
    device_buffer buffer;
    std::size_t offset = 0;  // of the data [bytes]

    guarded_tensor(const tensor_spec& s, std::size_t guard)
        : spec(s), buffer(guard + s.misalign_bytes + s.bytes() + guard), offset(guard + s.misalign_bytes) {}
    void* data() const { return buffer.bytes_ptr() + offset; }
};

bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

std::string format_bytes_changed(std::size_t n, const char* where, const std::string& name) {
    return "'" + name + "': " + std::to_string(n) + " guard byte(s) changed " + where + " the buffer";
}

// End-to-end timing: at least 5 samples, then more while under 300 ms, at most 30.
constexpr std::size_t e2e_min_samples = 5, e2e_max_samples = 30;
constexpr int e2e_budget_ms = 300;

struct run_capture {
    std::vector<std::vector<std::byte>> outputs;  // whole guarded buffers, per output
};

// A case's host inputs and fp64 reference, with the time each took; `error` set when the
// generator or the reference threw (the case's variants are then reported as errors).
struct prepared_case {
    std::vector<host_tensor> inputs;
    std::vector<std::vector<double>> reference;
    std::map<std::string, double> phases;
    std::string error;
};

prepared_case prepare_case(const suite& s, const case_desc& c, std::uint64_t run_seed) {
    using clock = std::chrono::steady_clock;
    auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
    prepared_case p;
    try {
        auto t = clock::now();
        for (const auto& spec : s.input_specs(c)) p.inputs.emplace_back(spec);
        s.generate(c, rng(case_seed(run_seed, s.name, c)), p.inputs);
        p.phases["generate_inputs"] = since(t);
        t = clock::now();
        p.reference = s.reference(c, p.inputs);
        p.phases["reference"] = since(t);
    } catch (const std::exception& e) {
        p.error = std::string("input generation or reference failed: ") + e.what();
    }
    return p;
}

std::string case_key(const suite& s, const case_desc& c) {
    return s.name + "/" + c.name + "/" + std::string(dtype_name(c.type));
}

// The variants of an item outside their declared domain on its case: the reason, else nullopt.
std::optional<std::string> outside_domain(const variant& v, const case_desc& c, const device_info& dev) {
    if (v.req.min_compute_capability > dev.compute_capability()) {
        return "needs compute capability " + std::to_string(v.req.min_compute_capability) + ", device has " +
               std::to_string(dev.compute_capability());
    }
    if (v.req.supports) return v.req.supports(c);
    return std::nullopt;
}

}  // namespace

// The foreground's measurement window: waits for a domain check in progress on the warm-up thread
// to end (one at most, see runner::impl::measuring), and holds off the next until it closes.
class measurement_window {
public:
    measurement_window(std::mutex& quiet, std::atomic<int>& measuring) : m_measuring(measuring) {
        ++m_measuring;
        m_lock = std::unique_lock<std::mutex>(quiet);
    }
    ~measurement_window() {
        m_lock.unlock();
        --m_measuring;
    }
    measurement_window(const measurement_window&) = delete;
    measurement_window& operator=(const measurement_window&) = delete;

private:
    std::atomic<int>& m_measuring;
    std::unique_lock<std::mutex> m_lock;
};

struct runner::impl {
    cuda_stream stream;
    l2_flusher flusher;
    // CUPTI's id of `stream`, for the stream-order check; nullopt without a tracer.
    std::optional<std::uint32_t> stream_id;
    // FUSEBENCH_SANITIZE=1 (scripts/sanitize.sh): no guard bands, so every tensor ends where its
    // allocation ends and compute-sanitizer memcheck flags any access past it (the guard-band
    // check is then memcheck's job), and each variant is announced on stdout before it runs, so
    // the sanitizer's reports can be attributed to it.
    bool sanitize = env_flag("FUSEBENCH_SANITIZE");
    std::size_t guard() const noexcept { return sanitize ? 0 : guard_band_bytes; }
    // Held by the foreground while it measures (kernel timing, counters, e2e); the warm-up thread
    // (warm_domain_checks) takes it for each domain check, which may build a library plan or
    // launch a probe kernel that a timing window would otherwise record.
    std::mutex quiet;
    // Measurement windows wanted or open: the warm-up thread starts no check while it is non-zero
    // (std::mutex is not fair: without this it could take `quiet` again and again, one plan
    // build after another, while the foreground waits).
    std::atomic<int> measuring{0};
    std::atomic<bool> stop_warmup{false};
    std::thread warmup;  // joined by ~runner before the members it uses go
    // Cases' inputs and references being prepared in the background (runner::prefetch), by
    // case_key: the case running now and the next one at most.
    std::map<std::string, std::future<prepared_case>> pending;
    // The timer's reading of an empty kernel (timed_run::empty_kernel_stats), timed once per
    // process before the first variant, with the run's timer, mode and records.
    bool empty_kernel_timed = false;
    std::optional<sample_stats> empty_kernel;
    std::string empty_kernel_null_reason;
    explicit impl(const device_info& d) : flusher(d.l2_bytes, d.sm_count) {}
};

std::string classify_traffic(double ratio) {
    if (ratio > 1.15) return "excess_traffic";
    if (ratio < 0.9) return "below_model";
    return "ok";
}

runner::runner(const device_info& dev, run_options opts, measurement_tools tools)
    : m_dev(dev), m_opts(std::move(opts)), m_tools(std::move(tools)), m_impl(std::make_unique<impl>(dev)) {
    if (m_tools.tracer) {
        std::uint32_t id = 0;
        if (cuptiGetStreamIdEx(nullptr, m_impl->stream.get(), 0, &id) == CUPTI_SUCCESS) m_impl->stream_id = id;
    }
}

runner::~runner() {
    m_impl->stop_warmup = true;
    if (m_impl->warmup.joinable()) m_impl->warmup.join();
}

void runner::warm_domain_checks(std::vector<selection_item> items) {
    if (!m_opts.prefetch || m_impl->warmup.joinable()) return;
    m_impl->warmup = std::thread([this, items = std::move(items)] {
        // At normal priority: a check runs while the foreground may be waiting for it (at the
        // lowest priority, behind the comparison's threads, a cuDNN plan took several seconds).
        if (cudaSetDevice(m_dev.ordinal) != cudaSuccess) {
            (void)cudaGetLastError();
            return;
        }
        for (const auto& item : items) {
            for (const variant* v : item.variants) {
                while (m_impl->measuring.load() > 0 && !m_impl->stop_warmup) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                if (m_impl->stop_warmup) return;
                std::lock_guard<std::mutex> quiet(m_impl->quiet);
                try {
                    (void)outside_domain(*v, item.c, m_dev);  // asked again, from the caches, in run_item
                } catch (const std::exception&) {
                }
                (void)cudaGetLastError();
            }
        }
    });
}

void runner::prefetch(const selection_item& next) {
    const std::string key = case_key(*next.s, next.c);
    if (!m_opts.prefetch || m_context_lost || m_impl->pending.size() >= 2 || m_impl->pending.count(key)) return;
    if (std::none_of(next.variants.begin(), next.variants.end(),
                     [&](const variant* v) { return !outside_domain(*v, next.c, m_dev); })) {
        return;  // nothing will run on it
    }
    const suite* s = next.s;
    m_impl->pending[key] = std::async(std::launch::async, [s, c = next.c, seed = m_opts.seed] {
        // Below the foreground: two cores fewer and the lowest priority, so that the launches and
        // the host-side timing of the case running meanwhile are not held up by it.
        const std::size_t cpus = available_cpus();
        set_thread_parallelism(cpus > 2 ? cpus - 2 : 1);
        (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
        return prepare_case(*s, c, seed);
    });
}

std::vector<variant_result> runner::run_item(const selection_item& item) {
    const suite& s = *item.s;
    const case_desc& c = item.c;
    // This case's inputs and reference, if prefetch() started them.
    std::future<prepared_case> prefetched;
    if (const auto it = m_impl->pending.find(case_key(s, c)); it != m_impl->pending.end()) {
        prefetched = std::move(it->second);
        m_impl->pending.erase(it);
    }
    std::vector<variant_result> results;
    for (const variant* v : item.variants) {
        variant_result r;
        r.suite = s.name;
        r.c = c;
        r.variant = v->name;
        r.config = v->config;
        r.role = v->role;
        r.description = v->description;
        r.must_be_caught_by = v->must_be_caught_by;
        r.model = v->model(c);
        results.push_back(std::move(r));
    }
    auto all_error = [&](const std::string& why) {
        for (auto& r : results) {
            if (r.result == outcome::skipped && !r.reason.empty()) continue;
            r.result = outcome::error;
            r.reason = why;
        }
        return results;
    };
    if (m_context_lost) {
        for (auto& r : results) {
            r.result = outcome::skipped;
            r.reason = "not run: the CUDA context was lost earlier (" + m_context_lost_reason + ")";
        }
        return results;
    }

    // A case prepared in the background (runner::prefetch) is waited for first.
    using clock = std::chrono::steady_clock;
    auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
    std::optional<prepared_case> early;
    if (prefetched.valid()) {
        const auto t_wait = clock::now();
        early = prefetched.get();
        early->phases["prepare_wait"] = since(t_wait);
    }

    // Requirements first: a variant outside its declared domain is skipped with the reason.
    const auto t_domain = clock::now();
    std::vector<bool> runnable(item.variants.size(), true);
    for (std::size_t k = 0; k < item.variants.size(); ++k) {
        const variant& v = *item.variants[k];
        if (const auto why = outside_domain(v, c, m_dev)) {
            runnable[k] = false;
            results[k].result = outcome::skipped;
            results[k].reason = "outside declared domain: " + *why;
            continue;
        }
        // A mutant whose catching check cannot fire in this run is not run: it could only be
        // reported as missed.
        if (!v.must_be_caught_by.empty()) {
            active_checks ac;
            ac.timed_cold = !m_opts.verify_only && !m_opts.profile_once && m_opts.mode == cache_mode::cold && c.timed;
            ac.bandwidth_measured = m_opts.sol.read_gbps.has_value() && m_opts.sol.write_gbps.has_value();
            ac.model_bytes = results[k].model.bytes_read + results[k].model.bytes_written;
            ac.l2_bytes = m_dev.l2_bytes;
            ac.stream_order = m_tools.tracer && m_impl->stream_id;
            if (auto off = catching_check_off(v.must_be_caught_by, ac)) {
                runnable[k] = false;
                results[k].result = outcome::skipped;
                results[k].reason = "not run: the check that must catch this mutant is off in this run: " + *off;
            }
        }
    }
    const double domain_s = since(t_domain);
    if (std::none_of(runnable.begin(), runnable.end(), [](bool b) { return b; })) return results;

    // Inputs on the host from the case seed and the fp64 reference: prepared in the background
    // while the previous case ran (prefetch), or here.
    const auto in_specs = s.input_specs(c);
    const auto out_specs = s.output_specs(c);
    // Where the time goes (report: phase_seconds). The case's own phases (inputs, reference,
    // preparation wait, upload) go to the first variant run on it, the others to each variant.
    prepared_case prep;
    if (early) {
        prep = std::move(*early);
    } else {
        const auto t_wait = clock::now();
        prep = prepare_case(s, c, m_opts.seed);
        prep.phases["prepare_wait"] = since(t_wait);
    }
    prep.phases["domain_checks"] = domain_s;
    if (!prep.error.empty()) return all_error(prep.error);
    std::vector<host_tensor> inputs = std::move(prep.inputs);
    std::vector<std::vector<double>> reference = std::move(prep.reference);
    std::map<std::string, double> case_phases = std::move(prep.phases);
    if (reference.size() < out_specs.size()) {  // auxiliary vectors may follow the outputs'
        return all_error("reference returned " + std::to_string(reference.size()) + " outputs, suite declares " +
                         std::to_string(out_specs.size()));
    }

    cudaStream_t stream = m_impl->stream.get();
    std::vector<guarded_tensor> d_inputs;
    // Pristine device copies of the inputs: the decoy launch of each variant runs on the inputs
    // rotated by one element in the same buffers (see launch_checks.hpp), restored from here.
    std::vector<device_buffer> d_pristine;
    bool decoy_differs = false;
    for (const auto& t : inputs) decoy_differs = decoy_differs || rotation_changes(t.data, dtype_size(t.spec.type));
    const auto t_upload = clock::now();
    try {
        for (const auto& t : inputs) {
            d_inputs.emplace_back(t.spec, m_impl->guard());
            // Bytes around the data are defined too, for kernels that read whole aligned vectors.
            CUDA_CHECK(cudaMemset(d_inputs.back().buffer.get(), 0, d_inputs.back().buffer.size()));
            CUDA_CHECK(cudaMemcpy(d_inputs.back().data(), t.data.data(), t.data.size(), cudaMemcpyHostToDevice));
            d_pristine.emplace_back(t.data.size());
            if (!t.data.empty()) {
                CUDA_CHECK(cudaMemcpy(d_pristine.back().get(), d_inputs.back().data(), t.data.size(), cudaMemcpyDeviceToDevice));
            }
        }
    } catch (const cuda_error& e) {
        if (e.sticky()) {
            m_context_lost = true;
            m_context_lost_reason = e.what();
        }
        return all_error(std::string("uploading inputs failed: ") + e.what());
    }
    case_phases["upload"] = since(t_upload);
    bool case_phases_given = false;

    // Baselines first, then the variants that others name as their same-precision baseline: a
    // baseline-relative tolerance judges the others by their judging baseline's error.
    std::set<std::string> named_baselines;
    for (const variant* v : item.variants) {
        if (!v->baseline_variant.empty()) named_baselines.insert(v->baseline_variant);
    }
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < item.variants.size(); ++k) {
        if (item.variants[k]->role == variant_role::baseline) order.push_back(k);
    }
    for (std::size_t k = 0; k < item.variants.size(); ++k) {
        if (item.variants[k]->role != variant_role::baseline && named_baselines.count(item.variants[k]->name)) order.push_back(k);
    }
    for (std::size_t k = 0; k < item.variants.size(); ++k) {
        if (item.variants[k]->role != variant_role::baseline && !named_baselines.count(item.variants[k]->name)) order.push_back(k);
    }
    const std::map<std::string, baseline_relative_tolerance> relative =
        s.relative_tolerance ? s.relative_tolerance(c) : std::map<std::string, baseline_relative_tolerance>{};
    const variant_result* baseline_result = nullptr;
    // Results of the variants that judge others (named baselines), by variant name.
    std::map<std::string, const variant_result*> named_results;
    // The result that judges variant v: its named baseline's (nullptr when that one did not run on
    // this case), else the suite's baseline's.
    auto judge_of = [&](const variant& v) -> const variant_result* {
        if (v.baseline_variant.empty()) return baseline_result;
        const auto it = named_results.find(v.baseline_variant);
        return it == named_results.end() ? nullptr : it->second;
    };
    auto judge_name = [&](const variant& v) -> std::string {
        if (!v.baseline_variant.empty()) return v.baseline_variant;
        return baseline_result ? baseline_result->variant : std::string();
    };
    for (const std::size_t k : order) {
        if (!runnable[k]) continue;
        const variant& v = *item.variants[k];
        variant_result& r = results[k];
        const variant_result* const judge = judge_of(v);
        const std::string judge_label = judge_name(v);
        if (m_context_lost) {
            r.result = outcome::skipped;
            r.reason = "not run: the CUDA context was lost (" + m_context_lost_reason + ")";
            continue;
        }
        const auto t_verify = std::chrono::steady_clock::now();
        if (!case_phases_given) {
            r.phase_seconds = case_phases;
            case_phases_given = true;
        }
        double decoy_s = 0, compare_s = 0;
        std::optional<clock::time_point> t_timing, t_verified;
        if (m_impl->sanitize) {
            std::printf("fusebench-sanitize: variant %s/%s/%s/%s\n", s.name.c_str(), c.name.c_str(),
                        std::string(dtype_name(c.type)).c_str(), v.name.c_str());
            std::fflush(stdout);
        }
        correctness_block cb;
        try {
            std::vector<guarded_tensor> d_outputs;
            for (const auto& spec : out_specs) d_outputs.emplace_back(spec, m_impl->guard());
            const std::size_t ws_bytes = v.workspace_bytes ? v.workspace_bytes(c) : 0;
            device_buffer workspace(ws_bytes);
            std::vector<const void*> in_ptrs;
            for (auto& t : d_inputs) in_ptrs.push_back(t.data());
            std::vector<void*> out_ptrs;
            for (std::size_t o = 0; o < out_specs.size(); ++o) {
                out_ptrs.push_back(d_outputs[o].data());
                if (out_specs[o].alias_of_input >= 0) in_ptrs[static_cast<std::size_t>(out_specs[o].alias_of_input)] = d_outputs[o].data();
            }
            const launch_args args{c, in_ptrs, out_ptrs, workspace.get(), ws_bytes, stream};

            // Fills guards and poisons outputs (or loads the input an in-place output overwrites).
            auto prepare_outputs = [&](int run) {
                for (std::size_t o = 0; o < out_specs.size(); ++o) {
                    auto& d = d_outputs[o];
                    CUDA_CHECK(cudaMemsetAsync(d.buffer.get(), static_cast<int>(guard_fill), d.buffer.size(), stream));
                    if (out_specs[o].alias_of_input >= 0) {
                        const auto& src = d_inputs[static_cast<std::size_t>(out_specs[o].alias_of_input)];
                        CUDA_CHECK(cudaMemcpyAsync(d.data(), src.data(), out_specs[o].bytes(), cudaMemcpyDeviceToDevice, stream));
                    } else if (run >= 0) {
                        CUDA_CHECK(cudaMemsetAsync(d.data(), static_cast<int>(poison_fill[run]), out_specs[o].bytes(), stream));
                    }
                }
                if (ws_bytes && run >= 0) CUDA_CHECK(cudaMemsetAsync(workspace.get(), static_cast<int>(poison_fill[run]), ws_bytes, stream));
            };

            const std::string range_id = s.name + "/" + c.name + "/" + std::string(dtype_name(c.type)) + "/" + v.label();
            auto load_inputs = [&](bool rotated) {
                for (std::size_t i = 0; i < inputs.size(); ++i) {
                    const std::size_t bytes = inputs[i].data.size(), el = dtype_size(inputs[i].spec.type);
                    auto* dst = static_cast<std::byte*>(d_inputs[i].data());
                    const std::byte* src = d_pristine[i].bytes_ptr();
                    if (bytes == 0) continue;
                    if (rotated && bytes > el) {
                        CUDA_CHECK(cudaMemcpyAsync(dst, src + el, bytes - el, cudaMemcpyDeviceToDevice, stream));
                        CUDA_CHECK(cudaMemcpyAsync(dst + bytes - el, src, el, cudaMemcpyDeviceToDevice, stream));
                    } else {
                        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
                    }
                }
            };

            // Decoy launch: the inputs rotated by one element, the same buffers. Traced when CUPTI
            // is available, with the stream held until the launch call has returned, so work the
            // variant leaves unordered with the launch stream shows (stream-order check). Its
            // outputs are kept for the stale-result check; they are not compared with anything else.
            run_capture decoy;
            std::optional<std::string> side_stream;
            const auto t_decoy = clock::now();
            {
                load_inputs(true);
                const bool traced = m_tools.tracer && m_impl->stream_id;
                // An ungated launch first, on the same rotated inputs: the first launch of a
                // kernel loads its module (CUDA's lazy loading) and a library's first call on a
                // shape builds its plan, and either may wait for the stream, which the gate holds:
                // the traced launch would then sit out the gate's 250 ms every time. The stale-
                // result check is unaffected: the traced decoy launch below still runs last on
                // these inputs before the checked runs.
                if (traced) {
                    prepare_outputs(0);
                    {
                        nvtx_range range("warmup/" + range_id);
                        v.launch(args);
                    }
                    CUDA_CHECK(cudaStreamSynchronize(stream));
                    CUDA_CHECK(cudaDeviceSynchronize());
                }
                // One repeat of the traced launch when its verdict could be a miss: the gate timed
                // out (a launch call over 250 ms), or work on another stream looked ordered (see
                // below). A second decoy launch is harmless: the outputs are poisoned again and the
                // inputs are the same.
                for (int attempt = 0; attempt < 2; ++attempt) {
                    // The trace records every stream of the device: no domain check of the warm-up
                    // thread (which may build a library plan on a stream of its own, as cuDNN's
                    // autotuning does) may run meanwhile, or its work would be taken for this
                    // variant's unordered side-stream work (a false failure, seen on an H100 with
                    // cudnn_conv while the next case's plan was being tuned).
                    std::optional<measurement_window> window;
                    if (traced) window.emplace(m_impl->quiet, m_impl->measuring);
                    if (traced) m_tools.tracer->begin();
                    std::optional<stream_gate> gate;
                    // Held until the launch call returns, then 200 us more, so that work the variant
                    // enqueues during its launch call can start before the stream moves on, if it
                    // does not wait for the stream.
                    if (traced) gate.emplace(stream, std::chrono::microseconds(200));
                    prepare_outputs(0);
                    {
                        nvtx_range range("decoy/" + range_id);
                        v.launch(args);
                    }
                    if (gate) gate->open();
                    CUDA_CHECK(cudaStreamSynchronize(stream));
                    CUDA_CHECK(cudaDeviceSynchronize());
                    if (!traced) break;
                    const traced_sample t = m_tools.tracer->end();
                    side_stream = unordered_side_stream_work(t.kernels, *m_impl->stream_id);
                    if (side_stream) break;
                    // Work on another stream that started after the launch stream was released
                    // looks ordered, but may only have started late: a stream's first launch, or
                    // a kernel's, can take longer than the gate holds. The second launch runs
                    // with both warm and tells the two apart.
                    const bool other_streams = std::any_of(t.kernels.begin(), t.kernels.end(), [&](const kernel_record& k) {
                        return k.stream_id != *m_impl->stream_id;
                    });
                    if (!gate->timed_out() && !other_streams) break;
                    if (attempt == 1 && gate->timed_out()) {
                        std::fprintf(stderr, "fusebench: %s: stream-order check not made: the launch call outlasted the "
                                             "250 ms stream gate twice\n", range_id.c_str());
                    }
                }
                for (auto& d : d_outputs) {
                    decoy.outputs.emplace_back(d.buffer.size());
                    CUDA_CHECK(cudaMemcpy(decoy.outputs.back().data(), d.buffer.get(), d.buffer.size(), cudaMemcpyDeviceToHost));
                }
                load_inputs(false);
            }
            decoy_s = since(t_decoy);
            r.phase_seconds["decoy_and_stream_order"] = decoy_s;

            run_capture cap[2];
            for (int run = 0; run < 2; ++run) {
                prepare_outputs(run);
                {
                    nvtx_range range("verify/" + range_id);
                    v.launch(args);
                }
                CUDA_CHECK(cudaStreamSynchronize(stream));
                CUDA_CHECK(cudaDeviceSynchronize());  // work the variant put on other streams too
                for (auto& d : d_outputs) {
                    cap[run].outputs.emplace_back(d.buffer.size());
                    CUDA_CHECK(cudaMemcpy(cap[run].outputs.back().data(), d.buffer.get(), d.buffer.size(), cudaMemcpyDeviceToHost));
                }
            }

            // Guard bands, unwritten elements, determinism.
            std::size_t differing = 0;
            for (std::size_t o = 0; o < out_specs.size(); ++o) {
                const auto& spec = out_specs[o];
                const std::size_t begin = d_outputs[o].offset, end = begin + spec.bytes();
                for (int run = 0; run < 2; ++run) {
                    const std::span<const std::byte> buf(cap[run].outputs[o]);
                    const std::size_t before = count_changed(buf.first(begin), guard_fill);
                    const std::size_t after = count_changed(buf.subspan(end), guard_fill);
                    if (before) cb.guard_violations.push_back(format_bytes_changed(before, "before", spec.name) + " (run " + std::to_string(run + 1) + ")");
                    if (after) cb.guard_violations.push_back(format_bytes_changed(after, "after", spec.name) + " (run " + std::to_string(run + 1) + ")");
                }
                const auto d = compare_runs(std::span<const std::byte>(cap[0].outputs[o]).subspan(begin, spec.bytes()),
                                            std::span<const std::byte>(cap[1].outputs[o]).subspan(begin, spec.bytes()),
                                            dtype_size(spec.type), spec.alias_of_input < 0);
                differing += d.differing;
                cb.unwritten_elements += d.unwritten;
            }
            cb.deterministic = differing == 0;

            // Inputs must be bit-identical after two launches: compared on the device with the
            // pristine copy made at upload (a pass over device memory, no download), and restored
            // from it when changed.
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                const std::size_t bytes = inputs[i].data.size();
                if (device_bytes_differ(d_inputs[i].data(), d_pristine[i].get(), bytes, stream)) {
                    cb.modified_inputs.push_back(inputs[i].spec.name);
                    CUDA_CHECK(cudaMemcpyAsync(d_inputs[i].data(), d_pristine[i].get(), bytes, cudaMemcpyDeviceToDevice, stream));
                    CUDA_CHECK(cudaStreamSynchronize(stream));
                }
            }

            // Compare against the reference (run 1, and run 2 too when it differs) on a worker
            // thread, while the GPU work that does not depend on its answer goes on: the kernel
            // timing and the counter pass, taken speculatively when every other check has
            // passed, and dropped unless the comparison passes too. Both measure on the GPU
            // (CUPTI records, counters), which host load does not change; the e2e timing, which
            // host load would change, waits for the comparison. The worker leaves one core to
            // this thread.
            const auto t_compare = clock::now();
            t_verified = t_compare;
            auto compare_task = std::async(std::launch::async, [&]() {
                const std::size_t cpus = available_cpus();
                set_thread_parallelism(cpus > 1 ? cpus - 1 : 1);
                const auto t0 = clock::now();
                std::vector<output_check> all;
                for (int run = 0; run < (differing ? 2 : 1); ++run) {
                    std::vector<host_tensor> outs;
                    for (std::size_t o = 0; o < out_specs.size(); ++o) {
                        host_tensor t(out_specs[o]);
                        std::memcpy(t.data.data(), cap[run].outputs[o].data() + d_outputs[o].offset, t.data.size());
                        outs.push_back(std::move(t));
                    }
                    std::vector<output_check> checks;
                    if (s.custom_check) {
                        checks = s.custom_check(check_input{c, inputs, reference, outs, &v});
                    } else {
                        for (std::size_t o = 0; o < out_specs.size(); ++o) {
                            checks.push_back(compare_elementwise(out_specs[o].name, out_specs[o].type, outs[o].data.data(),
                                                                 reference[o], s.tolerance.for_type(out_specs[o].type)));
                        }
                    }
                    if (!relative.empty() && v.role != variant_role::baseline) {
                        apply_relative_tolerances(checks, judge && judge->correctness ? &judge->correctness->outputs : nullptr,
                                                  relative, out_specs, reference, judge_label);
                    }
                    if (run == 0) {
                        all = std::move(checks);
                    } else {
                        for (auto& ch : checks) {
                            if (!ch.pass) {
                                ch.output += " (run 2)";
                                all.push_back(std::move(ch));
                            }
                        }
                    }
                }
                return std::make_pair(std::move(all), since(t0));
            });

            // What the verdict will say besides the comparison, known now.
            std::vector<std::string> why;
            if (!cb.guard_violations.empty()) why.push_back("out-of-bounds write: " + cb.guard_violations.front());
            if (!cb.modified_inputs.empty()) why.push_back("modified its input '" + cb.modified_inputs.front() + "'");
            if (cb.unwritten_elements) why.push_back(std::to_string(cb.unwritten_elements) + " output element(s) never written");
            const std::size_t compare_why_at = why.size();  // the comparison's reasons go here
            if (differing && !v.may_be_nondeterministic) {
                why.push_back("nondeterministic: two runs on the same inputs differ in " + std::to_string(differing) + " element(s)");
            }
            if (side_stream) why.push_back(*side_stream);

            const bool in_place = std::any_of(out_specs.begin(), out_specs.end(),
                                              [](const tensor_spec& t) { return t.alias_of_input >= 0; });
            timing_request req;
            req.launch = [&](cudaStream_t st) {
                launch_args a2{c, in_ptrs, out_ptrs, workspace.get(), ws_bytes, st};
                nvtx_range range("time/" + range_id);
                v.launch(a2);
            };
            if (in_place) req.prepare = [&](cudaStream_t) { prepare_outputs(-1); };
            req.mode = m_opts.mode;
            req.policy = m_opts.policy;
            req.serial_kernel_records = m_opts.serial_kernel_records;
            const bool to_time = c.timed && !m_opts.verify_only && !m_opts.profile_once;

            // Kernel timing: CUPTI activity records, else CUDA events.
            std::optional<timed_run> timed;
            std::optional<counter_result> counted;
            double timing_s = 0, counters_s = 0;
            auto measure_timing = [&] {
                if (!m_impl->empty_kernel_timed) {
                    m_impl->empty_kernel_timed = true;
                    timing_request er;
                    er.launch = [](cudaStream_t st) { detail::launch_empty_kernel(st); };
                    er.mode = m_opts.mode;
                    er.policy = m_opts.policy;
                    er.serial_kernel_records = m_opts.serial_kernel_records;
                    const timed_run e = m_tools.tracer ? time_with_tracer(er, stream, m_impl->flusher, *m_tools.tracer,
                                                                          m_tools.max_clock_mhz)
                                                       : time_with_events(er, stream, m_impl->flusher);
                    if (e.kernels_per_sample > 1 || !e.kernel_set_consistent) {
                        m_impl->empty_kernel_null_reason = "the empty kernel's samples held other kernels";
                    } else if (e.stats.n > 0) {
                        m_impl->empty_kernel = e.stats;
                    } else {
                        m_impl->empty_kernel_null_reason = "no sample of the empty kernel was timed";
                    }
                }
                t_timing = clock::now();
                if (m_tools.tracer) {
                    timed = time_with_tracer(req, stream, m_impl->flusher, *m_tools.tracer, m_tools.max_clock_mhz);
                    timed->method_reason =
                        timed->kernel_records == "serial"
                            ? "CUPTI activity records (KIND_KERNEL): GPU start/end of every kernel on every stream, no launch "
                              "latency, no instrumentation; kernels on different streams are serialized"
                            : "CUPTI activity records (CONCURRENT_KERNEL, --concurrent-kernel-timing): GPU start/end of every "
                              "kernel on every stream, no launch latency; CUPTI instruments each kernel, which slows kernels "
                              "of many short blocks";
                    if (timed->mode == cache_mode::cold) {
                        timed->method_reason += "; each sample's launch call queued behind a stream gate, so the host's "
                                                "launch calls leave no gaps between the variant's kernels";
                    }
                } else {
                    timed = time_with_events(req, stream, m_impl->flusher);
                    timed->method_reason = "CUPTI activity tracing unavailable (" + m_tools.tracer_reason +
                                           "): CUDA events, which include launch latency for short kernels";
                    if (timed->mode == cache_mode::cold) {
                        timed->method_reason += "; cold samples are queued behind a stream gate, so only hot samples do";
                    }
                }
                if (timed->gate_timeouts > 0) {
                    timed->method_reason += "; " + std::to_string(timed->gate_timeouts) +
                                            " sample(s) outlasted the stream gate's 250 ms in the launch call (a launcher "
                                            "that waits for its stream): those include host time";
                }
                timed->empty_kernel_stats = m_impl->empty_kernel;
                timed->empty_kernel_null_reason = m_impl->empty_kernel_null_reason;
                if (!m_opts.keep_raw_samples) timed->samples_us.clear();
                timing_s = since(*t_timing);
            };
            // Counter pass: its own launches, never the timing pass, never before the other
            // checks have passed.
            auto measure_counters = [&] {
                const auto t_counters = clock::now();
                if (m_opts.counters) {
                    if (m_tools.counters) {
                        if (m_tools.tracer) m_tools.tracer->pause();
                        if (in_place) prepare_outputs(-1);
                        m_impl->flusher.flush(stream);
                        CUDA_CHECK(cudaDeviceSynchronize());
                        counted = m_tools.counters->measure(req.launch, stream);
                        CUDA_CHECK(cudaDeviceSynchronize());
                        if (m_tools.tracer) m_tools.tracer->resume();
                    } else {
                        counted = m_tools.counters_failure;
                    }
                }
                counters_s = since(t_counters);
            };
            if (why.empty() && to_time) {
                const measurement_window window(m_impl->quiet, m_impl->measuring);  // no domain check meanwhile
                measure_timing();
                measure_counters();
            }

            // The comparison's answer.
            const auto t_join = clock::now();
            auto [compared, compare_own_s] = compare_task.get();
            const double join_s = since(t_join);
            cb.outputs = std::move(compared);
            // compare: what the foreground spent on it (the wait, whole when nothing overlapped);
            // compare_background: the comparison's own time on its thread.
            compare_s = timed ? join_s : since(t_compare) - timing_s - counters_s;
            r.phase_seconds["compare"] = compare_s;
            r.phase_seconds["compare_background"] = compare_own_s;

            // Verdict.
            {
                std::vector<std::string> compare_why;
                for (const auto& ch : cb.outputs) {
                    if (!ch.pass) compare_why.push_back(ch.reason.empty() ? ("output '" + ch.output + "' mismatches") : ch.reason);
                }
                why.insert(why.begin() + static_cast<std::ptrdiff_t>(compare_why_at), compare_why.begin(), compare_why.end());
            }
            {
                std::vector<std::span<const std::byte>> d_out, r_out;
                for (std::size_t o = 0; o < out_specs.size(); ++o) {
                    const std::size_t at = d_outputs[o].offset, n = out_specs[o].bytes();
                    d_out.push_back(std::span<const std::byte>(decoy.outputs[o]).subspan(at, n));
                    r_out.push_back(std::span<const std::byte>(cap[0].outputs[o]).subspan(at, n));
                }
                if (auto stale = stale_result(d_out, r_out, decoy_differs, !why.empty())) why.push_back(*stale);
            }
            r.result = why.empty() ? outcome::pass : outcome::fail;
            for (std::size_t i = 0; i < why.size(); ++i) r.reason += (i ? "; " : "") + why[i];

            // Timing, on the same buffers, only after a pass (measurements taken speculatively
            // above are dropped otherwise).
            if (r.result == outcome::pass && m_opts.profile_once) {
                // One launch outside any timing loop, for `ncu --nvtx --nvtx-include "profile/"`,
                // after the same L2 flush as a cold sample, so a profiler run with its own cache
                // control off (`ncu --cache-control none`) sees what the timing and counter passes
                // see: cold before the first kernel, no flush between the variant's kernels.
                prepare_outputs(0);
                m_impl->flusher.flush(stream);
                CUDA_CHECK(cudaDeviceSynchronize());
                {
                    nvtx_range range("profile/" + range_id);
                    v.launch(args);
                }
                CUDA_CHECK(cudaDeviceSynchronize());
                r.timing_null_reason = "not timed: --profile-once";
            } else if (r.result == outcome::pass && to_time) {
                const measurement_window window(m_impl->quiet, m_impl->measuring);  // no domain check meanwhile
                if (!timed) {
                    measure_timing();
                    measure_counters();
                }
                r.timing = std::move(timed);
                r.phase_seconds["timing"] = timing_s;
                const auto t_e2e = clock::now();

                // End to end: host time from the launcher call to the return of the stream
                // synchronization, host-side setup (descriptors, plans from a cache) included;
                // prepared (and, cold, L2-flushed) before each sample, outside the timed span.
                {
                    if (m_tools.tracer) m_tools.tracer->pause();
                    std::vector<double> e2e;
                    const auto e2e_start = std::chrono::steady_clock::now();
                    for (std::size_t i = 0; i < e2e_max_samples; ++i) {
                        if (i >= e2e_min_samples &&
                            std::chrono::steady_clock::now() - e2e_start > std::chrono::milliseconds(e2e_budget_ms)) {
                            break;
                        }
                        if (in_place) prepare_outputs(-1);
                        if (m_opts.mode == cache_mode::cold) m_impl->flusher.flush(stream);
                        CUDA_CHECK(cudaDeviceSynchronize());
                        const auto t0 = std::chrono::steady_clock::now();
                        req.launch(stream);
                        CUDA_CHECK(cudaStreamSynchronize(stream));
                        const auto t1 = std::chrono::steady_clock::now();
                        e2e.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                    }
                    CUDA_CHECK(cudaDeviceSynchronize());
                    if (m_tools.tracer) m_tools.tracer->resume();
                    r.timing->e2e_stats = summarize(e2e);
                }
                r.phase_seconds["e2e"] = since(t_e2e);
                if (m_opts.counters) {
                    r.counters = std::move(counted);
                    const auto& vals = r.counters->values;
                    const auto rd = vals.find("dram__bytes_read.sum"), wr = vals.find("dram__bytes_write.sum");
                    if (rd != vals.end() && wr != vals.end() && rd->second && wr->second) {
                        r.measured_dram_bytes = *rd->second + *wr->second;
                        const double model = r.model.bytes_read + r.model.bytes_written;
                        if (model > 0) {
                            r.traffic_ratio = *r.measured_dram_bytes / model;
                            r.traffic_flag = classify_traffic(*r.traffic_ratio);
                        }
                    }
                    r.phase_seconds["counters"] = counters_s;
                }
            } else if (r.result != outcome::pass) {
                r.timing_null_reason = "not timed: verification did not pass";
                // Taken speculatively before the comparison failed, and dropped.
                if (timed) r.phase_seconds["timing_dropped"] = timing_s + counters_s;
            } else if (!c.timed) {
                r.timing_null_reason = "not timed: edge case verified only";
            } else {
                r.timing_null_reason = "not timed: --verify-only";
            }
        } catch (const cuda_error& e) {
            r.result = outcome::error;
            r.reason = e.what();
            r.timing_null_reason = "not timed: error";
            if (e.sticky()) {
                m_context_lost = true;
                m_context_lost_reason = std::string(v.name) + ": " + e.what();
            }
        } catch (const std::exception& e) {
            r.result = outcome::error;
            r.reason = e.what();
            r.timing_null_reason = "not timed: error";
            // A launcher may have thrown after the kernel failed asynchronously: check the context.
            const cudaError_t pending = cudaDeviceSynchronize();
            if (pending != cudaSuccess && is_sticky_cuda_error(pending)) {
                m_context_lost = true;
                m_context_lost_reason = std::string(v.name) + ": " + cudaGetErrorName(pending);
            } else {
                (void)cudaGetLastError();
            }
        }
        r.correctness = std::move(cb);
        r.verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_verify).count();
        // Verification proper: poisoning, the two checked launches, downloads, guard bands,
        // determinism and the input check (from the start to the comparison, less the decoy).
        r.phase_seconds["verify"] =
            t_verified ? std::chrono::duration<double>(*t_verified - t_verify).count() - decoy_s
                       : std::chrono::duration<double>((t_timing ? *t_timing : clock::now()) - t_verify).count() - decoy_s - compare_s;
        if (v.role == variant_role::baseline && !baseline_result) baseline_result = &r;
        if (named_baselines.count(v.name) && !named_results.count(v.name)) named_results[v.name] = &r;
    }

    // Derived figures: achieved rates, % of the copy ceiling, speedup vs the baseline. The floor of
    // the operation is the smallest traffic any variant of the case declares (the fused model:
    // each input read once, each output written once) over the measured copy bandwidth.
    double floor_bytes = INFINITY;
    for (const auto& r : results) {
        // Variants outside their domain on this case declare no traffic for it.
        if (r.result == outcome::skipped && r.reason.rfind("outside declared domain", 0) == 0) continue;
        floor_bytes = std::min(floor_bytes, r.model.bytes_read + r.model.bytes_written);
    }
    double input_bytes = 0, output_bytes = 0;
    for (const auto& t : in_specs) input_bytes += static_cast<double>(t.bytes());
    for (const auto& t : out_specs) output_bytes += static_cast<double>(t.bytes());
    for (std::size_t vi = 0; vi < results.size(); ++vi) {
        variant_result& r = results[vi];
        // The baseline error shown beside a result is its judging baseline's (the suite's
        // baseline unless the variant names a same-precision one).
        const variant_result* judge = judge_of(*item.variants[vi]);
        if (judge && &r != judge && r.correctness && judge->correctness) {
            r.correctness->baseline_outputs = judge->correctness->outputs;
        }
        if (!r.timing) {
            const std::string why = r.timing_null_reason.empty() ? r.reason : r.timing_null_reason;
            for (const char* k : {"achieved_gbps", "achieved_tflops", "pct_of_copy_ceiling", "pct_of_floor", "pct_of_ceiling",
                                  "arithmetic_intensity", "speedup_vs_baseline", "pct_of_floor_with_launch"}) {
                r.null_reasons[k] = why.empty() ? "not timed" : why;
            }
            continue;
        }
        r.sol_floor = compute_physical_floor(r.model, input_bytes, output_bytes, m_opts.sol);
        if (auto why = speed_of_light_violation(r.timing->stats.median, *r.sol_floor, r.timing->mode)) {
            r.result = outcome::fail;
            r.reason = *why;
        }
        const double t_s = r.timing->stats.median * 1e-6;
        const double bytes = r.model.bytes_read + r.model.bytes_written;
        r.achieved_gbps = bytes / t_s * 1e-9;
        if (r.model.flops > 0) r.achieved_tflops = r.model.flops / t_s * 1e-12;
        else r.null_reasons["achieved_tflops"] = "the variant's model declares no flops";
        if (m_opts.copy_gbps && *m_opts.copy_gbps > 0) {
            r.pct_of_copy_ceiling = 100.0 * *r.achieved_gbps / *m_opts.copy_gbps;
            const double floor_s = floor_bytes / (*m_opts.copy_gbps * 1e9);
            r.pct_of_floor = 100.0 * floor_s / t_s;
            if (r.timing->empty_kernel_stats) {
                r.pct_of_floor_with_launch = 100.0 * (floor_s + r.timing->empty_kernel_stats->median * 1e-6) / t_s;
            } else {
                r.null_reasons["pct_of_floor_with_launch"] = "the empty kernel was not timed: " + r.timing->empty_kernel_null_reason;
            }
        } else {
            for (const char* k : {"pct_of_copy_ceiling", "pct_of_floor", "pct_of_floor_with_launch"}) {
                r.null_reasons[k] = "copy bandwidth was not measured";
            }
        }
        // The measured ceiling of the unit that runs the model's flops (the largest measured rate
        // for `any`).
        // A unit whose ceiling was not measured has no % of ceiling (never another unit's).
        const auto unit_ceiling = m_opts.measured_tflops.find(r.model.unit);
        const double flops_rate_ceiling =
            unit_ceiling != m_opts.measured_tflops.end() ? unit_ceiling->second
            : r.model.unit == compute_unit::any          ? m_opts.peak_tflops.value_or(0)
                                                         : 0.0;
        if (r.model.flops > 0 && bytes > 0) r.arithmetic_intensity = r.model.flops / bytes;
        else r.null_reasons["arithmetic_intensity"] = "the model declares no flops or no bytes";
        if (m_opts.copy_gbps && flops_rate_ceiling > 0) {
            const double ridge = flops_rate_ceiling * 1e12 / (*m_opts.copy_gbps * 1e9);  // [flop/byte]
            r.bound = r.arithmetic_intensity.value_or(0) < ridge ? "memory" : "compute";
            r.pct_of_ceiling = r.bound == "memory" ? r.pct_of_copy_ceiling
                                                   : std::optional<double>(100.0 * r.achieved_tflops.value_or(0) / flops_rate_ceiling);
        } else if (!m_opts.copy_gbps || !m_opts.peak_tflops) {
            r.null_reasons["pct_of_ceiling"] = "ceilings were not measured";
        } else {
            r.null_reasons["pct_of_ceiling"] = std::string("the ") + to_string(r.model.unit) + " ceiling was not measured";
            r.null_reasons["bound"] = r.null_reasons["pct_of_ceiling"];
        }
        if (baseline_result && &r != baseline_result && r.measured_dram_bytes && baseline_result->measured_dram_bytes) {
            r.bytes_saved_vs_baseline = *baseline_result->measured_dram_bytes - *r.measured_dram_bytes;
        }
        if (!baseline_result) {
            r.null_reasons["speedup_vs_baseline"] = "the suite has no baseline variant in this selection";
        } else if (!baseline_result->timing) {
            r.null_reasons["speedup_vs_baseline"] = "the baseline was not timed: " +
                (baseline_result->timing_null_reason.empty() ? baseline_result->reason : baseline_result->timing_null_reason);
        } else {
            r.speedup_vs_baseline = baseline_result->timing->stats.median / r.timing->stats.median;
        }
    }
    return results;
}

}  // namespace fusebench
