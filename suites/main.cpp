// fusebench command-line entry point: the built-in families on the harness CLI (report commands
// need no registry; fusebench::run_main dispatches them).
#include "fusebench/fusebench.hpp"

int main(int argc, char** argv) {
    fusebench::registry reg;
    fusebench::register_all(reg);
    return fusebench::run_main(argc, argv, reg);
}
