// cuDNN 9 dense conv1d + bias + GELU through the backend (graph) API. See cudnn_conv.hpp for the
// contract.
//
//   x [N, C_in, 1, L] (strides C_in L, L, L, 1), w [C_out, C_in, 1, 3], y [N, C_out, 1, L_out]
//   conv: cross-correlation, padding (0, 1) before and after, strides (1, s), dilation 1, fp32 compute
//   fused graph:    z = conv(x, w) (fp32, virtual); zb = z + bias[1, C_out, 1, 1] (fp32, virtual);
//                   y = GELU_FWD(zb) (cuDNN's GELU_FWD is the erf form; GELU_APPROX_TANH_FWD is not used)
//   conv_f32 graph: z = conv(x, w) into an fp32 buffer; bias + GELU by launch_conv1d_bias_gelu.
#include "kernels/conv1d/cudnn_conv.hpp"

#if defined(FUSEBENCH_HAVE_CUDNN) && FUSEBENCH_HAVE_CUDNN

#include "kernels/common/cudnn_backend.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fusebench::kernels {
namespace {

constexpr const char* who = "cuDNN conv";  // every message starts with it
void check(cudnnStatus_t st, const std::string& step) { cudnn_backend::check(st, who, step); }
void check_cuda(cudaError_t e, const char* step) { cudnn_backend::check_cuda(e, who, step); }
void set_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
              const void* value, const std::string& step, const char* what) {
    cudnn_backend::set_attr(d, name, type, count, value, who, step, what);
}
using cudnn_backend::attr_opgraph_handle;
using cudnn_backend::attr_plan_handle;
using cudnn_backend::descriptor;
using cudnn_backend::dims4;
using cudnn_backend::packed_strides;
using cudnn_backend::runtime_version;
using cudnn_backend::status_text;
using cudnn_backend::version_string;

enum : int64_t { uid_x = 1, uid_w = 2, uid_bias = 3, uid_y = 4, uid_z = 5, uid_first_virtual = 100 };

enum class graph_kind { fused, conv_f32 };
const char* kind_name(graph_kind k) { return k == graph_kind::fused ? "fused" : "conv_f32"; }

struct plan_key {
    int device, batch, cin, cout, length, stride;
    elem type;
    bool operator<(const plan_key& o) const {
        return std::tie(device, batch, cin, cout, length, stride, type) < std::tie(o.device, o.batch, o.cin, o.cout, o.length, o.stride, o.type);
    }
};

struct plan_entry {
    std::vector<std::unique_ptr<descriptor>> keep;  // tensors, ops, graph, heuristics, configs, plans
    cudnnBackendDescriptor_t plan = nullptr;
    graph_kind kind = graph_kind::fused;
    std::size_t cudnn_ws = 0;  // [bytes]
    std::size_t z_bytes = 0;   // fp32 intermediate, conv_f32 only [bytes], rounded to 256
    int64_t engine_index = -1;
    std::string tried;  // per graph: what happened
    std::string timings;
    double build_ms = 0;
    const char* reason = nullptr;
    std::unique_ptr<descriptor> pack;
    std::array<const void*, 5> pack_ptrs{};
};

using state = cudnn_backend::plan_cache<plan_key, plan_entry>;

state& st() {
    static state* s = new state();  // leaked on purpose: no destruction after the CUDA runtime
    return *s;
}

cudnnDataType_t io_type(elem t) {
    switch (t) {
        case elem::bf16: return CUDNN_DATA_BFLOAT16;
        case elem::f16: return CUDNN_DATA_HALF;
        default: return CUDNN_DATA_FLOAT;
    }
}
std::size_t elem_bytes(elem t) { return t == elem::f32 ? 4 : 2; }

int out_length(const plan_key& k) { return (k.length - 1) / k.stride + 1; }

