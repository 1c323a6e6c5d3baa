#include "harness/cli.hpp"

#include "harness/parallel.hpp"
#include "harness/progress.hpp"
#include "harness/shapes.hpp"

#include "fusebench/build_info.hpp"
#include "harness/ceilings.hpp"
#include "harness/cupti_counters.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/sm_clock.hpp"
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/gbench.hpp"
#include "harness/report.hpp"
#include "harness/rng.hpp"
#include "harness/parallel.hpp"
#include "harness/runner.hpp"
#include "harness/table.hpp"

#include <algorithm>
#include <signal.h>
#include <csignal>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace fusebench {

namespace {

const char* usage_text =
    "usage: fusebench <command> [options]\n"
    "\n"
    "commands:\n"
    "  list                 suites, variants (with their declared domains) and cases\n"
    "  run                  verify and time the selected variants, print the table, write the report\n"
    "  compare BASE NEW     regression gate between two reports: exit 1 on a correctness regression or SLOWER\n"
    "  table R [R ...]      Markdown/CSV tables, one per suite and dtype, variants as columns\n"
    "  merge OUT IN [IN..]  join the reports of shards, GPUs or machines into OUT\n"
    "  gbench               the same selection as Google Benchmark benchmarks (UseManualTime fed by\n"
    "                       the CUPTI timer): selection options as for run, plus any --benchmark_*\n"
    "  help                 this text\n"
    "  version              tool version and git commit\n"
    "\n"
    "run options:\n"
    "  --suite NAME[,NAME]  suites to run (default: every default suite)\n"
    "  --variant NAME[,..]  variants to run (default: all)\n"
  "  --config NAME[,..]   tuning configurations of the variants that declare them (default: all)\n"
    "  --dtype T[,T]        fp32, bf16, fp16 (default: all)\n"
    "  --case SUBSTR[,..]   cases whose name contains SUBSTR (default: all)\n"
    "  --quick              small shapes only\n"
    "  --full               the complete sweep: every case and variant, with those marked\n"
    "                       \"full sweep only\" in `fusebench list` (README \"What the default run covers\")\n"
  "  --shape SPEC         run this shape only (repeatable): SUITE:name=value,... with the suite's named\n"
  "                       dimensions and options (`fusebench list` shows them), e.g.\n"
  "                       glu:tokens=8192,inter=28672,act=swiglu; SUITE: may be left out with one --suite\n"
  "  --shapes FILE        one SPEC per line ('#' comments); with --shape, the selection is the shapes\n"
  "                       given, in --dtype's dtypes or the suite's default ones\n"
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
    "  --no-prefetch        prepare each case's inputs and fp64 reference only when it runs (by default\n"
    "                       the next case's are prepared in the background, at low priority on all but\n"
    "                       two cores, while the current case runs on the GPU)\n"
    "  --device N           CUDA device ordinal (default 0)\n"
    "  --shard I/N          run only shard I of N (1-based) of the selection; merge the reports later\n"
    "  --no-ceilings        skip measuring the device's ceilings\n"
    "  --no-counters        skip the hardware-counter pass\n"
    "  --compute-counters   add the compute metric set (sm__throughput, pipe utilizations; many passes)\n"
    "  --require-counters   exit 5 when the counters cannot be read (default: null with a reason)\n"
    "  --no-cupti-timing    time with CUDA events instead of CUPTI activity records\n"
    "  --concurrent-kernel-timing\n"
    "                       time from CONCURRENT_KERNEL records (kernels of different streams overlap, but\n"
    "                       CUPTI instruments each kernel: kernels of many short blocks run slower) instead\n"
    "                       of the default KIND_KERNEL records (uninstrumented, kernels serialized)\n"
    "  --no-isolation       run in this process; by default worker processes run the cases and a\n"
    "                       fresh one continues after a variant corrupts the CUDA context\n"
    "\n"
    "list options: --suite, --variant, --dtype, --case, --quick, --full filter the same way.\n"
    "\n"
    "compare options (README \"Three uses\"; exit 0 no regression, 1 regression, 2 bad input):\n"
    "  --policy PATH        thresholds (default: reports/policy.json of the source tree, 5%)\n"
    "  --threshold F        global threshold as a fraction (0.05 = 5%), overrides the policy's\n"
    "  --all                list every result, not only the notable ones\n"
    "  --markdown PATH      Markdown for a pull-request comment or CI step summary\n"
    "  --json PATH          the comparison as JSON\n"
    "  --junit PATH         JUnit XML, one testcase per result\n"
    "  --suite S,.. --case SUBSTR,.. --dtype T,.. --variant V,..\n"
    "                       compare only these results (as run selects them); the rest do not count\n"
    "table options: --labels L1,L2 (one per report), --suite S,.., --case SUBSTR,.., --dtype T,.., --variant V,..,\n"
    "               --markdown PATH, --csv DIR\n"
    "merge options: --force (different tool versions or repeated results), --overwrite (OUT exists)\n";

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
    bool isolate = true;  // run in worker processes (crash isolation)
    // Internal: set by the isolating parent for its worker processes.
    std::string worker_out, worker_prior, worker_ceilings;
    std::size_t worker_start = 0, worker_skip_variants = 0;
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
    const std::vector<std::string> args(argv, argv + argc);
    const shared_options shared{o.filter, o.run.seed, o.seed_given, o.device, o.run.mode};
    for (std::size_t i = 2; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw usage_error(a + " needs a value");
            return args[++i];
        };
        if (parse_shared_option(args, i, shared)) {
            continue;
        } else if (a == "--json") {
            o.json_path = value();
            if (o.json_path.empty()) throw usage_error("--json: empty path");
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
        } else if (a == "--no-prefetch") {
            o.run.prefetch = false;
        } else if (a == "--profile-once") {
            o.run.profile_once = true;
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
        } else if (a == "--concurrent-kernel-timing") {
            o.run.serial_kernel_records = false;
        } else if (a == "--no-isolation") {
            o.isolate = false;
        } else if (a == "--worker-out") {
            o.worker_out = value();
        } else if (a == "--worker-prior") {
            o.worker_prior = value();
        } else if (a == "--worker-ceilings") {
            o.worker_ceilings = value();
        } else if (a == "--worker-start") {
            o.worker_start = static_cast<std::size_t>(parse_u64(a, value()));
        } else if (a == "--worker-skip-variants") {
            o.worker_skip_variants = static_cast<std::size_t>(parse_u64(a, value()));
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
                std::printf("  variant %-22s %-8s %s%s\n", v->label().c_str(), to_string(v->role),
                            v->req.domain.empty() ? "domain: every case" : ("domain: " + v->req.domain).c_str(),
                            v->full_only ? " (full sweep only)" : "");
            }
            if (it.s->shapes) {
                for (const auto& line : describe_shape_support(*it.s->shapes)) std::printf("  --shape %s\n", line.c_str());
            }
        }
        std::printf("  case %-40s %-5s %s%s%s\n", it.c.name.c_str(), std::string(dtype_name(it.c.type)).c_str(),
                    it.c.input_kind.c_str(), it.c.timed ? "" : " (verified, not timed)", it.c.full_only ? " (full sweep only)" : "");
    }
    return exit_ok;
}

