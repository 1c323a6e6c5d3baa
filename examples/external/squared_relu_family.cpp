// A family of the example's own: squared ReLU, y = max(x, 0)^2 over [rows, cols], with its fp64
// reference, cases (and shapes from the command line), tolerance, an unfused baseline and a fused
// variant.
#include "my_variants.hpp"

#include "my_kernels.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace example {

elem to_elem(fusebench::dtype t);
void check(cudaError_t e, const char* what);

namespace {

using fusebench::case_desc;
using fusebench::dtype;

std::size_t elements(const case_desc& c) {
    return static_cast<std::size_t>(c.dim("rows")) * static_cast<std::size_t>(c.dim("cols"));
}

case_desc make(dtype t, std::int64_t rows, std::int64_t cols, bool quick, bool timed) {
    case_desc c;
    c.name = std::to_string(rows) + "x" + std::to_string(cols);
    c.type = t;
    c.dims = {{"rows", rows}, {"cols", cols}};
    c.quick = quick;
    c.timed = timed;
    return c;
}

fusebench::traffic_model passes(const case_desc& c, double reads, double writes) {
    const double bytes = static_cast<double>(elements(c)) * static_cast<double>(fusebench::dtype_size(c.type));
    fusebench::traffic_model m;
    m.bytes_read = reads * bytes;
    m.bytes_written = writes * bytes;
    m.flops = 2.0 * static_cast<double>(elements(c));
    return m;
}

}  // namespace

fusebench::suite squared_relu_suite() {
    fusebench::suite s;
    s.name = "squared_relu";
    s.family = "squared ReLU (example family)";
    s.description = "y = max(x, 0)^2 element-wise over [rows, cols], fp32 math, y rounded to the storage dtype.";
    s.semantics = "NaN propagates; +inf gives +inf; results above the dtype's range are +inf.";
    s.default_run = false;  // run it with --suite squared_relu
    s.cases = [] {
        std::vector<case_desc> out;
        for (dtype t : {dtype::f32, dtype::bf16, dtype::f16}) {
            out.push_back(make(t, 4096, 8192, false, true));
            out.push_back(make(t, 128, 4096, true, true));
            out.push_back(make(t, 3, 7, true, false));
            out.push_back(make(t, 1, 1, true, false));
        }
        return out;
    };
    auto spec = [](const case_desc& c, const char* name) {
        return fusebench::tensor_spec{name, c.type, {c.dim("rows"), c.dim("cols")}, 0, -1};
    };
    s.input_specs = [spec](const case_desc& c) { return std::vector<fusebench::tensor_spec>{spec(c, "x")}; };
    s.output_specs = [spec](const case_desc& c) { return std::vector<fusebench::tensor_spec>{spec(c, "y")}; };
    s.generate = [](const case_desc&, const fusebench::rng& r, std::vector<fusebench::host_tensor>& in) {
        for (std::size_t i = 0; i < in[0].numel(); ++i) in[0].set(i, 4.0 * r.normal(i));
    };
    s.reference = [](const case_desc&, const std::vector<fusebench::host_tensor>& in) {
        std::vector<double> y(in[0].numel());
        for (std::size_t i = 0; i < y.size(); ++i) {
            const double x = in[0].get(i);  // the stored (rounded) input
            const double r = std::isnan(x) ? x : (x > 0 ? x : 0.0);
            y[i] = r * r;
        }
        return std::vector<std::vector<double>>{std::move(y)};
    };
    // One rounding of an fp32 product: half an ulp of the storage dtype, plus fp32's own rounding.
    s.tolerance.per_dtype = {{dtype::f32, {2.4e-7, 0, 1}}, {dtype::bf16, {3.9e-3 + 1.2e-7, 0, 1}}, {dtype::f16, {4.9e-4 + 1.2e-7, 0, 1}}};

    fusebench::shape_support sh;
    sh.axes = {{"rows", "rows", 1, 2147483647, std::nullopt, ""}, {"cols", "elements per row", 1, 2147483647, std::nullopt, ""}};
    sh.dtypes = {dtype::f32, dtype::bf16, dtype::f16};
    sh.default_dtypes = {dtype::bf16};
    sh.make_case = [](const fusebench::user_shape& u, dtype t) { return make(t, u.dims.at("rows"), u.dims.at("cols"), false, true); };
    s.shapes = sh;

    fusebench::variant naive;
    naive.name = "naive";
    naive.role = fusebench::variant_role::baseline;
    naive.description = "unfused: relu kernel writes max(x, 0), square kernel reads it back";
    naive.launch = [](const fusebench::launch_args& a) {
        check(launch_squared_relu_unfused(to_elem(a.c.type), a.in[0], a.workspace, a.out[0], elements(a.c), a.stream),
              "squared_relu naive");
    };
    naive.model = [](const case_desc& c) { return passes(c, 2, 2); };
    naive.workspace_bytes = [](const case_desc& c) { return elements(c) * fusebench::dtype_size(c.type); };
    s.variants.push_back(naive);

    fusebench::variant fused;
    fused.name = "fused";
    fused.description = "one pass: y = max(x, 0)^2";
    fused.launch = [](const fusebench::launch_args& a) {
        check(launch_squared_relu_fused(to_elem(a.c.type), a.in[0], a.out[0], elements(a.c), a.stream), "squared_relu fused");
    };
    fused.model = [](const case_desc& c) { return passes(c, 1, 1); };
    s.variants.push_back(fused);
    return s;
}

}  // namespace example
