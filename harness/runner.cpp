#include "harness/runner.hpp"

#include "harness/cuda_check.hpp"
#include "harness/cupti_counters.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "harness/guard.hpp"
#include "harness/hash.hpp"
#include "harness/nvtx.hpp"
#include "harness/rng.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>

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

const char* to_string(variant_role r) noexcept { return r == variant_role::fused ? "fused" : "baseline"; }

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
    std::vector<selection_item> out;
    for (const suite* s : suites) {
        std::vector<const variant*> vs;
        for (const auto& v : s->variants) {
            if (f.variants.empty() || std::find(f.variants.begin(), f.variants.end(), v.name) != f.variants.end()) {
                vs.push_back(&v);
            }
        }
        if (vs.empty()) continue;
        for (auto& c : s->cases()) {
            if (f.quick && !c.quick) continue;
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

std::optional<std::string> speed_of_light_violation(double median_us, const traffic_model& m, cache_mode mode,
                                                    std::size_t l2_bytes, const run_options& o) {
    constexpr double slack = 0.95;
    if (mode != cache_mode::cold || median_us <= 0) return std::nullopt;
    const double bytes = m.bytes_read + m.bytes_written;
    const double best_gbps = std::max(o.copy_gbps.value_or(0), o.read_gbps.value_or(0));
    char buf[256];
    if (best_gbps > 0 && bytes > 4.0 * static_cast<double>(l2_bytes)) {
        const double floor_us = bytes / (best_gbps * 1e9) * 1e6;
        if (median_us < slack * floor_us) {
            std::snprintf(buf, sizeof buf,
                          "faster than physics: median %.2f us is below 95%% of the floor %.2f us (%.0f model bytes / %.0f GB/s measured): work was skipped",
                          median_us, floor_us, bytes, best_gbps);
            return std::string(buf);
        }
    }
    if (o.peak_tflops && *o.peak_tflops > 0 && m.flops > 0) {
        const double floor_us = m.flops / (*o.peak_tflops * 1e12) * 1e6;
        if (median_us < slack * floor_us) {
            std::snprintf(buf, sizeof buf,
                          "faster than physics: median %.2f us is below 95%% of the floor %.2f us (%.3g model flops / %.0f TFLOP/s measured): work was skipped",
                          median_us, floor_us, m.flops, *o.peak_tflops);
            return std::string(buf);
        }
    }
    return std::nullopt;
}

std::uint64_t case_seed(std::uint64_t run_seed, const std::string& suite_name, const case_desc& c) {
    return splitmix64(run_seed ^ hash_string(suite_name + "/" + c.name + "/" + std::string(dtype_name(c.type))));
}

namespace {

// A device allocation with guard bands: [guard][misalign][data][guard].
struct guarded_tensor {
    tensor_spec spec;
    device_buffer buffer;
    std::size_t offset = 0;  // of the data [bytes]

    explicit guarded_tensor(const tensor_spec& s)
        : spec(s), buffer(guard_band_bytes + s.misalign_bytes + s.bytes() + guard_band_bytes),
          offset(guard_band_bytes + s.misalign_bytes) {}
    void* data() const { return buffer.bytes_ptr() + offset; }
};

std::string format_bytes_changed(std::size_t n, const char* where, const std::string& name) {
    return "'" + name + "': " + std::to_string(n) + " guard byte(s) changed " + where + " the buffer";
}

struct run_capture {
    std::vector<std::vector<std::byte>> outputs;  // whole guarded buffers, per output
};

}  // namespace

struct runner::impl {
    cuda_stream stream;
    l2_flusher flusher;
    explicit impl(const device_info& d) : flusher(d.l2_bytes, d.sm_count) {}
};

std::string classify_traffic(double ratio) {
    if (ratio > 1.15) return "excess_traffic";
    if (ratio < 0.9) return "below_model";
    return "ok";
}

runner::runner(const device_info& dev, run_options opts, measurement_tools tools)
    : m_dev(dev), m_opts(std::move(opts)), m_tools(std::move(tools)), m_impl(std::make_unique<impl>(dev)) {}

runner::~runner() = default;

std::vector<variant_result> runner::run_item(const selection_item& item) {
    const suite& s = *item.s;
    const case_desc& c = item.c;
    std::vector<variant_result> results;
    for (const variant* v : item.variants) {
        variant_result r;
        r.suite = s.name;
        r.c = c;
        r.variant = v->name;
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

    // Requirements first: a variant outside its declared domain is skipped with the reason.
    std::vector<bool> runnable(item.variants.size(), true);
    for (std::size_t k = 0; k < item.variants.size(); ++k) {
        const variant& v = *item.variants[k];
        std::optional<std::string> why;
        if (v.req.min_compute_capability > m_dev.compute_capability()) {
            why = "needs compute capability " + std::to_string(v.req.min_compute_capability) + ", device has " +
                  std::to_string(m_dev.compute_capability());
        } else if (v.req.supports) {
            why = v.req.supports(c);
        }
        if (why) {
            runnable[k] = false;
            results[k].result = outcome::skipped;
            results[k].reason = "outside declared domain: " + *why;
        }
    }
    if (std::none_of(runnable.begin(), runnable.end(), [](bool b) { return b; })) return results;

    // Inputs on the host from the case seed, their hashes, and the fp64 reference.
    const auto in_specs = s.input_specs(c);
    const auto out_specs = s.output_specs(c);
    std::vector<host_tensor> inputs;
    for (const auto& spec : in_specs) inputs.emplace_back(spec);
    std::vector<std::vector<double>> reference;
    try {
        s.generate(c, rng(case_seed(m_opts.seed, s.name, c)), inputs);
        reference = s.reference(c, inputs);
    } catch (const std::exception& e) {
        return all_error(std::string("input generation or reference failed: ") + e.what());
    }
    if (reference.size() != out_specs.size()) {
        return all_error("reference returned " + std::to_string(reference.size()) + " outputs, suite declares " +
                         std::to_string(out_specs.size()));
    }
    std::vector<std::uint64_t> input_hash;
    for (const auto& t : inputs) input_hash.push_back(hash_bytes(t.data.data(), t.data.size()));

    cudaStream_t stream = m_impl->stream.get();
    std::vector<guarded_tensor> d_inputs;
    try {
        for (const auto& t : inputs) {
            d_inputs.emplace_back(t.spec);
            CUDA_CHECK(cudaMemcpy(d_inputs.back().data(), t.data.data(), t.data.size(), cudaMemcpyHostToDevice));
        }
    } catch (const cuda_error& e) {
        if (e.sticky()) {
            m_context_lost = true;
            m_context_lost_reason = e.what();
        }
        return all_error(std::string("uploading inputs failed: ") + e.what());
    }

    const variant_result* baseline_result = nullptr;
    for (std::size_t k = 0; k < item.variants.size(); ++k) {
        if (!runnable[k]) continue;
        const variant& v = *item.variants[k];
        variant_result& r = results[k];
        if (m_context_lost) {
            r.result = outcome::skipped;
            r.reason = "not run: the CUDA context was lost (" + m_context_lost_reason + ")";
            continue;
        }
        const auto t_verify = std::chrono::steady_clock::now();
        correctness_block cb;
        try {
            std::vector<guarded_tensor> d_outputs;
            for (const auto& spec : out_specs) d_outputs.emplace_back(spec);
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

            const std::string range_id = s.name + "/" + c.name + "/" + std::string(dtype_name(c.type)) + "/" + v.name;
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

            // Inputs must be bit-identical after two launches.
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                std::vector<std::byte> back(inputs[i].data.size());
                CUDA_CHECK(cudaMemcpy(back.data(), d_inputs[i].data(), back.size(), cudaMemcpyDeviceToHost));
                if (hash_bytes(back.data(), back.size()) != input_hash[i]) {
                    cb.modified_inputs.push_back(inputs[i].spec.name);
                    CUDA_CHECK(cudaMemcpy(d_inputs[i].data(), inputs[i].data.data(), back.size(), cudaMemcpyHostToDevice));
                }
            }

            // Compare against the reference: run 1, and run 2 too when it differs.
            for (int run = 0; run < (differing ? 2 : 1); ++run) {
                std::vector<host_tensor> outs;
                for (std::size_t o = 0; o < out_specs.size(); ++o) {
                    host_tensor t(out_specs[o]);
                    std::memcpy(t.data.data(), cap[run].outputs[o].data() + d_outputs[o].offset, t.data.size());
                    outs.push_back(std::move(t));
                }
                std::vector<output_check> checks;
                if (s.custom_check) {
                    checks = s.custom_check(check_input{c, inputs, reference, outs});
                } else {
                    for (std::size_t o = 0; o < out_specs.size(); ++o) {
                        checks.push_back(compare_elementwise(out_specs[o].name, out_specs[o].type, outs[o].data.data(),
                                                             reference[o], s.tolerance.for_type(out_specs[o].type)));
                    }
                }
                if (run == 0) {
                    cb.outputs = std::move(checks);
                } else {
                    for (auto& ch : checks) {
                        if (!ch.pass) {
                            ch.output += " (run 2)";
                            cb.outputs.push_back(std::move(ch));
                        }
                    }
                }
            }

            // Verdict.
            std::vector<std::string> why;
            if (!cb.guard_violations.empty()) why.push_back("out-of-bounds write: " + cb.guard_violations.front());
            if (!cb.modified_inputs.empty()) why.push_back("modified its input '" + cb.modified_inputs.front() + "'");
            if (cb.unwritten_elements) why.push_back(std::to_string(cb.unwritten_elements) + " output element(s) never written");
            for (const auto& ch : cb.outputs) {
                if (!ch.pass) why.push_back(ch.reason.empty() ? ("output '" + ch.output + "' mismatches") : ch.reason);
            }
            if (differing && !v.may_be_nondeterministic) {
                why.push_back("nondeterministic: two runs on the same inputs differ in " + std::to_string(differing) + " element(s)");
            }
            r.result = why.empty() ? outcome::pass : outcome::fail;
            for (std::size_t i = 0; i < why.size(); ++i) r.reason += (i ? "; " : "") + why[i];

            // Timing, on the same buffers, only after a pass.
            if (r.result == outcome::pass && m_opts.profile_once) {
                // One launch outside any timing loop, for `ncu --nvtx --nvtx-include "profile/"`.
                prepare_outputs(0);
                {
                    nvtx_range range("profile/" + range_id);
                    v.launch(args);
                }
                CUDA_CHECK(cudaDeviceSynchronize());
                r.timing_null_reason = "not timed: --profile-once";
            } else if (r.result == outcome::pass && c.timed && !m_opts.verify_only) {
                timing_request req;
                req.launch = [&](cudaStream_t st) {
                    launch_args a2{c, in_ptrs, out_ptrs, workspace.get(), ws_bytes, st};
                    nvtx_range range("time/" + range_id);
                    v.launch(a2);
                };
                const bool in_place = std::any_of(out_specs.begin(), out_specs.end(),
                                                  [](const tensor_spec& t) { return t.alias_of_input >= 0; });
                if (in_place) req.prepare = [&](cudaStream_t) { prepare_outputs(-1); };
                req.mode = m_opts.mode;
                req.policy = m_opts.policy;
                if (m_tools.tracer) {
                    r.timing = time_with_tracer(req, stream, m_impl->flusher, *m_tools.tracer, m_tools.max_clock_mhz);
                    r.timing->method_reason = "CUPTI activity records: GPU start/end of every kernel on every stream, no launch latency";
                } else {
                    r.timing = time_with_events(req, stream, m_impl->flusher);
                    r.timing->method_reason = "CUPTI activity tracing unavailable (" + m_tools.tracer_reason +
                                              "): CUDA events, which include launch latency for short kernels";
                }
                if (!m_opts.keep_raw_samples) r.timing->samples_us.clear();

                // Counter pass: its own launches, never the timing pass, never before verification.
                if (m_opts.counters) {
                    if (m_tools.counters) {
                        if (m_tools.tracer) m_tools.tracer->pause();
                        if (in_place) prepare_outputs(-1);
                        m_impl->flusher.flush(stream);
                        CUDA_CHECK(cudaDeviceSynchronize());
                        r.counters = m_tools.counters->measure(req.launch, stream);
                        CUDA_CHECK(cudaDeviceSynchronize());
                        if (m_tools.tracer) m_tools.tracer->resume();
                    } else {
                        r.counters = m_tools.counters_failure;
                    }
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
                }
            } else if (r.result != outcome::pass) {
                r.timing_null_reason = "not timed: verification did not pass";
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
        if (v.role == variant_role::baseline && !baseline_result) baseline_result = &r;
    }

    // Derived figures: achieved rates, % of the copy ceiling, speedup vs the baseline. The floor of
    // the operation is the smallest traffic any variant of the case declares (the fused model:
    // each input read once, each output written once) over the measured copy bandwidth.
    double floor_bytes = INFINITY;
    for (const auto& r : results) floor_bytes = std::min(floor_bytes, r.model.bytes_read + r.model.bytes_written);
    for (auto& r : results) {
        if (baseline_result && &r != baseline_result && r.correctness && baseline_result->correctness) {
            r.correctness->baseline_outputs = baseline_result->correctness->outputs;
        }
        if (!r.timing) {
            const std::string why = r.timing_null_reason.empty() ? r.reason : r.timing_null_reason;
            for (const char* k : {"achieved_gbps", "achieved_tflops", "pct_of_copy_ceiling", "pct_of_floor", "pct_of_ceiling",
                                  "arithmetic_intensity", "speedup_vs_baseline"}) {
                r.null_reasons[k] = why.empty() ? "not timed" : why;
            }
            continue;
        }
        if (auto why = speed_of_light_violation(r.timing->stats.median, r.model, r.timing->mode, m_dev.l2_bytes, m_opts)) {
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
            r.pct_of_floor = 100.0 * (floor_bytes / (*m_opts.copy_gbps * 1e9)) / t_s;
        } else {
            r.null_reasons["pct_of_copy_ceiling"] = "copy bandwidth was not measured";
            r.null_reasons["pct_of_floor"] = "copy bandwidth was not measured";
        }
        const double flops_rate_ceiling = m_opts.peak_tflops.value_or(0);
        if (r.model.flops > 0 && bytes > 0) r.arithmetic_intensity = r.model.flops / bytes;
        else r.null_reasons["arithmetic_intensity"] = "the model declares no flops or no bytes";
        if (m_opts.copy_gbps && flops_rate_ceiling > 0) {
            const double ridge = flops_rate_ceiling * 1e12 / (*m_opts.copy_gbps * 1e9);  // [flop/byte]
            r.bound = r.arithmetic_intensity.value_or(0) < ridge ? "memory" : "compute";
            r.pct_of_ceiling = r.bound == "memory" ? r.pct_of_copy_ceiling
                                                   : std::optional<double>(100.0 * r.achieved_tflops.value_or(0) / flops_rate_ceiling);
        } else {
            r.null_reasons["pct_of_ceiling"] = "ceilings were not measured";
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
