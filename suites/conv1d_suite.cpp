// The conv1d family: the Whisper encoder's dense convolutions (kernel 3, padding 1, stride 1 and
// 2, bias + GELU) and Mamba's depthwise causal convolution (width 2..4, bias + SiLU) with its
// decode step. Semantics: references/conv1d_reference.hpp.
//
// Not in the default run until it has been verified on a GPU (fusebench run --suite conv1d).
#include "harness/parallel.hpp"
#include "kernels/conv1d/conv1d.hpp"
#include "references/conv1d_reference.hpp"
#include "suites/suite_util.hpp"
#include "suites/suites.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace fusebench {
namespace {

namespace k = kernels;
namespace ref = references;

enum op_kind { op_dense = 0, op_depthwise = 1, op_decode = 2 };

int op_of(const case_desc& c) { return static_cast<int>(c.param("op", 0)); }

k::conv1d_dense_shape dense_shape(const case_desc& c) {
    return {static_cast<int>(c.dim("batch")), static_cast<int>(c.dim("cin")), static_cast<int>(c.dim("cout")),
            static_cast<int>(c.dim("length")), static_cast<int>(c.dim("stride"))};
}
k::conv1d_depthwise_shape dw_shape(const case_desc& c) {
    return {static_cast<int>(c.dim("batch")), static_cast<int>(c.dim("channels")),
            op_of(c) == op_decode ? 1 : static_cast<int>(c.dim("length")), static_cast<int>(c.dim("width"))};
}

case_desc dense_case(dtype t, std::int64_t b, std::int64_t ci, std::int64_t co, std::int64_t len, std::int64_t stride, bool quick,
                     bool timed) {
    case_desc c;
    c.name = "dense:b" + std::to_string(b) + ":" + std::to_string(ci) + "->" + std::to_string(co) + ":L" + std::to_string(len) + ":s" +
             std::to_string(stride);
    c.type = t;
    c.dims = {{"batch", b}, {"cin", ci}, {"cout", co}, {"length", len}, {"stride", stride}};
    c.params = {{"op", op_dense}};
    c.quick = quick;
    c.timed = timed;
    return c;
}
case_desc dw_case(dtype t, std::int64_t b, std::int64_t ch, std::int64_t len, std::int64_t width, bool quick, bool timed) {
    case_desc c;
    c.name = "depthwise:b" + std::to_string(b) + ":c" + std::to_string(ch) + ":L" + std::to_string(len) + ":w" + std::to_string(width);
    c.type = t;
    c.dims = {{"batch", b}, {"channels", ch}, {"length", len}, {"width", width}};
    c.params = {{"op", op_depthwise}};
    c.quick = quick;
    c.timed = timed;
    return c;
}
case_desc decode_case(dtype t, std::int64_t b, std::int64_t ch, std::int64_t width, bool quick, bool timed) {
    case_desc c;
    c.name = "decode:b" + std::to_string(b) + ":c" + std::to_string(ch) + ":w" + std::to_string(width);
    c.type = t;
    c.dims = {{"batch", b}, {"channels", ch}, {"width", width}};
    c.params = {{"op", op_decode}};
    c.quick = quick;
    c.timed = timed;
    return c;
}

// Timed: the Whisper encoder (80 mel channels -> 384 / 512 / 1280 at stride 1, then C -> C at
// stride 2, L = 3000, batch 1, 8, 16; 512 -> 512 at stride 1 too, the shape of the cuDNN target),
// depthwise channels 2048 .. 8192 at lengths 4096 and 65536, decode at batch 1 .. 64. Verified
// only: L = 1, 2, odd channel counts and lengths, every width.
std::vector<case_desc> conv1d_cases() {
    std::vector<case_desc> out;
    for (dtype t : {dtype::f32, dtype::bf16, dtype::f16}) {
        for (std::int64_t b : {1, 8, 16}) {
            for (std::int64_t c : {384, 512, 1280}) {
                out.push_back(dense_case(t, b, 80, c, 3000, 1, false, true));
                out.push_back(dense_case(t, b, c, c, 3000, 2, false, true));
            }
        }
        out.push_back(dense_case(t, 8, 512, 512, 3000, 1, false, true));
        for (std::int64_t stride : {1, 2}) {
            for (std::int64_t len : {1, 2, 7}) out.push_back(dense_case(t, 2, 3, 5, len, stride, true, false));
            out.push_back(dense_case(t, 1, 67, 129, 301, stride, true, false));  // partial channel and position tiles
        }
        for (std::int64_t ch : {2048, 4096, 8192}) out.push_back(dw_case(t, 1, ch, 4096, 4, false, true));
        out.push_back(dw_case(t, 1, 2048, 65536, 4, false, true));
        out.push_back(dw_case(t, 4, 4096, 4096, 4, false, true));
        for (std::int64_t w : {2, 3, 4}) {
            out.push_back(dw_case(t, 2, 8, 1, w, true, false));
            out.push_back(dw_case(t, 2, 8, 7, w, true, false));      // one partial chunk of 8
            out.push_back(dw_case(t, 1, 33, 1003, w, true, false));  // rows off the 16-byte grid
            out.push_back(dw_case(t, 2, 2048, 64, w, false, false));
            out.push_back(decode_case(t, 3, 33, w, true, false));
        }
        for (std::int64_t b : {1, 8, 64}) out.push_back(decode_case(t, b, 4096, 4, false, true));
        out.push_back(decode_case(t, 8, 8192, 4, false, true));
    }
    return out;
}

std::vector<tensor_spec> conv1d_inputs(const case_desc& c) {
    const dtype t = c.type;
    switch (op_of(c)) {
        case op_dense:
            return {{"x", t, {c.dim("batch"), c.dim("cin"), c.dim("length")}, 0, -1},
                    {"w", t, {c.dim("cout"), c.dim("cin"), 3}, 0, -1},
                    {"bias", t, {c.dim("cout")}, 0, -1}};
        case op_depthwise:
            return {{"x", t, {c.dim("batch"), c.dim("channels"), c.dim("length")}, 0, -1},
                    {"w", t, {c.dim("channels"), c.dim("width")}, 0, -1},
                    {"bias", t, {c.dim("channels")}, 0, -1}};
        default:
            return {{"x", t, {c.dim("batch"), c.dim("channels")}, 0, -1},
                    {"state", t, {c.dim("batch"), c.dim("channels"), c.dim("width") - 1}, 0, -1},
                    {"w", t, {c.dim("channels"), c.dim("width")}, 0, -1},
                    {"bias", t, {c.dim("channels")}, 0, -1}};
    }
}

std::vector<tensor_spec> conv1d_outputs(const case_desc& c) {
    const dtype t = c.type;
    switch (op_of(c)) {
        case op_dense: {
            const std::int64_t lout = static_cast<std::int64_t>(ref::conv1d_out_length(static_cast<std::size_t>(c.dim("length")),
                                                                                         static_cast<std::size_t>(c.dim("stride"))));
            return {{"y", t, {c.dim("batch"), c.dim("cout"), lout}, 0, -1}};
        }
        case op_depthwise: return {{"y", t, {c.dim("batch"), c.dim("channels"), c.dim("length")}, 0, -1}};
        default:
            return {{"y", t, {c.dim("batch"), c.dim("channels")}, 0, -1},
                    {"state_out", t, {c.dim("batch"), c.dim("channels"), c.dim("width") - 1}, 0, -1}};
    }
}

// x, state ~ N(0, 1); w ~ N(0, 1 / fan_in), so pre-activations are O(1) and the activations'
// curved region is exercised; bias ~ N(0, 0.1^2).
void conv1d_generate(const case_desc& c, const rng& r, std::vector<host_tensor>& in) {
    const int op = op_of(c);
    const double fan_in = op == op_dense ? 3.0 * static_cast<double>(c.dim("cin")) : static_cast<double>(c.dim("width"));
    const std::size_t wi = op == op_decode ? 2 : 1;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const rng g = r.fork(static_cast<std::uint64_t>(i));
        const double scale = i == wi ? 1.0 / std::sqrt(fan_in) : (i + 1 == in.size() ? 0.1 : 1.0);
        host_tensor& t = in[i];
        parallel_for(t.numel(), [&](std::size_t b, std::size_t e) {
            for (std::size_t j = b; j < e; ++j) t.set(j, scale * g.normal(j));
        });
    }
}

