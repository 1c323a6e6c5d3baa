#include "harness/cli.hpp"

#include "fusebench/build_info.hpp"
#include "harness/ceilings.hpp"
#include "harness/cupti_counters.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/sm_clock.hpp"
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/report.hpp"
#include "harness/rng.hpp"
#include "harness/runner.hpp"
#include "harness/table.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fusebench {

namespace {

const char* usage_text =
    "usage: fusebench <command> [options]\n"
    "\n"
    "commands:\n"
    "  list                 suites, variants (with their declared domains) and cases\n"
    "  run                  verify and time the selected variants, print the table, write the report\n"
    "  help                 this text\n"
    "  version              tool version and git commit\n"
    "\n"
    "run options:\n"
    "  --suite NAME[,NAME]  suites to run (default: every default suite)\n"
    "  --variant NAME[,..]  variants to run (default: all)\n"
    "  --dtype T[,T]        fp32, bf16, fp16 (default: all)\n"
    "  --case SUBSTR[,..]   cases whose name contains SUBSTR (default: all)\n"
    "  --quick              small shapes only\n"
    "  --json PATH          report path (default: fusebench-report.json)\n"
    "  --seed N             replay the inputs of an earlier run (default: fresh each run)\n"
    "  --mode cold|hot      cold: L2 flushed before each sample (default); hot: back-to-back\n"
    "  --noise-target F     stop sampling once the median's relative error is below F (default 0.005)\n"
    "  --time-budget S      seconds of sampling per case and variant (default 0.5, at most 15)\n"
    "  --min-samples N      at least N samples (default 10)\n"
    "  --raw-samples        keep every sample in the report\n"
    "  --verify-only        check correctness, skip timing\n"
    "  --profile-once       after verification launch each variant once under the NVTX range\n"
    "                       profile/<suite>/<case>/<dtype>/<variant>, no timing (for ncu/nsys)\n"
    "  --device N           CUDA device ordinal (default 0)\n"
    "  --shard I/N          run only shard I of N (1-based) of the selection; merge the reports later\n"
    "  --no-ceilings        skip measuring the device's ceilings\n"
    "  --no-counters        skip the hardware-counter pass\n"
    "  --compute-counters   add the compute metric set (sm__throughput, pipe utilizations; many passes)\n"
    "  --require-counters   exit 5 when the counters cannot be read (default: null with a reason)\n"
    "  --no-cupti-timing    time with CUDA events instead of CUPTI activity records\n"
    "\n"
    "list options: --suite, --variant, --dtype, --case, --quick filter the same way.\n";

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

double parse_double(const std::string& opt, const std::string& v, double lo, double hi) {
    try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used != v.size() || !(d >= lo && d <= hi)) throw std::invalid_argument("range");
        return d;
    } catch (const std::exception&) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "a number in [%g, %g]", lo, hi);
        throw usage_error(opt + ": expected " + buf + ", got '" + v + "'");
    }
}

std::uint64_t parse_u64(const std::string& opt, const std::string& v) {
    try {
        std::size_t used = 0;
        if (v.empty() || v[0] == '-') throw std::invalid_argument("negative");
        const unsigned long long x = std::stoull(v, &used, 0);
        if (used != v.size()) throw std::invalid_argument("trailing");
        return x;
    } catch (const std::exception&) {
        throw usage_error(opt + ": expected a non-negative integer, got '" + v + "'");
    }
}

struct cli_options {
    std::string command;
    selection_filter filter;
    run_options run;
    std::string json_path = "fusebench-report.json";
    bool seed_given = false;
    int device = 0;
    bool ceilings = true;
    bool compute_counters = false;
    bool require_counters = false;
    bool cupti_timing = true;
};

