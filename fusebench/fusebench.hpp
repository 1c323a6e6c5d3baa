// fusebench as a library, for a program of your own: register more variants of the built-in
// families or families of your own, then hand over to the command line (run, list, gbench,
// compare, table, merge: everything the fusebench executable does).
//
//   #include <fusebench/fusebench.hpp>
//   int main(int argc, char** argv) {
//       fusebench::registry reg;
//       fusebench::register_all(reg);                       // the built-in families
//       reg.add_variant("glu", my_glu_variant());           // a kernel of yours in a built-in family
//       reg.add(my_family());                               // a family of yours
//       return fusebench::run_main(argc, argv, reg);
//   }
//
// CMake: find_package(fusebench) (after `cmake --install`) or add_subdirectory(fusebench), then
// target_link_libraries(your_program PRIVATE fusebench::main). examples/external is a complete one.
#pragma once

#include "harness/cli.hpp"
#include "harness/registry.hpp"
#include "harness/tensor.hpp"
#include "suites/suites.hpp"

namespace fusebench {

// The fusebench executable's main on a registry of your own: report commands (compare, table,
// merge) need none; the others run on `reg`. Returns the documented exit code.
int run_main(int argc, char** argv, registry& reg);

}  // namespace fusebench