// Builds one graph's descriptors into `keep`; returns the finalized operation graph.
cudnnBackendDescriptor_t build_graph(std::vector<std::unique_ptr<descriptor>>& keep, graph_kind kind, cudnnHandle_t handle,
                                     const plan_key& k) {
    auto make = [&keep](cudnnBackendDescriptorType_t t) {
        keep.push_back(std::make_unique<descriptor>(t));
        return keep.back()->get();
    };
    int64_t next_virtual = uid_first_virtual;
    auto tensor = [&](int64_t uid, cudnnDataType_t dt, const dims4& dims, const dims4& strides, bool is_virtual) {
        const std::string step = "tensor " + std::to_string(uid);
        cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        const int64_t alignment = 16;
        set_attr(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, step, "data type");
        set_attr(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data(), step, "dimensions");
        set_attr(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data(), step, "strides");
        set_attr(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, step, "unique id");
        set_attr(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, step, "alignment");
        set_attr(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, step, "is_virtual");
        check(cudnnBackendFinalize(t), step + ": finalize");
        return t;
    };
    std::vector<cudnnBackendDescriptor_t> ops;
    const cudnnDataType_t io = io_type(k.type), f32 = CUDNN_DATA_FLOAT;
    const int64_t N = k.batch, C = k.cin, K = k.cout, L = k.length, LO = out_length(k);
    const dims4 x_dims{N, C, 1, L}, w_dims{K, C, 1, 3}, y_dims{N, K, 1, LO}, b_dims{1, K, 1, 1};

    auto x = tensor(uid_x, io, x_dims, packed_strides(x_dims), false);
    auto w = tensor(uid_w, io, w_dims, packed_strides(w_dims), false);
    auto z = kind == graph_kind::fused ? tensor(next_virtual++, f32, y_dims, packed_strides(y_dims), true)
                                       : tensor(uid_z, f32, y_dims, packed_strides(y_dims), false);

    {
        const std::string step = "convolution descriptor";
        cudnnBackendDescriptor_t cd = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
        const int64_t spatial = 2;
        const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
        const std::array<int64_t, 2> dil{1, 1}, strides{1, k.stride}, pad{0, 1};
        set_attr(cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, step, "compute type");
        set_attr(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, step, "mode");
        set_attr(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, step, "spatial dims");
        set_attr(cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil.data(), step, "dilations");
        set_attr(cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides.data(), step, "strides");
        set_attr(cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data(), step, "pre paddings");
        set_attr(cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data(), step, "post paddings");
        check(cudnnBackendFinalize(cd), step + ": finalize");
        const std::string ostep = "convolution forward";
        cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
        const float alpha = 1.0f, beta = 0.0f;
        set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, ostep, "x");
        set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w, ostep, "w");
        set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &z, ostep, "y");
        set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd, ostep, "conv desc");
        set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha, ostep, "alpha");
        set_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta, ostep, "beta");
        check(cudnnBackendFinalize(op), ostep + ": finalize");
        ops.push_back(op);
    }

    if (kind == graph_kind::fused) {
        auto pointwise = [&](const char* step, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t in, cudnnBackendDescriptor_t b,
                             cudnnBackendDescriptor_t out) {
            cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
            set_attr(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, step, "mode");
            set_attr(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f32, step, "math precision");
            check(cudnnBackendFinalize(pw), std::string(step) + ": finalize");
            cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
            set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, step, "pw");
            set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in, step, "x");
            if (b != nullptr) set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, step, "b");
            set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &out, step, "y");
            check(cudnnBackendFinalize(op), std::string(step) + ": finalize op");
            ops.push_back(op);
        };
        auto bias = tensor(uid_bias, io, b_dims, packed_strides(b_dims), false);
        auto zb = tensor(next_virtual++, f32, y_dims, packed_strides(y_dims), true);
        auto y = tensor(uid_y, io, y_dims, packed_strides(y_dims), false);
        pointwise("bias add", CUDNN_POINTWISE_ADD, z, bias, zb);
        pointwise("gelu", CUDNN_POINTWISE_GELU_FWD, zb, nullptr, y);
    }

    cudnnBackendDescriptor_t opgraph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_attr(opgraph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops.size()), ops.data(),
             "operation graph", "ops");
    set_attr(opgraph, attr_opgraph_handle, CUDNN_TYPE_HANDLE, 1, &handle, "operation graph", "handle");
    check(cudnnBackendFinalize(opgraph), "operation graph: finalize");
    return opgraph;
}

