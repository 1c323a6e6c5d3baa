// What the example adds to fusebench.
#pragma once

#include <fusebench/fusebench.hpp>

namespace example {

fusebench::variant my_swiglu_variant();  // a new variant of the built-in glu family
fusebench::suite squared_relu_suite();   // a family of its own

}  // namespace example
