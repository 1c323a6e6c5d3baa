// fusebench::run_main: the command line over a registry (the fusebench executable's main, and the
// entry point of programs that add their own variants or families).
#include "fusebench/fusebench.hpp"
#include "reports/report_tools.hpp"

namespace fusebench {

int run_main(int argc, char** argv, registry& reg) {
    if (argc >= 2 && reports::is_report_command(argv[1])) return reports::run_report_command(argc, argv);
    return run_cli(argc, argv, reg);
}

}  // namespace fusebench