// Why an engine's numerics are not acceptable here, or nullptr.
const char* numerics_veto(cudnnBackendDescriptor_t cfg, elem type) {
    descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t ed = engine.get();
    int64_t n = 0;
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &ed) != CUDNN_STATUS_SUCCESS)
        return "engine unreadable";
    std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
    int64_t count = 0;
    if (cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, static_cast<int64_t>(notes.size()),
                                 &count, notes.data()) != CUDNN_STATUS_SUCCESS)
        return "numerical notes unreadable";
    for (int64_t i = 0; i < count; ++i) {
        switch (notes[static_cast<std::size_t>(i)]) {
            case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "reduced-precision reduction";
            case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "down-converts inputs";
            case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
                if (type == elem::f32) return "tensor cores on fp32 data (TF32)";
                break;
            default: break;
        }
    }
    return nullptr;
}

int64_t engine_index_of(cudnnBackendDescriptor_t cfg) {
    descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t ed = engine.get();
    int64_t n = 0, idx = -1;
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &ed) == CUDNN_STATUS_SUCCESS)
        cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &idx);
    return idx;
}

// Scratch device memory for tuning; freed on scope exit (move-only by construction: no copies).
struct scratch {
    void* p = nullptr;
    explicit scratch(std::size_t bytes) {
        if (bytes > 0) check_cuda(cudaMalloc(&p, bytes), "cudaMalloc (tuning scratch)");
        if (p != nullptr) check_cuda(cudaMemset(p, 0, bytes), "cudaMemset (tuning scratch)");
    }
    ~scratch() {
        if (p != nullptr) (void)cudaFree(p);
    }
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
};

std::unique_ptr<descriptor> make_pack(graph_kind kind, const void* x, const void* w, const void* bias, void* y, void* z, void* ws) {
    std::vector<int64_t> uids{uid_x, uid_w};
    std::vector<void*> data{const_cast<void*>(x), const_cast<void*>(w)};
    if (kind == graph_kind::fused) {
        uids.push_back(uid_bias);
        data.push_back(const_cast<void*>(bias));
        uids.push_back(uid_y);
        data.push_back(y);
    } else {
        uids.push_back(uid_z);
        data.push_back(z);
    }
    auto pack = std::make_unique<descriptor>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    const std::string step = "variant pack";
    set_attr(pack->get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data(), step, "uids");
    set_attr(pack->get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(data.size()), data.data(), step,
             "pointers");
    set_attr(pack->get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws, step, "workspace");
    check(cudnnBackendFinalize(pack->get()), step + ": finalize");
    return pack;
}

constexpr std::size_t round256(std::size_t b) { return (b + 255) / 256 * 256; }
constexpr int max_candidates = 4;

