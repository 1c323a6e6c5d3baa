// cuDNN 9 SDPA forward through the backend (graph) API. See cudnn_sdpa.hpp for the contract.
//
// The operation graph is the one cuDNN's fused flash-attention engine pattern-matches (the same
// nodes cudnn-frontend lowers its SDPA node to for cuDNN < 9.21):
//
//   S  = matmul(Q [B,Hq,Sq,D], K^T [B,Hkv,D,Skv])            fp32, virtual
//   S  = S * scale                                             scale: fp32 by-value scalar
//   causal: r = gen_index(S, axis 2), c = gen_index(S, axis 3)   int32
//           bottom-right when Sq < Skv: r = r + Skv; r = r - Sq  int32 by-value scalars
//           S = select(r >= c ? S : -inf)
//   M = max_j S;  E = exp(S - M);  Z = sum_j E;  LSE = M + log Z  (the "stats" output, fp32)
//   P = E / Z                                                  input type, virtual
//   O = matmul(P, V [B,Hkv,Skv,D])
//
// K^T is K itself described with its last two dims swapped (strides [.., 1, D]); GQA is the
// matmul broadcasting K/V over Hq/Hkv heads.
//
// Seen on an H100 with cuDNN 9.19 (pip wheel) and 9.14 (system): heuristics A's first config
// finalizes (engine 2 for prefill shapes, engine 1 for Sq = 1); a first plan costs 0.9-2 s (handle
// and run-time compilation), later shapes 40 ms-1.3 s; workspace 256 B (266 KB for decode).
#include "kernels/attention/cudnn_sdpa.hpp"

#if defined(FUSEBENCH_HAVE_CUDNN) && FUSEBENCH_HAVE_CUDNN

#include "kernels/common/cudnn_backend.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
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

constexpr const char* who = "cuDNN SDPA";  // every message starts with it
void check(cudnnStatus_t st, const std::string& step) { cudnn_backend::check(st, who, step); }
void check_cuda(cudaError_t e, const char* step) { cudnn_backend::check_cuda(e, who, step); }
void set_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
              int64_t count, const void* value, const char* step, const char* what) {
    cudnn_backend::set_attr(d, name, type, count, value, who, step, what);
}
void finalize(cudnnBackendDescriptor_t d, const char* step) {
    check(cudnnBackendFinalize(d), std::string(step) + ": finalize");
}
using cudnn_backend::attr_opgraph_handle;
using cudnn_backend::attr_plan_handle;
using cudnn_backend::descriptor;
using cudnn_backend::dims4;
using cudnn_backend::packed_strides;
using cudnn_backend::runtime_version;
using cudnn_backend::status_text;
using cudnn_backend::version_string;

// Unique ids of the tensors the caller supplies at launch.
enum : int64_t {
    uid_q = 1,
    uid_k = 2,
    uid_v = 3,
    uid_o = 4,
    uid_stats = 5,
    uid_scale = 6,
    uid_neg_inf = 7,
    uid_seq_kv = 8,
    uid_seq_q = 9,
    uid_first_virtual = 100,
};


// Builds the operation graph, keeping every descriptor alive for the plan's lifetime.
class graph_builder {
public:
    std::vector<std::unique_ptr<descriptor>> keep;
    std::vector<cudnnBackendDescriptor_t> ops;

    cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
        keep.push_back(std::make_unique<descriptor>(type));
        return keep.back()->get();
    }

    cudnnBackendDescriptor_t tensor(int64_t uid, cudnnDataType_t dt, const dims4& dims, const dims4& strides,
                                    bool is_virtual, bool by_value = false) {
        const char* step = "tensor descriptor";
        cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        const int64_t alignment = 16;
        set_attr(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, step, "data type");
        set_attr(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data(), step, "dimensions");
        set_attr(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data(), step, "strides");
        set_attr(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, step, "unique id");
        set_attr(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, step, "alignment");
        set_attr(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, step, "is_virtual");
        if (by_value) {
            set_attr(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, step, "is_by_value");
        }
        finalize(t, "tensor descriptor");
        return t;
    }

    cudnnBackendDescriptor_t virt(cudnnDataType_t dt, const dims4& dims) {
        return tensor(next_virtual_++, dt, dims, packed_strides(dims), true);
    }

    cudnnBackendDescriptor_t scalar(int64_t uid, cudnnDataType_t dt) {
        return tensor(uid, dt, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    }

    // y = mode(x [, b] [, t]); t is the select mask of BINARY_SELECT (y = t ? x : b).
    void pointwise(const char* step, cudnnPointwiseMode_t mode, cudnnDataType_t compute, cudnnBackendDescriptor_t x,
                   cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
                   int64_t axis = -1) {
        cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        set_attr(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, step, "pointwise mode");
        set_attr(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute, step, "math precision");
        if (axis >= 0) set_attr(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, step, "axis");
        finalize(pw, step);
        cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
        set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, step, "pw");
        set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, step, "x");
        if (b != nullptr) set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, step, "b");
        if (t != nullptr) set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t, step, "t");
        set_attr(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, step, "y");
        finalize(op, step);
        ops.push_back(op);
    }

    void matmul(const char* step, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c) {
        cudnnBackendDescriptor_t mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
        const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
        set_attr(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, step, "compute type");
        finalize(mm, step);
        cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
        set_attr(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, step, "a");
        set_attr(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, step, "b");
        set_attr(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, step, "c");
        set_attr(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, step, "desc");
        finalize(op, step);
        ops.push_back(op);
    }

    void reduction(const char* step, cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
        cudnnBackendDescriptor_t rd = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
        const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
        set_attr(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode, step, "operator");
        set_attr(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, step, "compute type");
        finalize(rd, step);
        cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
        set_attr(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, step, "x");
        set_attr(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, step, "y");
        set_attr(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, step, "desc");
        finalize(op, step);
        ops.push_back(op);
    }

private:
    int64_t next_virtual_ = uid_first_virtual;
};

// ------------------------------------------------------------------------------------------
// plans

struct plan_key {
    int device, batch, heads_q, heads_kv, seq_q, seq_kv, head_dim;
    bool causal;
    elem type;
    bool operator<(const plan_key& o) const {
        return std::tie(device, batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, causal, type) <
               std::tie(o.device, o.batch, o.heads_q, o.heads_kv, o.seq_q, o.seq_kv, o.head_dim, o.causal, o.type);
    }
};

struct plan_entry {
    graph_builder graph;                           // tensors and ops the plan was built from
    std::vector<std::unique_ptr<descriptor>> keep;  // op graph, heuristics, engine configs, plan
    cudnnBackendDescriptor_t plan = nullptr;
    std::size_t workspace = 0;
    bool mask = false;         // causal select present
    bool bottom_right = false;  // + Skv - Sq offset present
    float neg_inf = -std::numeric_limits<float>::infinity();
    int32_t seq_kv = 0, seq_q = 0;  // by-value offsets
    int64_t engine_index = -1;
    int configs_tried = 0;
    double build_ms = 0;
    const char* reason = nullptr;  // set when the build failed (interned)
    // The last launch's variant pack, reused while the pointers and the scale stay the same (saves
    // the host work of building one per launch); `scale` is the by-value slot it points at.
    std::unique_ptr<descriptor> pack;
    std::array<const void*, 6> pack_ptrs{};
    float scale = 1.0f;
};

using state = cudnn_backend::plan_cache<plan_key, plan_entry>;

state& st() {
    static state* s = new state();  // leaked on purpose: no destruction after the CUDA runtime
    return *s;
}

// Reasons that need no plan. nullptr when the shape may run.
const char* quick_reason(state& s, const attention_shape& sh, elem type) {
    if (type != elem::bf16 && type != elem::f16) return s.intern("cuDNN SDPA takes bf16 or fp16 inputs only");
    if (sh.batch < 1 || sh.heads_q < 1 || sh.heads_kv < 1 || sh.seq_q < 1 || sh.seq_kv < 1 || sh.head_dim < 1)
        return s.intern("every dimension must be at least 1");
    if (sh.heads_q % sh.heads_kv != 0) return s.intern("heads_q must be a multiple of heads_kv (GQA)");
    if (sh.causal && sh.seq_q > sh.seq_kv)
        return s.intern("bottom-right causal needs seq_q <= seq_kv (a row would see no key)");
    if (sh.head_dim % 8 != 0) return s.intern("cuDNN's fused attention needs head_dim a multiple of 8");
    const int v = runtime_version();
    if (v / 100 == 910 && v % 100 <= 1)
        return s.intern("cuDNN 9.10.0/9.10.1 SDPA fp16/bf16 forward has known bugs; use another runtime");
    const bool bottom_right = sh.causal && sh.seq_q > 1 && sh.seq_q != sh.seq_kv;
    if (bottom_right && v < 90600 && (sh.seq_q % 64 != 0 || sh.seq_kv % 64 != 0))
        return s.intern("bottom-right causal with seq_q != seq_kv needs both multiples of 64 before cuDNN 9.6");
    return nullptr;
}

