// The `fusebench` command line. Exit codes (documented in README.md):
//   0  every selected variant passed (or was skipped by its declared requirements)
//   1  at least one correctness failure or error
//   2  bad usage or input (unknown suite, bad dtype, unparsable value, unreadable file)
//   3  no usable CUDA GPU
//   4  internal failure of the harness (e.g. the report cannot be written)
//   5  a measurement required by --require-counters is unavailable
#pragma once

#include "harness/registry.hpp"

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
};

int run_cli(int argc, char** argv, const registry& reg);

// "a,b,,c" -> {"a", "b", "c"}: the list form of every multi-valued option.
std::vector<std::string> split_commas(const std::string& s);

}  // namespace fusebench
