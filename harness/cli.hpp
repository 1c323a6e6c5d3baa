// The `fusebench` command line. Exit codes (documented in README.md):
//   0  every selected variant passed (or was skipped by its declared requirements)
//   1  at least one correctness failure or error
//   2  bad usage or input (unknown suite, bad dtype, unparsable value, unreadable file)
//   3  no usable CUDA GPU
//   4  internal failure of the harness (e.g. the report cannot be written)
//   5  a measurement required by --require-counters is unavailable
#pragma once

#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "harness/timing.hpp"

#include <cstddef>
#include <cstdint>

#include <string>
#include <vector>

namespace fusebench {

enum exit_code : int {
    exit_ok = 0,
    exit_correctness = 1,
    exit_usage = 2,
    exit_no_gpu = 3,
    exit_internal = 4,
    exit_required_measurement = 5,
    exit_interrupted = 6,  // SIGINT or SIGTERM: the report keeps every case that finished
};

int run_cli(int argc, char** argv, const registry& reg);

// The options `run` and `gbench` share: the selection filters (--suite, --variant, --case,
// --dtype, --quick), --seed, --device and --mode.
struct shared_options {
    selection_filter& filter;
    std::uint64_t& seed;
    bool& seed_given;
    int& device;
    cache_mode& mode;
};
// When args[i] is one of the shared options, consumes it (and its value, advancing i) into `o`
// and returns true; returns false for any other argument. Bad values throw usage_error.
bool parse_shared_option(const std::vector<std::string>& args, std::size_t& i, const shared_options& o);

// "a,b,,c" -> {"a", "b", "c"}: the list form of every multi-valued option.
std::vector<std::string> split_commas(const std::string& s);

}  // namespace fusebench