nlohmann::json settings_json(const cli_options& o) {
    nlohmann::json dtypes = nlohmann::json::array();
    for (auto t : o.filter.dtypes) dtypes.push_back(std::string(dtype_name(t)));
    return {{"command_line_filters",
             {{"suites", o.filter.suites}, {"variants", o.filter.variants}, {"cases", o.filter.cases},
              {"dtypes", dtypes}, {"quick", o.filter.quick}, {"shapes", o.filter.shapes}, {"configs", o.filter.configs}}},
            {"seed", o.run.seed},
            {"seed_source", o.seed_given ? "--seed" : "fresh"},
            {"mode", to_string(o.run.mode)},
            {"verify_only", o.run.verify_only},
            {"profile_once", o.run.profile_once},
            {"prefetch", o.run.prefetch},
            {"selection", o.filter.full ? "full" : "default"},
            {"host_cpus", available_cpus()},
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

// Prints the table, the outcome counts, each failure and the verifier self-test's catch rate from
// report results; returns the exit code they call for.
int print_summary(const nlohmann::json& results, const std::string& json_path, std::uint64_t seed) {
    std::fputs(format_results_table(results).c_str(), stdout);
    std::fputs(format_time_vs_random_summary(results).c_str(), stdout);
    const auto counts = count_outcomes(results);
    std::printf("\n%d passed, %d failed, %d errors, %d skipped; report: %s (seed %llu)\n", counts["pass"].get<int>(),
                counts["fail"].get<int>(), counts["error"].get<int>(), counts["skipped"].get<int>(), json_path.c_str(),
                static_cast<unsigned long long>(seed));
    std::size_t mutants = 0, caught = 0, real_failures = 0, mutants_check_off = 0;
    for (const auto& r : results) {
        const std::string o = r.value("outcome", "error");
        const bool flagged = o == "fail" || o == "error";
        const std::string reason = r["reason"].is_string() ? r["reason"].get<std::string>() : "";
        if (r.contains("mutant")) {
            if (o == "skipped") {  // not a case its bug needs, or its catching check is off in this run
                if (reason.rfind("not run: the check", 0) == 0) ++mutants_check_off;
                continue;
            }
            ++mutants;
            const bool ok = r["mutant"].value("caught", false);
            caught += ok;
            // For a mutant, a missed catch is the failure (a caught one is the expected outcome).
            if (!ok) {
                ++real_failures;
                std::printf("  MISSED %s %s %s: expected '%s', got %s: %s\n", r.value("case", "").c_str(),
                            r.value("dtype", "").c_str(), r.value("variant", "").c_str(),
                            r["mutant"].value("must_be_caught_by", "").c_str(), o.c_str(),
                            reason.empty() ? "(no reason)" : reason.c_str());
            }
            continue;
        }
        if (flagged) {
            ++real_failures;
            std::printf("  %s %s %s %s: %s: %s\n", o.c_str(), r.value("suite", "").c_str(), r.value("case", "").c_str(),
                        r.value("dtype", "").c_str(), r.value("variant", "").c_str(), reason.c_str());
        }
    }
    if (mutants) {
        std::printf("mutants: %zu of %zu caught by the expected check (catch rate %.1f%%)\n", caught, mutants,
                    100.0 * static_cast<double>(caught) / static_cast<double>(mutants));
    }
    if (mutants_check_off) {
        std::printf("  %zu mutant result(s) not run: their catching check is off in this run\n", mutants_check_off);
    }
    return real_failures ? exit_correctness : exit_ok;
}

// Exit code of a worker whose CUDA context was corrupted: the parent starts a fresh one.
constexpr int exit_worker_context_lost = 86;

nlohmann::json read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return nlohmann::json::parse(in);
}

// Runs the selection in this process. As a worker (o.worker_out set) it starts at item
// o.worker_start, skipping its first o.worker_skip_variants variants, includes the results of
// earlier workers (o.worker_prior) in the report it writes, reuses the run's ceilings
// (o.worker_ceilings), and appends one JSON line per finished case to o.worker_out.
// SIGINT / SIGTERM: in an isolated run, forwarded to the worker (a terminal's Ctrl-C reaches
// it anyway; `timeout` and batch systems signal this process only); the run then stops, keeps the
// cases that finished and writes the report with status "interrupted"; in a --no-isolation run the case running finishes first.
std::atomic<pid_t> g_worker_pid{0};
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void forward_stop_signal(int sig) {
    g_stop_signal = sig;
    const pid_t w = g_worker_pid.load();
    if (w > 0) kill(w, sig);
}

// SIGINT and SIGTERM go to forward_stop_signal while a run lasts; the earlier handlers and a clear
// flag come back when it ends (fusebench::run_main may run inside a program of its own).
class stop_signal_scope {
public:
    stop_signal_scope() {
        g_stop_signal = 0;
        struct sigaction stop {};
        stop.sa_handler = forward_stop_signal;
        sigemptyset(&stop.sa_mask);
        sigaction(SIGINT, &stop, &m_int);
        sigaction(SIGTERM, &stop, &m_term);
    }
    ~stop_signal_scope() {
        sigaction(SIGINT, &m_int, nullptr);
        sigaction(SIGTERM, &m_term, nullptr);
        g_worker_pid = 0;
    }
    stop_signal_scope(const stop_signal_scope&) = delete;
    stop_signal_scope& operator=(const stop_signal_scope&) = delete;

private:
    struct sigaction m_int {}, m_term {};
};

int run_in_process(cli_options o, const registry& reg) {
    auto items = select_work(reg, o.filter);  // usage errors before touching the GPU
    if (!o.seed_given) o.run.seed = fresh_seed();
    const bool worker = !o.worker_out.empty();

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
            if (!worker || o.worker_start == 0) {
                std::fprintf(stderr, "fusebench: hardware counters unavailable: %s (%s)\n",
                             tools.counters_failure.reason.c_str(), tools.counters_failure.detail.c_str());
            }
            if (o.require_counters) return exit_required_measurement;
        }
    }
    const bool tty = isatty(STDERR_FILENO) != 0;
    if (!worker || o.worker_start == 0) {
        std::fprintf(stderr, "fusebench %s: %s (cc %d.%d, %d SMs), seed %llu, %zu case(s)\n", build_info::tool_version,
                     dev.name.c_str(), dev.cc_major, dev.cc_minor, dev.sm_count,
                     static_cast<unsigned long long>(o.run.seed), items.size());
    } else {
        std::fprintf(stderr, "fusebench: fresh worker process resumes at case %zu of %zu\n", o.worker_start + 1, items.size());
    }

    report_context ctx;
    ctx.started_at = utc_now_iso8601();
    ctx.device = to_json(dev);
    ctx.settings = settings_json(o);
    if (!o.worker_ceilings.empty()) {
        ctx.ceilings = read_json_file(o.worker_ceilings);
    } else if (o.ceilings && !o.run.verify_only && !o.run.profile_once) {
        cuda_stream s;
        const auto t_ceilings = std::chrono::steady_clock::now();
        ctx.ceilings = to_json(measure_ceilings(o.device, s.get(), o.filter.quick));
        ctx.settings["ceilings_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_ceilings).count();
    } else {
        ctx.ceilings = nullptr;
    }
    if (ctx.ceilings.is_object()) {
        apply_ceilings(o.run, ctx.ceilings, dev.l2_bytes);
        if (o.worker_ceilings.empty()) {
            for (const auto& line : describe_ceilings(ctx.ceilings)) std::fprintf(stderr, "fusebench: %s\n", line.c_str());
        }
    }
    ctx.settings["timing_method"] = tracer ? "cupti_activity" : "cuda_events";
    ctx.settings["timing_method_reason"] = tracer ? "CUPTI activity tracing available" : tools.tracer_reason;
    // Cold samples are launched behind a stream gate (harness/timing.cpp); `compare` tells reports apart by it.
    ctx.settings["timing_launch_gate"] = true;
    ctx.settings["counters"] = !o.run.counters ? nlohmann::json("disabled")
                               : profiler       ? nlohmann::json(o.compute_counters ? "memory+compute" : "memory")
                                                : nlohmann::json("unavailable: " + tools.counters_failure.reason);
    const nlohmann::json prior = o.worker_prior.empty() ? nlohmann::json::array() : read_json_file(o.worker_prior);

    std::ofstream worker_lines;
    auto emit = [&](const nlohmann::json& line) {
        if (!worker) return;
        worker_lines << line.dump() << '\n';
        worker_lines.flush();
    };
    if (worker) {
        worker_lines.open(o.worker_out, std::ios::app);
        if (!worker_lines) throw std::runtime_error("cannot write " + o.worker_out);
        emit({{"type", "header"}, {"ceilings", ctx.ceilings}, {"device", ctx.device}});
    }

    std::vector<variant_result> results;
    // --no-isolation: a stop signal ends the run after the case running, with the report. A worker
    // keeps the default action: its parent collects what it finished.
    std::optional<stop_signal_scope> stop_signals;
    if (!worker) stop_signals.emplace();
    runner run(dev, o.run, tools);
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t first = worker ? o.worker_start : 0;
    progress_estimate eta(items, first);
    double last_plain_report = 0;
    auto checkpoint = [&] {
        try {
            write_json_atomic(o.json_path, make_report(ctx, results, prior));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fusebench: cannot write the report: %s\n", e.what());
            throw;
        }
    };
    // The report exists from the start (device, settings, ceilings; no results yet), so a run
    // stopped before its first suite ends still leaves them.
    try {
        checkpoint();  // status "running" until the loop ends
    } catch (const std::exception&) {
        return exit_internal;
    }
    // The variants' domain checks (cuDNN builds a plan per shape there) answered ahead, in the
    // background, in the order the items will run.
    run.warm_domain_checks(std::vector<selection_item>(items.begin() + static_cast<std::ptrdiff_t>(worker ? o.worker_start : 0), items.end()));
    try {
        for (std::size_t i = worker ? o.worker_start : 0; i < items.size(); ++i) {
            if (g_stop_signal && !worker) {
                ctx.status = "interrupted";
                ctx.status_reason = std::string(g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM") + " after " + std::to_string(i) +
                                    " of " + std::to_string(items.size()) + " cases: the results of the cases that finished are kept";
                checkpoint();
                if (tty) std::fprintf(stderr, "\r\033[K");
                std::fprintf(stderr, "fusebench: interrupted: %zu result(s) written to %s\n", results.size(), o.json_path.c_str());
                return exit_interrupted;
            }
            const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const std::string left = eta.left_text(i, el);
            if (tty) {
                std::fprintf(stderr, "\r[%zu/%zu %6.1fs%s] %s %s %s\033[K", i + 1, items.size(), el, left.c_str(),
                             items[i].s->name.c_str(), items[i].c.name.c_str(),
                             std::string(dtype_name(items[i].c.type)).c_str());
                std::fflush(stderr);
            } else if (i > first && el - last_plain_report >= 30) {
                // Logs (CI): a line at most every 30 s.
                last_plain_report = el;
                std::fprintf(stderr, "fusebench: [%zu/%zu] %.0f s%s, now %s %s %s\n", i + 1, items.size(), el, left.c_str(),
                             items[i].s->name.c_str(), items[i].c.name.c_str(), std::string(dtype_name(items[i].c.type)).c_str());
            }
            selection_item item = items[i];
            if (worker && i == o.worker_start && o.worker_skip_variants) {
                // The variants before these finished in the worker whose context was lost.
                item.variants.erase(item.variants.begin(),
                                    item.variants.begin() + static_cast<std::ptrdiff_t>(std::min(o.worker_skip_variants, item.variants.size())));
            }
            if (i + 1 < items.size()) run.prefetch(items[i + 1]);
            const auto t_item = std::chrono::steady_clock::now();
            auto rs = run.run_item(item);
            // What the phases do not cover (allocation and release between them, bookkeeping):
            // the item's wall time less its foreground phases, on its first result.
            if (!rs.empty()) {
                double covered = 0;
                for (const auto& r : rs) {
                    for (const auto& [k, v] : r.phase_seconds) {
                        if (!is_background_phase(k)) covered += v;
                    }
                }
                const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_item).count();
                rs.front().phase_seconds["unattributed"] = std::max(0.0, wall - covered);
            }
            nlohmann::json line = {{"type", "item"}, {"index", i}, {"skipped_variants", worker && i == o.worker_start ? o.worker_skip_variants : 0},
                                   {"results", nlohmann::json::array()}};
            std::size_t attempted = rs.size();
            for (std::size_t k = 0; k < rs.size(); ++k) {
                if (rs[k].reason.rfind("not run: the CUDA context was lost", 0) == 0 && attempted == rs.size()) attempted = k;
                line["results"].push_back(to_json(rs[k]));
            }
            line["attempted"] = attempted;
            emit(line);
            results.insert(results.end(), rs.begin(), rs.end());
            const bool suite_ends = i + 1 == items.size() || items[i + 1].s != items[i].s;
            if (suite_ends || run.context_lost()) {
                if (suite_ends) ctx.suites_completed.push_back(items[i].s->name);
                if (run.context_lost()) {
                    ctx.status = "context_lost";
                    ctx.status_reason = run.context_lost_reason();
                }
                checkpoint();
            }
            if (run.context_lost() && worker) {
                emit({{"type", "context_lost"}, {"index", i}, {"reason", run.context_lost_reason()}});
                if (tty) std::fprintf(stderr, "\r\033[K");
                return exit_worker_context_lost;
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
    ctx.status = run.context_lost() ? "context_lost" : "complete";
    ctx.status_reason = run.context_lost() ? run.context_lost_reason() : "";
    nlohmann::json report;
    try {
        report = make_report(ctx, results, prior);
        write_json_atomic(o.json_path, report);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fusebench: cannot write the report: %s\n", e.what());
        return exit_internal;
    }
    if (worker) {
        emit({{"type", "done"}});
        return exit_ok;  // the parent prints the table and decides the exit code
    }
    return print_summary(report["results"], o.json_path, o.run.seed);
}

// Results for the variants of a case whose worker process died without reporting them.
nlohmann::json lost_results(const selection_item& item, std::size_t skip, const std::string& why) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t k = skip; k < item.variants.size(); ++k) {
        const variant& v = *item.variants[k];
        variant_result r;
        r.suite = item.s->name;
        r.c = item.c;
        r.variant = v.name;
        r.config = v.config;
        r.role = v.role;
        r.description = v.description;
        r.must_be_caught_by = v.must_be_caught_by;
        r.model = v.model(item.c);
        r.result = outcome::error;
        r.reason = why;
        r.timing_null_reason = "not timed: " + why;
        for (const char* key : {"achieved_gbps", "achieved_tflops", "pct_of_copy_ceiling", "pct_of_floor", "pct_of_ceiling",
                                "arithmetic_intensity", "speedup_vs_baseline"}) {
            r.null_reasons[key] = why;
        }
        out.push_back(to_json(r));
    }
    return out;
}

// Crash isolation: this process never creates a CUDA context. It runs the selection in worker
// processes (this executable, `run --worker-out ...`); when a variant corrupts a worker's context
// (illegal address, trap) or the worker dies, a fresh worker resumes at the next variant, and the
// report keeps every result that finished.
int run_isolated(const cli_options& o, const registry& reg, int argc, char** argv) {
    const auto items = select_work(reg, o.filter);
    if (cuda_device_count() == 0) {
        std::fprintf(stderr, "fusebench: no CUDA GPU found (no driver or no device): nothing was run\n");
        return exit_no_gpu;
    }
    const std::uint64_t seed = o.seed_given ? o.run.seed : fresh_seed();
    char dir_template[] = "/tmp/fusebench-run-XXXXXX";
    const char* dir = mkdtemp(dir_template);
    if (!dir) throw std::runtime_error("cannot create a temporary folder for the worker processes");
    const std::string tmp = dir;
    const std::string lines_path = tmp + "/worker.jsonl", prior_path = tmp + "/prior.json", ceilings_path = tmp + "/ceilings.json";
    struct cleanup_t {
        std::string d;
        ~cleanup_t() { std::error_code ec; std::filesystem::remove_all(d, ec); }
    } cleanup{tmp};

    const stop_signal_scope stop_signals;

    nlohmann::json all = nlohmann::json::array();
    std::size_t start = 0, skip = 0, restarts = 0;
    std::optional<std::size_t> interrupted_at;  // the first case not finished when a stop signal came
    bool have_ceilings = false;
    std::string exe = "/proc/self/exe";
    for (;;) {
        write_json_atomic(prior_path, all);
        std::filesystem::remove(lines_path);
        std::vector<std::string> args{exe, "run"};
        for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
        if (!o.seed_given) {
            args.push_back("--seed");
            args.push_back(std::to_string(seed));
        }
        for (const auto& extra : std::vector<std::string>{"--worker-out", lines_path, "--worker-start", std::to_string(start),
                                                          "--worker-skip-variants", std::to_string(skip), "--worker-prior", prior_path}) {
            args.push_back(extra);
        }
        if (have_ceilings) {
            args.push_back("--worker-ceilings");
            args.push_back(ceilings_path);
        }
        std::vector<char*> cargs;
        for (auto& a : args) cargs.push_back(a.data());
        cargs.push_back(nullptr);
        pid_t pid = 0;
        if (g_stop_signal) break;
        if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargs.data(), environ) != 0) {
            throw std::runtime_error("cannot start a worker process");
        }
        g_worker_pid = pid;
        if (g_stop_signal) kill(pid, g_stop_signal);  // arrived between the check and the spawn
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        g_worker_pid = 0;

        // What the worker finished, case by case.
        std::optional<std::size_t> lost_at;
        std::size_t next = start;
        std::size_t next_skip = 0;
        bool done = false;
        std::ifstream in(lines_path);
        for (std::string line; std::getline(in, line);) {
            nlohmann::json j;
            try {
                j = nlohmann::json::parse(line);
            } catch (const nlohmann::json::exception&) {
                break;  // a line cut short by the crash
            }
            const std::string type = j.value("type", "");
            if (type == "header" && !have_ceilings) {
                write_json_atomic(ceilings_path, j["ceilings"]);
                have_ceilings = true;
            } else if (type == "item") {
                const std::size_t attempted = j.value("attempted", std::size_t{0});
                const auto& rs = j["results"];
                for (std::size_t k = 0; k < attempted && k < rs.size(); ++k) all.push_back(rs[k]);
                next = j["index"].get<std::size_t>() + 1;
                next_skip = 0;
                if (attempted < rs.size()) {  // the context was lost inside this case
                    next = j["index"].get<std::size_t>();
                    next_skip = j.value("skipped_variants", std::size_t{0}) + attempted;
                }
            } else if (type == "context_lost") {
                lost_at = j["index"].get<std::size_t>();
            } else if (type == "done") {
                done = true;
            }
        }
        const bool crashed = WIFSIGNALED(status);
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (done) break;
        if (g_stop_signal) {
            interrupted_at = next;
            break;
        }
        if (!crashed && code != exit_worker_context_lost) {
            // The worker stopped for a reason of its own (usage, no GPU, internal error, required
            // counters): it said why on stderr; its code is the run's.
            return code;
        }
        if (crashed && !lost_at && next < items.size()) {
            // Died inside case `next` without reporting: its remaining variants are lost.
            char why[160];
            std::snprintf(why, sizeof why, "the worker process died (signal %d) while running this case; its results are lost",
                          WTERMSIG(status));
            for (auto& r : lost_results(items[next], next == start ? skip : next_skip, why)) all.push_back(r);
            next_skip = 0;
            ++next;
        }
        if (next_skip >= items[std::min(next, items.size() - 1)].variants.size()) {
            ++next;
            next_skip = 0;
        }
        if (next >= items.size()) break;
        if (next == start && next_skip <= skip) throw std::runtime_error("a worker made no progress; stopping");
        ++restarts;
        std::fprintf(stderr, "fusebench: the CUDA context was lost; continuing in a fresh process (restart %zu)\n", restarts);
        start = next;
        skip = next_skip;
    }

    // The final report: the last worker's header fields, every result.
    nlohmann::json report;
    try {
        report = read_json_file(o.json_path);
    } catch (const std::exception&) {
        report = make_report(report_context{}, {}, nlohmann::json::array());
    }
    // The workers' lines carry their results as to_json wrote them: the pairs across cases (and
    // across workers) are made here, over every result.
    annotate_time_vs_random(all);
    report["results"] = all;
    report["summary"] = count_outcomes(all);
    report["settings"]["seed"] = seed;
    report["settings"]["seed_source"] = o.seed_given ? "--seed" : "fresh";
    report["settings"]["worker_restarts"] = restarts;
    report["status"] = "complete";
    report["status_reason"] = restarts ? nlohmann::json(std::to_string(restarts) + " worker restart(s) after lost CUDA contexts")
                                       : nlohmann::json(nullptr);
    if (g_stop_signal) {
        const std::size_t finished = interrupted_at.value_or(start);
        report["status"] = "interrupted";
        report["status_reason"] = std::string(g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM") + " after " +
                                  std::to_string(finished) + " of " + std::to_string(items.size()) +
                                  " cases: the results of the cases that finished are kept, the case running then and "
                                  "the ones after it are not in the report";
    }
    report["written_at"] = utc_now_iso8601();
    write_json_atomic(o.json_path, report);
    if (g_stop_signal) {
        std::fprintf(stderr, "\nfusebench: interrupted (%s): %zu result(s) of the finished cases written to %s\n",
                     g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM", all.size(), o.json_path.c_str());
        print_summary(all, o.json_path, seed);
        return exit_interrupted;
    }
    return print_summary(all, o.json_path, seed);
}

int cmd_run(const cli_options& o, const registry& reg, int argc, char** argv) {
    if (!o.worker_out.empty() || !o.isolate) return run_in_process(o, reg);
    return run_isolated(o, reg, argc, argv);
}

}  // namespace

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

