// Small helpers shared by suite files.
#pragma once

#include "harness/dtype.hpp"
#include "kernels/common/elem.hpp"

#include <stdexcept>
#include <string>

namespace fusebench {

inline kernels::elem to_kernel_elem(dtype t) {
    switch (t) {
        case dtype::f32: return kernels::elem::f32;
        case dtype::f16: return kernels::elem::f16;
        case dtype::bf16: return kernels::elem::bf16;
        default: break;
    }
    throw std::invalid_argument("no kernel element type for " + std::string(dtype_name(t)));
}

}  // namespace fusebench