// Tries the fused graph, then conv_f32; within a graph, the first max_candidates engine configs
// (heuristics A, else the fallback list) that pass numerics_veto and finalize, timed on zeroed
// scratch buffers (one warm-up, then 3 runs) when there are several; the fastest is kept.
void build(plan_entry& e, cudnnHandle_t handle, const plan_key& k) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t es = elem_bytes(k.type);
    const std::size_t y_elems = static_cast<std::size_t>(k.batch) * k.cout * out_length(k);
    for (graph_kind kind : {graph_kind::fused, graph_kind::conv_f32}) {
        std::vector<std::unique_ptr<descriptor>> keep;
        cudnnBackendDescriptor_t opgraph = nullptr;
        try {
            opgraph = build_graph(keep, kind, handle, k);
        } catch (const std::exception& ex) {
            e.tried += std::string(kind_name(kind)) + ": graph rejected (" + ex.what() + "); ";
            continue;
        }
        struct candidate {
            cudnnBackendDescriptor_t plan;
            int64_t engine;
            std::size_t ws;
            double ms = 0;
        };
        std::vector<candidate> cands;
        std::string last = "no engine config";
        int vetoed = 0;
        for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
            if (!cands.empty()) break;
            keep.push_back(std::make_unique<descriptor>(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
            cudnnBackendDescriptor_t heur = keep.back()->get();
            const std::string step = mode == CUDNN_HEUR_MODE_A ? "heuristics A" : "heuristics fallback";
            set_attr(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &opgraph, step, "graph");
            set_attr(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, step, "mode");
            if (cudnnStatus_t rc = cudnnBackendFinalize(heur); rc != CUDNN_STATUS_SUCCESS) {
                last = step + ": " + status_text(rc);
                continue;
            }
            int64_t count = 0;
            if (cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr) !=
                    CUDNN_STATUS_SUCCESS ||
                count <= 0)
                continue;
            std::vector<cudnnBackendDescriptor_t> cfgs(static_cast<std::size_t>(count));
            for (auto& c : cfgs) {
                keep.push_back(std::make_unique<descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
                c = keep.back()->get();
            }
            int64_t got = 0;
            check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs.data()),
                  step + ": results");
            for (int64_t i = 0; i < got && static_cast<int>(cands.size()) < max_candidates; ++i) {
                if (const char* why = numerics_veto(cfgs[static_cast<std::size_t>(i)], k.type)) {
                    ++vetoed;
                    last = std::string("vetoed: ") + why;
                    continue;
                }
                auto plan = std::make_unique<descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
                cudnnBackendDescriptor_t pd = plan->get();
                set_attr(pd, attr_plan_handle, CUDNN_TYPE_HANDLE, 1, &handle, "execution plan", "handle");
                set_attr(pd, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[static_cast<std::size_t>(i)],
                         "execution plan", "engine config");
                if (cudnnStatus_t rc = cudnnBackendFinalize(pd); rc != CUDNN_STATUS_SUCCESS) {
                    last = step + " config " + std::to_string(i) + ": " + status_text(rc);
                    continue;
                }
                int64_t ws = 0, n = 0;
                check(cudnnBackendGetAttribute(pd, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws), "workspace size");
                cands.push_back({pd, engine_index_of(cfgs[static_cast<std::size_t>(i)]), static_cast<std::size_t>(ws < 0 ? 0 : ws)});
                keep.push_back(std::move(plan));
            }
        }
        if (cands.empty()) {
            e.tried += std::string(kind_name(kind)) + ": no engine (" + std::to_string(vetoed) + " vetoed; last: " + last + "); ";
            continue;
        }
        const std::size_t z_bytes = kind == graph_kind::conv_f32 ? round256(y_elems * 4) : 0;
        std::size_t best = 0;
        if (cands.size() > 1) {
            std::size_t ws_max = 0;
            for (const auto& c : cands) ws_max = std::max(ws_max, c.ws);
            const std::size_t x_b = round256(static_cast<std::size_t>(k.batch) * k.cin * k.length * es);
            const std::size_t w_b = round256(static_cast<std::size_t>(k.cout) * k.cin * 3 * es);
            const std::size_t b_b = round256(static_cast<std::size_t>(k.cout) * es);
            const std::size_t y_b = round256(y_elems * es);
            scratch buf(x_b + w_b + b_b + y_b + z_bytes + ws_max);
            auto* base = static_cast<unsigned char*>(buf.p);
            void* px = base;
            void* pw = base + x_b;
            void* pb = base + x_b + w_b;
            void* py = base + x_b + w_b + b_b;
            void* pz = base + x_b + w_b + b_b + y_b;
            void* pws = ws_max > 0 ? base + x_b + w_b + b_b + y_b + z_bytes : nullptr;
            auto pack = make_pack(kind, px, pw, pb, py, pz, pws);
            // A private non-blocking stream: tuning never orders itself against the legacy stream.
            cudaStream_t tune = nullptr;
            check_cuda(cudaStreamCreateWithFlags(&tune, cudaStreamNonBlocking), "cudaStreamCreate (tuning)");
            check(cudnnSetStream(handle, tune), "cudnnSetStream (tuning)");
            cudaEvent_t a = nullptr, b = nullptr;
            check_cuda(cudaEventCreate(&a), "cudaEventCreate");
            check_cuda(cudaEventCreate(&b), "cudaEventCreate");
            double best_ms = 1e30;
            for (std::size_t i = 0; i < cands.size(); ++i) {
                auto& c = cands[i];
                c.ms = -1;
                if (cudnnBackendExecute(handle, c.plan, pack->get()) != CUDNN_STATUS_SUCCESS) continue;
                (void)cudaEventRecord(a, tune);
                bool ok = true;
                for (int r = 0; r < 3 && ok; ++r) ok = cudnnBackendExecute(handle, c.plan, pack->get()) == CUDNN_STATUS_SUCCESS;
                (void)cudaEventRecord(b, tune);
                if (cudaEventSynchronize(b) != cudaSuccess || !ok) {
                    (void)cudaGetLastError();
                    continue;
                }
                float ms = 0;
                (void)cudaEventElapsedTime(&ms, a, b);
                c.ms = ms / 3.0;
                if (c.ms < best_ms) {
                    best_ms = c.ms;
                    best = i;
                }
            }
            (void)cudaEventDestroy(a);
            (void)cudaEventDestroy(b);
            check_cuda(cudaStreamSynchronize(tune), "tuning");
            (void)cudaStreamDestroy(tune);
            if (best_ms >= 1e30) {
                e.tried += std::string(kind_name(kind)) + ": every candidate failed to execute; ";
                continue;
            }
        }
        for (std::size_t i = 0; i < cands.size(); ++i) {
            e.timings += (i ? ", " : "") + std::string(i == best ? "*" : "") + "engine " + std::to_string(cands[i].engine) +
                         (cands.size() > 1 ? " " + std::to_string(cands[i].ms * 1000.0).substr(0, 7) + " us" : std::string());
        }
        e.kind = kind;
        e.plan = cands[best].plan;
        e.engine_index = cands[best].engine;
        e.cudnn_ws = cands[best].ws;
        e.z_bytes = z_bytes;
        e.keep = std::move(keep);
        e.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        return;
    }
    throw std::runtime_error("cuDNN conv: no graph has an acceptable engine for this shape: " + e.tried);
}

