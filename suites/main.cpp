// fusebench command-line entry point: the report tools (compare, table, merge) read reports and
// need no registry; everything else builds the registry and hands over to the harness CLI.
#include "harness/cli.hpp"
#include "reports/report_tools.hpp"
#include "suites/suites.hpp"

int main(int argc, char** argv) {
    if (argc >= 2 && fusebench::reports::is_report_command(argv[1])) return fusebench::reports::run_report_command(argc, argv);
    fusebench::registry reg;
    fusebench::register_all(reg);
    return fusebench::run_cli(argc, argv, reg);
}