void build(plan_entry& e, cudnnHandle_t handle, const plan_key& k) {
    const auto t0 = std::chrono::steady_clock::now();
    graph_builder& g = e.graph;
    const int64_t B = k.batch, Hq = k.heads_q, Hkv = k.heads_kv, Sq = k.seq_q, Skv = k.seq_kv, D = k.head_dim;
    const cudnnDataType_t io = k.type == elem::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32, b8 = CUDNN_DATA_BOOLEAN;

    // Causal with one query row is no mask at all (row 0 sees every key bottom-right aligned);
    // Sq == Skv is the plain top-left diagonal.
    e.mask = k.causal && Sq > 1;
    e.bottom_right = e.mask && Sq != Skv;
    e.seq_kv = static_cast<int32_t>(Skv);
    e.seq_q = static_cast<int32_t>(Sq);
    // cuDNN before 9.10 wants the lowest finite float as the masked value.
    if (runtime_version() < 91000) e.neg_inf = std::numeric_limits<float>::lowest();

    const dims4 q_dims{B, Hq, Sq, D};
    const dims4 kv_dims{B, Hkv, Skv, D};
    const dims4 kt_dims{B, Hkv, D, Skv};
    const dims4 kt_strides{Hkv * Skv * D, Skv * D, 1, D};
    const dims4 s_dims{B, Hq, Sq, Skv};
    const dims4 row_dims{B, Hq, Sq, 1};

    auto q = g.tensor(uid_q, io, q_dims, packed_strides(q_dims), false);
    auto kt = g.tensor(uid_k, io, kt_dims, kt_strides, false);
    auto v = g.tensor(uid_v, io, kv_dims, packed_strides(kv_dims), false);
    auto o = g.tensor(uid_o, io, q_dims, packed_strides(q_dims), false);
    auto stats = g.tensor(uid_stats, f32, row_dims, packed_strides(row_dims), false);
    auto scale = g.scalar(uid_scale, f32);

    auto s = g.virt(f32, s_dims);
    g.matmul("bmm1 Q.K^T", q, kt, s);
    auto s_scaled = g.virt(f32, s_dims);
    g.pointwise("attn scale", CUDNN_POINTWISE_MUL, f32, s, scale, nullptr, s_scaled);
    auto logits = s_scaled;

    if (e.mask) {
        auto row = g.virt(i32, s_dims);
        g.pointwise("gen row index", CUDNN_POINTWISE_GEN_INDEX, f32, s_scaled, nullptr, nullptr, row, 2);
        auto col = g.virt(i32, s_dims);
        g.pointwise("gen col index", CUDNN_POINTWISE_GEN_INDEX, f32, s_scaled, nullptr, nullptr, col, 3);
        if (e.bottom_right) {
            auto skv = g.scalar(uid_seq_kv, i32);
            auto sq = g.scalar(uid_seq_q, i32);
            auto row_plus = g.virt(i32, s_dims);
            g.pointwise("row + seq_kv", CUDNN_POINTWISE_ADD, i32, row, skv, nullptr, row_plus);
            auto row_shift = g.virt(i32, s_dims);
            g.pointwise("row - seq_q", CUDNN_POINTWISE_SUB, i32, row_plus, sq, nullptr, row_shift);
            row = row_shift;
        }
        auto keep = g.virt(b8, s_dims);
        g.pointwise("row >= col", CUDNN_POINTWISE_CMP_GE, b8, row, col, nullptr, keep);
        auto neg_inf = g.scalar(uid_neg_inf, f32);
        auto masked = g.virt(f32, s_dims);
        g.pointwise("causal select", CUDNN_POINTWISE_BINARY_SELECT, f32, s_scaled, neg_inf, keep, masked);
        logits = masked;
    }

    auto max = g.virt(f32, row_dims);
    g.reduction("softmax max", CUDNN_REDUCE_TENSOR_MAX, logits, max);
    auto centred = g.virt(f32, s_dims);
    g.pointwise("softmax sub", CUDNN_POINTWISE_SUB, f32, logits, max, nullptr, centred);
    auto ex = g.virt(f32, s_dims);
    g.pointwise("softmax exp", CUDNN_POINTWISE_EXP, f32, centred, nullptr, nullptr, ex);
    auto sum = g.virt(f32, row_dims);
    g.reduction("softmax sum", CUDNN_REDUCE_TENSOR_ADD, ex, sum);
    auto log_sum = g.virt(f32, row_dims);
    g.pointwise("softmax log", CUDNN_POINTWISE_LOG, f32, sum, nullptr, nullptr, log_sum);
    g.pointwise("stats = max + log", CUDNN_POINTWISE_ADD, f32, max, log_sum, nullptr, stats);
    auto p = g.virt(io, s_dims);  // the second matmul takes P in the input type
    g.pointwise("softmax div", CUDNN_POINTWISE_DIV, f32, ex, sum, nullptr, p);
    g.matmul("bmm2 P.V", p, v, o);

    // Operation graph.
    auto make = [&e](cudnnBackendDescriptorType_t t) {
        e.keep.push_back(std::make_unique<descriptor>(t));
        return e.keep.back()->get();
    };
    cudnnBackendDescriptor_t opgraph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_attr(opgraph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(g.ops.size()),
             g.ops.data(), "operation graph", "ops");
    set_attr(opgraph, attr_opgraph_handle, CUDNN_TYPE_HANDLE, 1, &handle, "operation graph", "handle");
    finalize(opgraph, "operation graph (cuDNN rejects this graph for the shape)");

    // Engine configs from heuristics A, then the fallback list; the first that finalizes wins.
    std::string last_failure = "heuristics returned no engine config";
    for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
        const char* mode_name = mode == CUDNN_HEUR_MODE_A ? "heuristics A" : "heuristics fallback";
        cudnnBackendDescriptor_t heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        set_attr(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &opgraph, mode_name,
                 "operation graph");
        set_attr(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, mode_name, "mode");
        if (cudnnStatus_t rc = cudnnBackendFinalize(heur); rc != CUDNN_STATUS_SUCCESS) {
            last_failure = std::string(mode_name) + ": finalize: " + status_text(rc);
            continue;
        }
        int64_t count = 0;
        check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                       nullptr),
              std::string(mode_name) + ": count results");
        if (count <= 0) continue;
        std::vector<cudnnBackendDescriptor_t> cfgs(static_cast<std::size_t>(count));
        for (auto& c : cfgs) c = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        int64_t got = 0;
        check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                       cfgs.data()),
              std::string(mode_name) + ": get results");
        for (int64_t i = 0; i < got; ++i) {
            ++e.configs_tried;
            auto plan = std::make_unique<descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
            cudnnBackendDescriptor_t pd = plan->get();
            set_attr(pd, attr_plan_handle, CUDNN_TYPE_HANDLE, 1, &handle, "execution plan", "handle");
            set_attr(pd, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i],
                     "execution plan", "engine config");
            if (cudnnStatus_t rc = cudnnBackendFinalize(pd); rc != CUDNN_STATUS_SUCCESS) {
                last_failure = std::string(mode_name) + " config " + std::to_string(i) + ": " + status_text(rc);
                continue;
            }
            int64_t ws = 0, n = 0;
            check(cudnnBackendGetAttribute(pd, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws),
                  "execution plan: workspace size");
            e.workspace = static_cast<std::size_t>(ws < 0 ? 0 : ws);
            // Which engine it is (informational; failures here do not matter).
            descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
            cudnnBackendDescriptor_t ed = engine.get();
            if (cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                         &ed) == CUDNN_STATUS_SUCCESS) {
                int64_t idx = -1;
                if (cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &idx) ==
                    CUDNN_STATUS_SUCCESS)
                    e.engine_index = idx;
            }
            e.plan = pd;
            e.keep.push_back(std::move(plan));
            e.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            return;
        }
    }
    throw std::runtime_error("cuDNN SDPA: no engine config finalizes for this shape (" +
                             std::to_string(e.configs_tried) + " tried; last: " + last_failure + ")");
}