const char* quick_reason(state& s, const conv1d_dense_shape& sh, elem type) {
    if (sh.batch < 1 || sh.cin < 1 || sh.cout < 1 || sh.length < 1) return s.intern("sizes must be positive");
    if (sh.stride != 1 && sh.stride != 2) return s.intern("stride must be 1 or 2");
    // Seen on an H100 with cuDNN 9.19.0 (the conv_f32 graph, engine 71, commit 42e5a29): with one
    // output position (L_out = 1) and bf16 / fp16 inputs the fp32 result is wrong (elements far
    // off, some left unwritten), at L_out = 2 and above it verifies. Not offered rather than failed.
    if (sh.out_length() == 1 && type != elem::f32)
        return s.intern("L_out = 1 with bf16/fp16 inputs: cuDNN's convolution returned wrong results there (H100, cuDNN 9.19)");
    return nullptr;
}

plan_key key_of(const conv1d_dense_shape& s, elem type) {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    return {device, s.batch, s.cin, s.cout, s.length, s.stride, type};
}

plan_entry& entry_for(state& s, const conv1d_dense_shape& sh, elem type) {
    const plan_key k = key_of(sh, type);
    return s.entry_for(
        k, who, [&] { return quick_reason(s, sh, type); }, [&](plan_entry& e, cudnnHandle_t h) { build(e, h, k); });
}

}  // namespace

bool cudnn_conv_available() { return cudnn_backend::runtime_is_9(); }

std::string cudnn_conv_describe() { return cudnn_backend::runtime_describe(); }

const char* cudnn_conv_unsupported(const conv1d_dense_shape& sh, elem type) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!cudnn_conv_available()) return s.intern(cudnn_conv_describe());
    if (const char* r = quick_reason(s, sh, type)) return r;
    return entry_for(s, sh, type).reason;
}