std::vector<double> as_doubles(const host_tensor& t) {
    std::vector<double> v(t.numel());
    parallel_for(v.size(), [&](std::size_t b, std::size_t e) {
        for (std::size_t j = b; j < e; ++j) v[j] = t.get(j);
    });
    return v;
}

std::vector<std::vector<double>> conv1d_reference_outputs(const case_desc& c, const std::vector<host_tensor>& in) {
    std::vector<std::vector<double>> ins;
    for (const auto& t : in) ins.push_back(as_doubles(t));
    const auto outs = conv1d_outputs(c);
    std::vector<std::vector<double>> y;
    for (const auto& o : outs) y.emplace_back(o.numel());
    switch (op_of(c)) {
        case op_dense: {
            const auto s = dense_shape(c);
            constexpr std::size_t oc = 64;
            const std::size_t chunks = (static_cast<std::size_t>(s.cout) + oc - 1) / oc;
            parallel_for(static_cast<std::size_t>(s.batch) * chunks, [&](std::size_t b, std::size_t e) {
                for (std::size_t item = b; item < e; ++item) {
                    const std::size_t bb = item / chunks, o0 = (item % chunks) * oc;
                    ref::conv1d_dense_reference(ins[0], ins[1], ins[2], s.batch, s.cin, s.cout, s.length, s.stride, y[0], bb, bb + 1, o0,
                                                std::min<std::size_t>(o0 + oc, s.cout));
                }
            }, 1);
            break;
        }
        case op_depthwise: {
            const auto s = dw_shape(c);
            const std::size_t rows = static_cast<std::size_t>(s.batch) * s.channels;
            parallel_for(rows, [&](std::size_t b, std::size_t e) {
                ref::conv1d_depthwise_reference(ins[0], ins[1], ins[2], s.channels, s.length, s.width, y[0], b, e);
            }, 16);
            break;
        }
        default: {
            const auto s = dw_shape(c);
            ref::conv1d_decode_reference(ins[0], ins[1], ins[2], ins[3], s.batch, s.channels, s.width, y[0], y[1]);
        }
    }
    return y;
}