plan_key key_of(const attention_shape& s, elem type) {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    return {device, s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv, s.head_dim, s.causal, type};
}

// The cached entry for the shape on the current device, built on first call. Caller holds s.mu.
// A failed build is cached too (entry.reason set, entry.plan null).
plan_entry& entry_for(state& s, const attention_shape& sh, elem type) {
    const plan_key k = key_of(sh, type);
    return s.entry_for(
        k, who, [&] { return quick_reason(s, sh, type); }, [&](plan_entry& e, cudnnHandle_t h) { build(e, h, k); });
}

}  // namespace

bool cudnn_sdpa_available() { return cudnn_backend::runtime_is_9(); }

std::string cudnn_sdpa_describe() { return cudnn_backend::runtime_describe(); }

const char* cudnn_sdpa_unsupported(const attention_shape& sh, elem type) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!cudnn_sdpa_available()) return s.intern(cudnn_sdpa_describe());
    if (const char* r = quick_reason(s, sh, type)) return r;
    return entry_for(s, sh, type).reason;
}

std::size_t cudnn_sdpa_workspace_bytes(const attention_shape& sh, elem type) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);
    const plan_entry& e = entry_for(s, sh, type);
    if (e.plan == nullptr) throw std::runtime_error(std::string("cuDNN SDPA unsupported: ") + e.reason);
    return e.workspace;
}