std::size_t cudnn_conv_workspace_bytes(const conv1d_dense_shape& sh, elem type) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);
    const plan_entry& e = entry_for(s, sh, type);
    if (e.plan == nullptr) throw std::runtime_error(std::string("cuDNN conv unsupported: ") + e.reason);
    return e.z_bytes + e.cudnn_ws;
}

std::string cudnn_conv_plan_describe(const conv1d_dense_shape& sh, elem type) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);
    const plan_entry& e = entry_for(s, sh, type);
    if (e.plan == nullptr) return std::string("unsupported: ") + e.reason;
    return std::string("graph ") + kind_name(e.kind) + ", engine " + std::to_string(e.engine_index) + " (candidates: " + e.timings +
           "), cuDNN workspace " + std::to_string(e.cudnn_ws) + " B, fp32 intermediate " + std::to_string(e.z_bytes) + " B, built in " +
           std::to_string(static_cast<long long>(e.build_ms)) + " ms" + (e.tried.empty() ? "" : "; before it: " + e.tried);
}

void launch_cudnn_conv(const conv1d_dense_shape& sh, elem type, const void* x, const void* w, const void* bias, void* y, void* workspace,
                       std::size_t workspace_bytes, cudaStream_t stream) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);  // the handle's stream is shared state
    plan_entry& e = entry_for(s, sh, type);
    if (e.plan == nullptr) throw std::runtime_error(std::string("cuDNN conv unsupported: ") + e.reason);
    if (workspace_bytes < e.z_bytes + e.cudnn_ws || (e.z_bytes + e.cudnn_ws > 0 && workspace == nullptr))
        throw std::runtime_error("cuDNN conv: workspace of " + std::to_string(workspace_bytes) + " B given, plan needs " +
                                 std::to_string(e.z_bytes + e.cudnn_ws) + " B");
    for (const void* p : {x, w, bias, static_cast<const void*>(y), static_cast<const void*>(workspace)}) {
        if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) throw std::runtime_error("cuDNN conv: pointers must be 16-byte aligned");
    }
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    cudnnHandle_t h = s.handles.get(device, who);
    check(cudnnSetStream(h, stream), "cudnnSetStream");
    auto* base = static_cast<unsigned char*>(workspace);
    void* z = e.z_bytes > 0 ? base : nullptr;
    void* ws = e.cudnn_ws > 0 ? base + e.z_bytes : nullptr;
    const std::array<const void*, 5> ptrs{x, w, bias, y, workspace};
    if (!e.pack || e.pack_ptrs != ptrs) {
        e.pack.reset();
        e.pack = make_pack(e.kind, x, w, bias, y, z, ws);
        e.pack_ptrs = ptrs;
    }
    check(cudnnBackendExecute(h, e.plan, e.pack->get()), "cudnnBackendExecute");
    if (e.kind == graph_kind::conv_f32) {
        launch_conv1d_bias_gelu(type, z, true, bias, y, sh.batch, sh.cout, sh.out_length(), stream);
    }
}

void cudnn_conv_clear_cache() {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);
    s.plans.clear();
}

}  // namespace fusebench::kernels

#else  // built without cuDNN

#include <stdexcept>

namespace fusebench::kernels {

namespace {
constexpr const char* no_cudnn = "fusebench was built without cuDNN (configure with -DFUSEBENCH_CUDNN_ROOT=...)";
}

bool cudnn_conv_available() { return false; }
std::string cudnn_conv_describe() { return no_cudnn; }
const char* cudnn_conv_unsupported(const conv1d_dense_shape&, elem) { return no_cudnn; }
std::size_t cudnn_conv_workspace_bytes(const conv1d_dense_shape&, elem) { throw std::runtime_error(no_cudnn); }
std::string cudnn_conv_plan_describe(const conv1d_dense_shape&, elem) { return no_cudnn; }
void launch_cudnn_conv(const conv1d_dense_shape&, elem, const void*, const void*, const void*, void*, void*, std::size_t, cudaStream_t) {
    throw std::runtime_error(no_cudnn);
}
void cudnn_conv_clear_cache() {}

}  // namespace fusebench::kernels

#endif
