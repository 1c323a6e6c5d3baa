// The example's program: fusebench's built-in families, plus a variant and a family of its own,
// on fusebench's command line (run, list, gbench, compare, table, merge).
#include "my_variants.hpp"

int main(int argc, char** argv) {
    fusebench::registry reg;
    fusebench::register_all(reg);
    reg.add_variant("glu", example::my_swiglu_variant());
    reg.add(example::squared_relu_suite());
    return fusebench::run_main(argc, argv, reg);
}