std::string cudnn_sdpa_plan_describe(const attention_shape& sh, elem type) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);
    const plan_entry& e = entry_for(s, sh, type);
    if (e.plan == nullptr) return std::string("unsupported: ") + e.reason;
    return "engine " + std::to_string(e.engine_index) + " (config " + std::to_string(e.configs_tried) +
           " tried), workspace " + std::to_string(e.workspace) + " B, built in " +
           std::to_string(static_cast<long long>(e.build_ms)) + " ms, mask " +
           (e.mask ? (e.bottom_right ? "causal bottom-right" : "causal") : "none");
}

void launch_cudnn_sdpa(const attention_shape& sh, elem type, const void* q, const void* k, const void* v, void* o,
                       float* lse, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
    state& s = st();
    std::lock_guard<std::mutex> lock(s.mu);  // the handle's stream is shared state
    plan_entry& e = entry_for(s, sh, type);
    if (e.plan == nullptr) throw std::runtime_error(std::string("cuDNN SDPA unsupported: ") + e.reason);
    if (workspace_bytes < e.workspace || (e.workspace > 0 && workspace == nullptr)) {
        throw std::runtime_error("cuDNN SDPA: workspace of " + std::to_string(workspace_bytes) + " B given, plan needs " +
                                 std::to_string(e.workspace) + " B");
    }
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    cudnnHandle_t h = s.handles.get(device, who);
    check(cudnnSetStream(h, stream), "cudnnSetStream");

    // By-value scalars are read from host memory when the plan executes; they live in the entry.
    const std::array<const void*, 6> ptrs{q, k, v, o, lse, workspace};
    if (!e.pack || e.pack_ptrs != ptrs || e.scale != sh.scale) {
        e.pack.reset();
        e.scale = sh.scale;
        std::vector<int64_t> uids{uid_q, uid_k, uid_v, uid_o, uid_stats, uid_scale};
        std::vector<void*> data{const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, lse, &e.scale};
        if (e.mask) {
            uids.push_back(uid_neg_inf);
            data.push_back(&e.neg_inf);
        }
        if (e.bottom_right) {
            uids.push_back(uid_seq_kv);
            data.push_back(&e.seq_kv);
            uids.push_back(uid_seq_q);
            data.push_back(&e.seq_q);
        }
        auto pack = std::make_unique<descriptor>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
        const char* step = "variant pack";
        set_attr(pack->get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()),
                 uids.data(), step, "unique ids");
        set_attr(pack->get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                 static_cast<int64_t>(data.size()), data.data(), step, "data pointers");
        set_attr(pack->get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, step, "workspace");
        finalize(pack->get(), step);
        e.pack = std::move(pack);
        e.pack_ptrs = ptrs;
    }
    check(cudnnBackendExecute(h, e.plan, e.pack->get()), "cudnnBackendExecute");
}

void cudnn_sdpa_clear_cache() {
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

bool cudnn_sdpa_available() { return false; }
std::string cudnn_sdpa_describe() { return no_cudnn; }
const char* cudnn_sdpa_unsupported(const attention_shape&, elem) { return no_cudnn; }
std::size_t cudnn_sdpa_workspace_bytes(const attention_shape&, elem) { throw std::runtime_error(no_cudnn); }
std::string cudnn_sdpa_plan_describe(const attention_shape&, elem) { return no_cudnn; }
void launch_cudnn_sdpa(const attention_shape&, elem, const void*, const void*, const void*, void*, float*, void*,
                       std::size_t, cudaStream_t) {
    throw std::runtime_error(no_cudnn);
}
void cudnn_sdpa_clear_cache() {}

}  // namespace fusebench::kernels

#endif