bool parse_shared_option(const std::vector<std::string>& args, std::size_t& i, const shared_options& o) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw usage_error(a + " needs a value");
        return args[++i];
    };
    if (a == "--suite") {
        for (auto& s : split_commas(value())) o.filter.suites.push_back(s);
    } else if (a == "--variant") {
        for (auto& s : split_commas(value())) o.filter.variants.push_back(s);
    } else if (a == "--config") {
        for (auto& s : split_commas(value())) o.filter.configs.push_back(s);
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
    } else if (a == "--full") {
        o.filter.full = true;
    } else if (a == "--shape") {
        o.filter.shapes.push_back(value());
    } else if (a == "--shapes") {
        for (auto& line : read_shapes_file(value())) o.filter.shapes.push_back(line);
    } else if (a == "--seed") {
        o.seed = parse_u64(a, value());
        o.seed_given = true;
    } else if (a == "--device") {
        o.device = static_cast<int>(parse_double(a, value(), 0, 1024));
    } else if (a == "--mode") {
        const std::string m = value();
        if (m == "cold") o.mode = cache_mode::cold;
        else if (m == "hot") o.mode = cache_mode::hot;
        else throw usage_error("--mode: expected cold or hot, got '" + m + "'");
    } else {
        return false;
    }
    return true;
}

int run_cli(int argc, char** argv, const registry& reg) {
    // [report-tools dispatch] commands that read reports rather than run kernels go here.
    try {
        if (argc >= 2 && std::string(argv[1]) == "gbench") return run_gbench(argc, argv, reg);
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
        return cmd_run(o, reg, argc, argv);
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
