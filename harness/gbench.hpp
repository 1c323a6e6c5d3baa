// `fusebench gbench`: Google Benchmark drives the timed runs. Every selected (suite, case, dtype,
// variant) that passes verification becomes one benchmark registered with RegisterBenchmark and
// UseManualTime, fed by the harness's GPU timer (CUPTI activity span, CUDA events as fallback),
// so --benchmark_filter, --benchmark_repetitions, --benchmark_min_time and Google Benchmark's
// console and JSON reporters work as their users expect. `fusebench run` and its report stay the
// primary artifact; this front-end is for users who live in Google Benchmark's tooling.
#pragma once

#include "harness/registry.hpp"

#include <string>
#include <vector>

namespace fusebench {

// argv[1] is "gbench". Selection options as for `run` (--suite, --variant, --dtype, --case,
// --quick, --seed, --device, --mode cold|hot); every --benchmark_* option goes to Google
// Benchmark. Exit codes as for `run` (0, 1 when a selected variant fails verification, 2, 3).
int run_gbench(int argc, char** argv, const registry& reg);

// Splits argv into Google Benchmark's options (--benchmark_*) and fusebench's; both keep argv[0].
struct split_args {
    std::vector<std::string> benchmark, fusebench;
};
split_args split_gbench_args(int argc, char** argv);

// The benchmark's name: "<suite>/<case>/<dtype>/<variant>".
std::string gbench_name(const std::string& suite, const case_desc& c, const std::string& variant);

}  // namespace fusebench
