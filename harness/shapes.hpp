// Shapes from the command line: `--shape SUITE:name=value,...` and `--shapes FILE`, checked against
// the suite's declared axes and options (harness/registry.hpp, shape_support).
//
// Grammar of one shape: [SUITE ':'] item (',' item)*, item = name '=' value; spaces around the
// separators are ignored. Axis values are decimal integers within the axis's [min, max]; option
// values are one of the option's declared values. Every problem (unknown suite or name, a name
// given twice, a missing required axis, zero, negative, non-integer or overflowing sizes, an
// element count past 2^62, a value the suite's own check refuses) is a usage_error with one line
// naming the shape and the problem; the CLI prints it and exits 2.
#pragma once

#include "harness/registry.hpp"

#include <string>
#include <vector>

namespace fusebench {

// `candidates`: the suites a shape without a SUITE prefix may belong to (it must be exactly one).
user_shape parse_user_shape(const registry& reg, const std::vector<const suite*>& candidates, const std::string& text);

// The non-empty, non-comment lines of a shapes file ('#' starts a comment), each one shape; a
// missing or unreadable file, or one without any shape, is a usage_error.
std::vector<std::string> read_shapes_file(const std::string& path);

// One line per axis and option, for `fusebench list` and errors: "tokens (1..2147483647, required)".
std::vector<std::string> describe_shape_support(const shape_support& s);

}  // namespace fusebench
