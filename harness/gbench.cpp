#include "harness/gbench.hpp"

#include "harness/cli.hpp"
#include "harness/cuda_check.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"
#include "harness/device_info.hpp"
#include "harness/rng.hpp"
#include "harness/runner.hpp"
#include "harness/timing.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <tuple>

namespace fusebench {

split_args split_gbench_args(int argc, char** argv) {
    split_args out;
    out.benchmark.push_back(argc > 0 ? argv[0] : "fusebench");
    out.fusebench.push_back(argc > 0 ? argv[0] : "fusebench");
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        (a.rfind("--benchmark_", 0) == 0 ? out.benchmark : out.fusebench).push_back(a);
    }
    return out;
}

std::string gbench_name(const std::string& suite, const case_desc& c, const std::string& variant) {
    return suite + "/" + c.name + "/" + std::string(dtype_name(c.type)) + "/" + variant;
}

namespace {

struct gbench_options {
    selection_filter filter;
    std::uint64_t seed = 0;
    bool seed_given = false;
    int device = 0;
    cache_mode mode = cache_mode::cold;
};

gbench_options parse_gbench(const std::vector<std::string>& args) {
    gbench_options o;
    const shared_options shared{o.filter, o.seed, o.seed_given, o.device, o.mode};
    for (std::size_t i = 2; i < args.size(); ++i) {  // args[1] is "gbench"
        if (!parse_shared_option(args, i, shared)) {
            throw usage_error("gbench: unknown option '" + args[i] + "' (selection options as for run, plus --benchmark_*)");
        }
    }
    return o;
}

// Device buffers for timing one variant on one case: the same inputs the verification used (same
// case seed), outputs and workspace. Move-only through the device_buffer members.
struct prepared_case {
    std::vector<device_buffer> inputs, outputs;
    device_buffer workspace;
    std::vector<const void*> in_ptrs;
    std::vector<void*> out_ptrs;
    // In-place outputs are reloaded from their input before each iteration, outside the timed
    // window: (output pointer, pristine input pointer, bytes).
    std::vector<std::tuple<void*, const void*, std::size_t>> reloads;

    void reload(cudaStream_t stream) const {
        for (const auto& [dst, src, bytes] : reloads) {
            CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
        }
    }
};

std::unique_ptr<prepared_case> prepare(const suite& s, const case_desc& c, const variant& v, std::uint64_t run_seed) {
    auto p = std::make_unique<prepared_case>();
    std::vector<host_tensor> host;
    for (const auto& spec : s.input_specs(c)) host.emplace_back(spec);
    s.generate(c, rng(case_seed(run_seed, s.name, c)), host);
    for (const auto& t : host) {
        // The spec's misalignment is kept: the kernel runs on the pointers it was verified on.
        p->inputs.emplace_back(t.spec.misalign_bytes + t.data.size());
        void* d = p->inputs.back().bytes_ptr() + t.spec.misalign_bytes;
        CUDA_CHECK(cudaMemcpy(d, t.data.data(), t.data.size(), cudaMemcpyHostToDevice));
        p->in_ptrs.push_back(d);
    }
    const auto pristine_inputs = p->in_ptrs;
    for (const auto& spec : s.output_specs(c)) {
        p->outputs.emplace_back(spec.misalign_bytes + spec.bytes());
        void* d = p->outputs.back().bytes_ptr() + spec.misalign_bytes;
        p->out_ptrs.push_back(d);
        if (spec.alias_of_input >= 0) {
            const auto in = static_cast<std::size_t>(spec.alias_of_input);
            p->in_ptrs[in] = d;
            p->reloads.emplace_back(d, pristine_inputs[in], spec.bytes());
        }
    }
    p->workspace = device_buffer(v.workspace_bytes ? v.workspace_bytes(c) : 0);
    return p;
}

}  // namespace