cli_options parse(int argc, char** argv) {
    cli_options o;
    if (argc < 2) throw usage_error("missing command (try `fusebench help`)");
    o.command = argv[1];
    if (o.command == "-h" || o.command == "--help") o.command = "help";
    if (o.command == "--version") o.command = "version";
    if (o.command != "list" && o.command != "run" && o.command != "help" && o.command != "version") {
        throw usage_error("unknown command '" + o.command + "' (try `fusebench help`)");
    }
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--suite") {
            for (auto& s : split_commas(value())) o.filter.suites.push_back(s);
        } else if (a == "--variant") {
            for (auto& s : split_commas(value())) o.filter.variants.push_back(s);
        } else if (a == "--case") {
            for (auto& s : split_commas(value())) o.filter.cases.push_back(s);
        } else if (a == "--dtype") {
            for (auto& s : split_commas(value())) {
                const auto t = parse_dtype(s);
                if (!t || *t == dtype::i32) throw usage_error("--dtype: unknown dtype '" + s + "' (fp32, bf16, fp16)");
                o.filter.dtypes.push_back(*t);
            }
        } else if (a == "--quick") {
            o.filter.quick = true;
        } else if (a == "--json") {
            o.json_path = value();
            if (o.json_path.empty()) throw usage_error("--json: empty path");
        } else if (a == "--seed") {
            o.run.seed = parse_u64(a, value());
            o.seed_given = true;
        } else if (a == "--mode") {
            const std::string m = value();
            if (m == "cold") o.run.mode = cache_mode::cold;
            else if (m == "hot") o.run.mode = cache_mode::hot;
            else throw usage_error("--mode: expected cold or hot, got '" + m + "'");
        } else if (a == "--noise-target") {
            o.run.policy.noise_target = parse_double(a, value(), 1e-6, 1.0);
        } else if (a == "--time-budget") {
            o.run.policy.budget_s = parse_double(a, value(), 0.0, o.run.policy.max_budget_s);
        } else if (a == "--min-samples") {
            o.run.policy.min_samples = static_cast<std::size_t>(parse_double(a, value(), 1, 1e6));
        } else if (a == "--raw-samples") {
            o.run.keep_raw_samples = true;
        } else if (a == "--verify-only") {
            o.run.verify_only = true;
        } else if (a == "--profile-once") {
            o.run.profile_once = true;
        } else if (a == "--device") {
            o.device = static_cast<int>(parse_double(a, value(), 0, 1024));
        } else if (a == "--shard") {
            const std::string v = value();
            const auto slash = v.find('/');
            if (slash == std::string::npos) throw usage_error("--shard: expected I/N, got '" + v + "'");
            const auto i = parse_u64(a, v.substr(0, slash)), n = parse_u64(a, v.substr(slash + 1));
            if (n == 0 || i == 0 || i > n) throw usage_error("--shard: expected 1 <= I <= N, got '" + v + "'");
            o.filter.shard_index = static_cast<std::size_t>(i - 1);
            o.filter.shard_count = static_cast<std::size_t>(n);
        } else if (a == "--no-ceilings") {
            o.ceilings = false;
        } else if (a == "--no-counters") {
            o.run.counters = false;
        } else if (a == "--compute-counters") {
            o.compute_counters = true;
        } else if (a == "--require-counters") {
            o.require_counters = true;
        } else if (a == "--no-cupti-timing") {
            o.cupti_timing = false;
        } else {
            throw usage_error("unknown option '" + a + "' (try `fusebench help`)");
        }
    }
    return o;
}

int cmd_list(const cli_options& o, const registry& reg) {
    selection_filter f = o.filter;
    const auto items = select_work(reg, f);
    const suite* last = nullptr;
    for (const auto& it : items) {
        if (it.s != last) {
            last = it.s;
            std::printf("suite %s%s: %s\n", it.s->name.c_str(), it.s->default_run ? "" : " (not in the default run)",
                        it.s->family.c_str());
            for (const variant* v : it.variants) {
                std::printf("  variant %-22s %-8s %s\n", v->name.c_str(), to_string(v->role),
                            v->req.domain.empty() ? "domain: every case" : ("domain: " + v->req.domain).c_str());
            }
        }
        std::printf("  case %-40s %-5s %s%s\n", it.c.name.c_str(), std::string(dtype_name(it.c.type)).c_str(),
                    it.c.input_kind.c_str(), it.c.timed ? "" : " (verified, not timed)");
    }
    return exit_ok;
}

nlohmann::json settings_json(const cli_options& o) {
    nlohmann::json dtypes = nlohmann::json::array();
    for (auto t : o.filter.dtypes) dtypes.push_back(std::string(dtype_name(t)));
    return {{"command_line_filters",
             {{"suites", o.filter.suites}, {"variants", o.filter.variants}, {"cases", o.filter.cases},
              {"dtypes", dtypes}, {"quick", o.filter.quick}}},
            {"seed", o.run.seed},
            {"seed_source", o.seed_given ? "--seed" : "fresh"},
            {"mode", to_string(o.run.mode)},
            {"verify_only", o.run.verify_only},
            {"profile_once", o.run.profile_once},
            {"sampling",
             {{"warmup", o.run.policy.warmup},
              {"min_samples", o.run.policy.min_samples},
              {"max_samples", o.run.policy.max_samples},
              {"noise_target", o.run.policy.noise_target},
              {"budget_s", o.run.policy.budget_s},
              {"max_budget_s", o.run.policy.max_budget_s}}},
            {"device_ordinal", o.device},
            {"shard", {{"index", o.filter.shard_index + 1}, {"count", o.filter.shard_count}}}};
}

