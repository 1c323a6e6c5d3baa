// fusebench command-line entry point: builds the registry and hands over to the harness CLI.
#include "harness/cli.hpp"
#include "suites/suites.hpp"

int main(int argc, char** argv) {
    fusebench::registry reg;
    fusebench::register_all(reg);
    return fusebench::run_cli(argc, argv, reg);
}