int run_gbench(int argc, char** argv, const registry& reg) {
    const split_args args = split_gbench_args(argc, argv);
    gbench_options o = parse_gbench(args.fusebench);
    const auto items = select_work(reg, o.filter);
    if (!o.seed_given) o.seed = fresh_seed();
    if (cuda_device_count() == 0) {
        std::fprintf(stderr, "fusebench: no CUDA GPU found (no driver or no device): nothing was run\n");
        return exit_no_gpu;
    }
    CUDA_CHECK(cudaSetDevice(o.device));
    const device_info dev = query_device(o.device);
    std::string tracer_reason;
    std::unique_ptr<activity_tracer> tracer = activity_tracer::create(tracer_reason);

    // Verify first: only variants that pass become benchmarks.
    run_options verify;
    verify.seed = o.seed;
    verify.verify_only = true;
    runner run(dev, verify);
    struct entry {
        const suite* s;
        case_desc c;
        const variant* v;
    };
    std::vector<entry> entries;
    std::size_t failures = 0;
    for (const auto& item : items) {
        if (!item.c.timed) continue;
        const auto rs = run.run_item(item);
        for (std::size_t k = 0; k < rs.size(); ++k) {
            if (rs[k].result == outcome::pass) {
                entries.push_back({item.s, item.c, item.variants[k]});
            } else if (rs[k].result != outcome::skipped && rs[k].must_be_caught_by.empty()) {
                ++failures;
                std::fprintf(stderr, "fusebench: %s not benchmarked: %s: %s\n",
                             gbench_name(rs[k].suite, rs[k].c, rs[k].variant).c_str(), to_string(rs[k].result),
                             rs[k].reason.c_str());
            }
        }
        if (run.context_lost()) {
            std::fprintf(stderr, "fusebench: the CUDA context was lost (%s); benchmarking what passed before it\n",
                         run.context_lost_reason().c_str());
            break;
        }
    }
    if (run.context_lost()) return exit_correctness;

    cuda_stream stream;
    l2_flusher flusher(dev.l2_bytes, dev.sm_count);
    cuda_event start, stop;
    const cache_mode mode = o.mode;
    const std::uint64_t seed = o.seed;
    activity_tracer* tr = tracer.get();
    // Verification (concurrent records, for the stream-order check) is done: time from
    // uninstrumented KIND_KERNEL records, as `run` does.
    if (tr) tr->set_serial(true);
    for (const auto& e : entries) {
        auto* bench = benchmark::RegisterBenchmark(
            gbench_name(e.s->name, e.c, e.v->label()).c_str(), [e, seed, mode, tr, &stream, &flusher, &start, &stop](benchmark::State& state) {
                const auto p = prepare(*e.s, e.c, *e.v, seed);
                const cudaStream_t st = stream.get();
                const launch_args a{e.c, p->in_ptrs, p->out_ptrs, p->workspace.get(), p->workspace.size(), st};
                e.v->launch(a);  // warm-up (module load, first-touch)
                CUDA_CHECK(cudaDeviceSynchronize());
                for (auto _ : state) {
                    p->reload(st);
                    if (mode == cache_mode::cold) flusher.flush(st);
                    CUDA_CHECK(cudaDeviceSynchronize());
                    double us = 0;
                    if (tr) {
                        tr->begin();
                        e.v->launch(a);
                        us = tr->end().span_us;  // first kernel start -> last kernel end, any stream
                    } else {
                        start.record(st);
                        e.v->launch(a);
                        stop.record(st);
                        CUDA_CHECK(cudaEventSynchronize(stop.get()));
                        us = 1000.0 * stop.elapsed_ms_since(start);
                    }
                    state.SetIterationTime(us * 1e-6);
                }
                const traffic_model m = e.v->model(e.c);
                state.SetBytesProcessed(static_cast<std::int64_t>((m.bytes_read + m.bytes_written) * static_cast<double>(state.iterations())));
                state.counters["model_bytes"] = m.bytes_read + m.bytes_written;
            });
        bench->UseManualTime()->Unit(benchmark::kMicrosecond);
    }

    std::vector<char*> gb_argv;
    std::vector<std::string> gb_args = args.benchmark;
    for (auto& s : gb_args) gb_argv.push_back(s.data());
    int gb_argc = static_cast<int>(gb_argv.size());
    benchmark::Initialize(&gb_argc, gb_argv.data());
    benchmark::AddCustomContext("fusebench_seed", std::to_string(seed));
    benchmark::AddCustomContext("fusebench_device", dev.name);
    benchmark::AddCustomContext("fusebench_timer", tr ? "cupti_activity span (KIND_KERNEL records)" : "cuda_events (" + tracer_reason + ")");
    benchmark::AddCustomContext("fusebench_cache_mode", to_string(mode));
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return failures ? exit_correctness : exit_ok;
}

}  // namespace fusebench
