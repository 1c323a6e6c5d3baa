// A kernel written outside fusebench (my_kernels.cu) as a variant of the built-in glu family: the
// family's cases, inputs (gate, up), output (y), fp64 reference, tolerance and baseline do the
// rest.
#include "my_variants.hpp"

#include "my_kernels.hpp"

#include <stdexcept>
#include <string>

namespace example {

elem to_elem(fusebench::dtype t) {
    switch (t) {
        case fusebench::dtype::f32: return elem::f32;
        case fusebench::dtype::bf16: return elem::bf16;
        case fusebench::dtype::f16: return elem::f16;
        default: throw std::invalid_argument("example kernels take fp32, bf16 and fp16");
    }
}

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

fusebench::variant my_swiglu_variant() {
    fusebench::variant v;
    v.name = "my_swiglu";
    v.role = fusebench::variant_role::fused;
    v.description = "example: one grid-stride pass, scalar loads, silu in fp32 (examples/external)";
    v.launch = [](const fusebench::launch_args& a) {
        const std::size_t n = static_cast<std::size_t>(a.c.dim("tokens")) * static_cast<std::size_t>(a.c.dim("inter"));
        check(launch_my_swiglu(to_elem(a.c.type), a.in[0], a.in[1], a.out[0], n, a.stream), "my_swiglu");
    };
    // Compulsory traffic: gate and up read once, y written once; silu and the product, 4 flops.
    v.model = [](const fusebench::case_desc& c) {
        const double n = static_cast<double>(c.dim("tokens")) * static_cast<double>(c.dim("inter"));
        const double el = static_cast<double>(fusebench::dtype_size(c.type));
        fusebench::traffic_model m;
        m.bytes_read = 2 * n * el;
        m.bytes_written = n * el;
        m.flops = 4 * n;
        return m;
    };
    // The glu family also has GeGLU cases (param "act" 1 and 2): this kernel computes SwiGLU only.
    v.req.supports = [](const fusebench::case_desc& c) -> std::optional<std::string> {
        if (c.param("act", 0) != 0) return std::string("SwiGLU only");
        return std::nullopt;
    };
    v.req.domain = "SwiGLU cases, fp32/bf16/fp16, any shape and alignment";
    return v;
}

}  // namespace example