// Compulsory traffic: inputs read once, outputs written once; flops 2 per multiply-add plus the
// activation (counted as 8: erfc / exp, a division and the products).
traffic_model fused_model(const case_desc& c) {
    traffic_model m;
    for (const auto& s : conv1d_inputs(c)) m.bytes_read += static_cast<double>(s.bytes());
    for (const auto& s : conv1d_outputs(c)) m.bytes_written += static_cast<double>(s.bytes());
    const double outs = static_cast<double>(conv1d_outputs(c)[0].numel());
    const double taps = op_of(c) == op_dense ? 3.0 * static_cast<double>(c.dim("cin")) : static_cast<double>(c.dim("width"));
    m.flops = outs * (2.0 * taps + 8.0);
    m.unit = compute_unit::fp32;
    return m;
}
// The baseline also writes and reads back the fp32 pre-activation twice (bias, then activation).
traffic_model naive_model(const case_desc& c) {
    traffic_model m = fused_model(c);
    const double z = 4.0 * static_cast<double>(conv1d_outputs(c)[0].numel());
    m.bytes_read += 2 * z;
    m.bytes_written += 2 * z;
    return m;
}

}  // namespace

void register_conv1d(registry& reg) {
    suite s;
    s.name = "conv1d";
    s.family = "conv1d (Whisper encoder, Mamba depthwise causal)";
    s.description =
        "dense: y = gelu_erf(bias + conv(x, w)), kernel 3, padding 1, stride 1 or 2 over [batch, channels, length]; "
        "depthwise: y = silu(bias + causal conv(x, w)) of width 2..4 per channel; decode: one step of the depthwise "
        "convolution against a rolling state of the last width - 1 inputs, with the updated state as a second output. "
        "fp32 accumulation; outputs rounded to the storage dtype.";
    s.semantics = "Positions outside [0, L) are zero (padding, causal history); the decode state is oldest first.";
    s.default_run = false;
    s.cases = conv1d_cases;
    s.input_specs = conv1d_inputs;
    s.output_specs = conv1d_outputs;
    s.generate = conv1d_generate;
    s.reference = conv1d_reference_outputs;
    // Element-wise bounds (a first estimate, to be checked on a GPU): the storage rounding (2^-8
    // bf16, 2^-11 fp16, 2^-23 fp32 relative) twice over, plus an absolute term for the fp32
    // accumulation of up to 3 x 1280 products of O(1 / sqrt(fan_in)) each (about sqrt(K) 2^-24 of
    // their magnitude sum: 1e-5 of the output RMS covers K = 3840); the baseline-relative check
    // (2x the naive baseline's error) is the sharp one.
    s.tolerance.per_dtype = {{dtype::f32, {2.4e-7, 1e-5, 1}}, {dtype::bf16, {7.9e-3, 1e-4, 1}}, {dtype::f16, {9.8e-4, 1e-4, 1}}};
    s.relative_tolerance = [](const case_desc& c) {
        std::map<std::string, baseline_relative_tolerance> m{{"y", {2.0, 1.0 / 65536}}};
        if (op_of(c) == op_decode) m["state_out"] = {1.0, 0.0};  // a copy: exact
        return m;
    };

    s.variants.push_back(variant{
        "naive", variant_role::baseline,
        "unfused: convolution to an fp32 workspace, bias added in place, activation written in the storage dtype "
        "(and, decode, the state shifted by a fourth kernel)",
        [](const launch_args& a) {
            const auto t = to_kernel_elem(a.c.type);
            switch (op_of(a.c)) {
                case op_dense:
                    k::launch_conv1d_dense_naive(t, a.in[0], a.in[1], a.in[2], a.out[0], a.workspace, dense_shape(a.c), a.stream);
                    break;
                case op_depthwise:
                    k::launch_conv1d_depthwise_naive(t, a.in[0], a.in[1], a.in[2], a.out[0], a.workspace, dw_shape(a.c), a.stream);
                    break;
                default:
                    k::launch_conv1d_decode_naive(t, a.in[0], a.in[1], a.in[2], a.in[3], a.out[0], a.out[1], a.workspace, dw_shape(a.c),
                                                  a.stream);
            }
        },
        naive_model,
        [](const case_desc& c) {
            switch (op_of(c)) {
                case op_dense: return k::conv1d_dense_naive_workspace_bytes(dense_shape(c));
                case op_depthwise: return k::conv1d_depthwise_naive_workspace_bytes(dw_shape(c));
                default: return k::conv1d_decode_naive_workspace_bytes(dw_shape(c));
            }
        },
        {}, false, ""});
    s.variants.push_back(variant{
        "fused", variant_role::fused,
        "one kernel per operation: dense, a direct convolution over shared-memory tiles (64 channels x 64 positions per "
        "block) with bias and GELU in the epilogue; depthwise, a sliding window of 8 outputs per thread from 16-byte "
        "loads; decode, one thread per channel writing y and the shifted state",
        [](const launch_args& a) {
            const auto t = to_kernel_elem(a.c.type);
            switch (op_of(a.c)) {
                case op_dense: k::launch_conv1d_dense_direct(t, a.in[0], a.in[1], a.in[2], a.out[0], dense_shape(a.c), a.stream); break;
                case op_depthwise: k::launch_conv1d_depthwise_fused(t, a.in[0], a.in[1], a.in[2], a.out[0], dw_shape(a.c), a.stream); break;
                default:
                    k::launch_conv1d_decode_fused(t, a.in[0], a.in[1], a.in[2], a.in[3], a.out[0], a.out[1], dw_shape(a.c), a.stream);
            }
        },
        fused_model,
        nullptr,
        {}, false, ""});
    reg.add(std::move(s));
}

}  // namespace fusebench