int cmd_run(cli_options o, const registry& reg) {
    const auto items = select_work(reg, o.filter);  // usage errors before touching the GPU
    if (!o.seed_given) o.run.seed = fresh_seed();

    const int ndev = cuda_device_count();
    if (ndev == 0) {
        std::fprintf(stderr, "fusebench: no CUDA GPU found (no driver or no device): nothing was run\n");
        return exit_no_gpu;
    }
    if (o.device >= ndev) {
        std::fprintf(stderr, "fusebench: --device %d: only %d CUDA device(s) present\n", o.device, ndev);
        return exit_usage;
    }
    if (o.require_counters && !o.run.counters) throw usage_error("--require-counters contradicts --no-counters");
    CUDA_CHECK(cudaSetDevice(o.device));
    const device_info dev = query_device(o.device);

    // CUPTI activity tracing is enabled before any kernel is loaded (module-load instrumentation).
    measurement_tools tools;
    std::unique_ptr<activity_tracer> tracer;
    if (o.cupti_timing) {
        tracer = activity_tracer::create(tools.tracer_reason);
    } else {
        tools.tracer_reason = "disabled by --no-cupti-timing";
    }
    tools.tracer = tracer.get();
    const max_sm_clock max_clock = query_max_sm_clock(o.device);
    tools.max_clock_mhz = max_clock.mhz;
    std::unique_ptr<counter_profiler> profiler;
    if (o.run.counters && !o.run.verify_only && !o.run.profile_once) {
        auto metrics = memory_metric_set();
        if (o.compute_counters) {
            for (auto& m : compute_metric_set()) metrics.push_back(m);
        }
        profiler = counter_profiler::create(o.device, metrics, tools.counters_failure);
        tools.counters = profiler.get();
        if (!profiler) {
            std::fprintf(stderr, "fusebench: hardware counters unavailable: %s (%s)\n", tools.counters_failure.reason.c_str(),
                         tools.counters_failure.detail.c_str());
            if (o.require_counters) return exit_required_measurement;
        }
    }
    const bool tty = isatty(STDERR_FILENO) != 0;
    std::fprintf(stderr, "fusebench %s: %s (cc %d.%d, %d SMs), seed %llu, %zu case(s)\n", build_info::tool_version,
                 dev.name.c_str(), dev.cc_major, dev.cc_minor, dev.sm_count,
                 static_cast<unsigned long long>(o.run.seed), items.size());

    report_context ctx;
    ctx.started_at = utc_now_iso8601();
    ctx.device = to_json(dev);
    ctx.settings = settings_json(o);
    if (o.ceilings && !o.run.verify_only && !o.run.profile_once) {
        cuda_stream s;
        const device_ceilings c = measure_ceilings(o.device, s.get(), o.filter.quick);
        ctx.ceilings = to_json(c);
        o.run.copy_gbps = c.copy_gbps.value;
        o.run.read_gbps = c.read_gbps.value;
        for (const auto* m : {&c.bf16_tflops, &c.fp16_tflops, &c.fp32_tflops}) {
            if (m->value) o.run.peak_tflops = std::max(o.run.peak_tflops.value_or(0), *m->value);
        }
        if (c.copy_gbps.value) std::fprintf(stderr, "fusebench: measured copy bandwidth %.0f GB/s\n", *c.copy_gbps.value);
    } else {
        ctx.ceilings = nullptr;
    }

    std::vector<variant_result> results;
    ctx.settings["timing_method"] = tracer ? "cupti_activity" : "cuda_events";
    ctx.settings["timing_method_reason"] = tracer ? "CUPTI activity tracing available" : tools.tracer_reason;
    ctx.settings["counters"] = !o.run.counters ? nlohmann::json("disabled")
                               : profiler       ? nlohmann::json(o.compute_counters ? "memory+compute" : "memory")
                                                : nlohmann::json("unavailable: " + tools.counters_failure.reason);
    runner run(dev, o.run, tools);
    const auto t0 = std::chrono::steady_clock::now();
    auto checkpoint = [&] {
        try {
            write_json_atomic(o.json_path, make_report(ctx, results));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fusebench: cannot write the report: %s\n", e.what());
            throw;
        }
    };
    try {
        for (std::size_t i = 0; i < items.size(); ++i) {
            const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (tty) {
                std::fprintf(stderr, "\r[%zu/%zu %6.1fs] %s %s %s\033[K", i + 1, items.size(), el,
                             items[i].s->name.c_str(), items[i].c.name.c_str(),
                             std::string(dtype_name(items[i].c.type)).c_str());
                std::fflush(stderr);
            }
            auto rs = run.run_item(items[i]);
            results.insert(results.end(), rs.begin(), rs.end());
            const bool suite_ends = i + 1 == items.size() || items[i + 1].s != items[i].s;
            if (suite_ends) {
                ctx.suites_completed.push_back(items[i].s->name);
                checkpoint();
            }
        }
    } catch (const std::exception& e) {
        ctx.status = "interrupted";
        ctx.status_reason = e.what();
        try { checkpoint(); } catch (...) {}
        std::fprintf(stderr, "\nfusebench: internal error: %s\n", e.what());
        return exit_internal;
    }
    if (tty) std::fprintf(stderr, "\r\033[K");
    ctx.finished = true;
    ctx.status = run.context_lost() ? "context_lost" : "complete";
    ctx.status_reason = run.context_lost() ? run.context_lost_reason() : "";
    try {
        checkpoint();
    } catch (const std::exception&) {
        return exit_internal;
    }

    std::fputs(format_results_table(results).c_str(), stdout);
    std::size_t counts[4] = {0, 0, 0, 0};
    for (const auto& r : results) ++counts[static_cast<int>(r.result)];
    std::printf("\n%zu passed, %zu failed, %zu errors, %zu skipped; report: %s (seed %llu)\n", counts[0], counts[1],
                counts[2], counts[3], o.json_path.c_str(), static_cast<unsigned long long>(o.run.seed));
    std::size_t mutants = 0, caught = 0;
    for (const auto& r : results) {
        const bool flagged = r.result == outcome::fail || r.result == outcome::error;
        if (!r.must_be_caught_by.empty()) {
            ++mutants;
            caught += flagged && r.reason.find(r.must_be_caught_by) != std::string::npos;
            continue;  // a caught mutant is the expected outcome, not a failure to list
        }
        if (flagged) {
            std::printf("  %s %s %s %s: %s: %s\n", to_string(r.result), r.suite.c_str(), r.c.name.c_str(),
                        std::string(dtype_name(r.c.type)).c_str(), r.variant.c_str(), r.reason.c_str());
        }
    }
    if (mutants) {
        // Verifier self-test: every deliberately broken variant must be flagged by its named check.
        std::printf("mutants: %zu of %zu caught by the expected check (catch rate %.1f%%)\n", caught, mutants,
                    100.0 * static_cast<double>(caught) / static_cast<double>(mutants));
        for (const auto& r : results) {
            if (r.must_be_caught_by.empty()) continue;
            const bool ok = (r.result == outcome::fail || r.result == outcome::error) &&
                            r.reason.find(r.must_be_caught_by) != std::string::npos;
            if (!ok && r.result != outcome::skipped) {
                std::printf("  MISSED %s %s %s: expected '%s', got %s: %s\n", r.c.name.c_str(),
                            std::string(dtype_name(r.c.type)).c_str(), r.variant.c_str(), r.must_be_caught_by.c_str(),
                            to_string(r.result), r.reason.empty() ? "(no reason)" : r.reason.c_str());
            }
        }
    }
    // Failures of real variants decide the exit code; for mutants, a missed catch does.
    std::size_t real_failures = 0;
    for (const auto& r : results) {
        const bool flagged = r.result == outcome::fail || r.result == outcome::error;
        if (r.must_be_caught_by.empty()) real_failures += flagged;
        else if (r.result != outcome::skipped) real_failures += !(flagged && r.reason.find(r.must_be_caught_by) != std::string::npos);
    }
    return real_failures ? exit_correctness : exit_ok;
}

}  // namespace

int run_cli(int argc, char** argv, const registry& reg) {
    // [report-tools dispatch] commands that read reports rather than run kernels go here.
    try {
        const cli_options o = parse(argc, argv);
        if (o.command == "help") {
            std::fputs(usage_text, stdout);
            return exit_ok;
        }
        if (o.command == "version") {
            std::printf("fusebench %s (%s%s)\n", build_info::tool_version, build_info::git_commit,
                        build_info::git_dirty ? ", dirty" : "");
            return exit_ok;
        }
        if (o.command == "list") return cmd_list(o, reg);
        return cmd_run(o, reg);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "fusebench: %s\n", e.what());
        return exit_usage;
    } catch (const cuda_error& e) {
        std::fprintf(stderr, "fusebench: CUDA error outside any variant: %s\n", e.what());
        return exit_no_gpu;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fusebench: internal error: %s\n", e.what());
        return exit_internal;
    }
}

}  // namespace fusebench
