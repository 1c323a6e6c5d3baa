#include "harness/cupti_counters.hpp"

#include "harness/ceilings.hpp"
#include "harness/cupti_tracer.hpp"
#include "harness/device.hpp"

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <utility>

namespace fusebench {

std::vector<std::string> memory_metric_set() {
    return {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
            "gpu__time_duration.sum"};
}

std::vector<std::string> compute_metric_set() {
    return {"sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
            "gpu__time_duration.sum"};
}

// ---------------------------------------------------------------- failures as values

counter_result counters_unavailable(const std::vector<std::string>& metrics, std::string reason,
                                    std::string detail, std::string status) {
    counter_result r;
    r.status = std::move(status);
    r.reason = std::move(reason);
    r.detail = std::move(detail);
    r.metrics = metrics;
    for (const auto& m : metrics) {
        r.values[m] = std::nullopt;
        r.metric_reasons[m] = r.reason;
    }
    return r;
}

counter_result counter_failure(const std::string& call, int cupti_result,
                               const std::vector<std::string>& metrics) {
    std::string detail = call + " returned " + cupti_result_name(cupti_result);
    if (const std::string hint = cupti_hint(cupti_result); !hint.empty()) detail += ": " + hint;
    counter_result r =
        counters_unavailable(metrics, cupti_reason(cupti_result), std::move(detail),
                             cupti_result_is_environmental(cupti_result) ? "unavailable" : "error");
    r.cupti_result = cupti_result;
    r.cupti_call = call;
    return r;
}

std::optional<std::string> unsupported_config(const device_support& s) {
    if (s.is_supported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return std::nullopt;
    std::string why;
    auto add = [&](int level, const char* field) {
        if (level == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
        if (!why.empty()) why += ",";
        why += field;
        if (level == CUPTI_PROFILER_CONFIGURATION_DISABLED) why += "_disabled";
    };
    add(s.architecture, "architecture");
    add(s.sli, "sli");
    add(s.vgpu, "vgpu");
    add(s.confidential_compute, "confidential_compute");
    add(s.cmp, "cmp");
    add(s.wsl, "wsl");
    if (why.empty()) why = "unknown";
    return why;
}

// ---------------------------------------------------------------- combining ranges

range_combine combine_rule(const std::string& metric) {
    const auto ends_with = [&](const char* suffix) {
        const std::string s(suffix);
        return metric.size() >= s.size() &&
               metric.compare(metric.size() - s.size(), s.size(), s) == 0;
    };
    if (ends_with(".sum")) return range_combine::sum;
    if (ends_with(".max")) return range_combine::max;
    if (ends_with(".min")) return range_combine::min;
    return range_combine::time_weighted_mean;
}

std::map<std::string, std::optional<double>> combine_ranges(
    const std::vector<std::string>& metrics,
    const std::vector<std::map<std::string, double>>& ranges) {
    static const std::string time_metric = "gpu__time_duration.sum";
    std::map<std::string, std::optional<double>> out;
    for (const auto& m : metrics) {
        out[m] = std::nullopt;
        if (ranges.empty()) continue;
        bool complete = true;
        for (const auto& r : ranges) {
            auto it = r.find(m);
            if (it == r.end() || !std::isfinite(it->second)) complete = false;
        }
        if (!complete) continue;
        const range_combine rule = combine_rule(m);
        double acc = 0;
        switch (rule) {
            case range_combine::sum:
                for (const auto& r : ranges) acc += r.at(m);
                break;
            case range_combine::max:
                acc = ranges.front().at(m);
                for (const auto& r : ranges) acc = std::max(acc, r.at(m));
                break;
            case range_combine::min:
                acc = ranges.front().at(m);
                for (const auto& r : ranges) acc = std::min(acc, r.at(m));
                break;
            case range_combine::time_weighted_mean: {
                // A 1 us kernel at 90 % must not weigh as much as a 1 ms kernel at 10 %.
                double wsum = 0;
                bool timed = true;
                for (const auto& r : ranges) {
                    auto it = r.find(time_metric);
                    if (it == r.end() || !std::isfinite(it->second) || it->second < 0)
                        timed = false;
                }
                for (const auto& r : ranges) {
                    const double w = timed ? r.at(time_metric) : 1.0;
                    acc += w * r.at(m);
                    wsum += w;
                }
                if (wsum <= 0) continue;
                acc /= wsum;
                break;
            }
        }
        out[m] = acc;
    }
    return out;
}

// ---------------------------------------------------------------- host configuration

namespace {

// Value-initialized (every field zero, pPriv null) with structSize set, as CUPTI requires.
template <class T>
T cupti_params(std::size_t struct_size) {
    T p{};
    p.structSize = struct_size;
    return p;
}

// RAII for the host object: CUPTI allocates it and it must be deinitialized exactly once.
struct host_object {
    CUpti_Profiler_Host_Object* p = nullptr;
    host_object() = default;
    host_object(const host_object&) = delete;
    host_object& operator=(const host_object&) = delete;
    host_object(host_object&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
    host_object& operator=(host_object&& o) noexcept {
        if (this != &o) {
            reset();
            p = std::exchange(o.p, nullptr);
        }
        return *this;
    }
    ~host_object() { reset(); }
    void reset() noexcept {
        if (p == nullptr) return;
        auto d = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
            CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        d.pHostObject = p;
        (void)cuptiProfilerHostDeinitialize(&d);
        p = nullptr;
    }
};

CUptiResult host_initialize(const std::string& chip, const std::vector<std::uint8_t>& availability,
                            host_object& out) {
    auto p = cupti_params<CUpti_Profiler_Host_Initialize_Params>(
        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    const CUptiResult r = cuptiProfilerHostInitialize(&p);
    if (r == CUPTI_SUCCESS) {
        out.reset();
        out.p = p.pHostObject;
    }
    return r;
}

CUptiResult add_metrics(host_object& h, const std::vector<std::string>& names) {
    std::vector<const char*> ptrs;
    for (const auto& n : names) ptrs.push_back(n.c_str());
    auto a = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    a.pHostObject = h.p;
    a.ppMetricNames = ptrs.data();
    a.numMetrics = ptrs.size();
    return cuptiProfilerHostConfigAddMetrics(&a);
}

// Fills plan (supported, rejected, units, passes) and the config image; `h` keeps the host object
// that evaluation needs later. On a CUPTI failure, plan.cupti_result/cupti_call say where.
void configure_host(const std::string& chip, const std::vector<std::string>& metrics,
                    const std::vector<std::uint8_t>& availability, host_object& h,
                    metric_plan& plan, std::vector<std::uint8_t>& config_image) {
    plan = metric_plan{};
    plan.chip = chip;
    auto failed = [&](const char* call, CUptiResult r) {
        plan.cupti_result = r;
        plan.cupti_call = call;
    };
    if (CUptiResult r = host_initialize(chip, availability, h); r != CUPTI_SUCCESS) {
        return failed("cuptiProfilerHostInitialize", r);
    }
    for (const auto& m : metrics) {
        if (std::find(plan.supported.begin(), plan.supported.end(), m) != plan.supported.end())
            continue;
        auto q = cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(
            CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
        q.pHostObject = h.p;
        q.pMetricName = m.c_str();
        const CUptiResult r = cuptiProfilerHostGetMetricProperties(&q);
        if (r == CUPTI_ERROR_INVALID_METRIC_NAME || r == CUPTI_ERROR_INVALID_PARAMETER) {
            plan.rejected[m] = "unsupported_metric";
            continue;
        }
        if (r != CUPTI_SUCCESS) return failed("cuptiProfilerHostGetMetricProperties", r);
        plan.supported.push_back(m);
        plan.units[m] = q.pDimUnit ? q.pDimUnit : "";
    }
    if (plan.supported.empty()) return;

    // One bad name fails the whole AddMetrics call (a metric can exist yet be unavailable in
    // this configuration): find the culprits one by one on scratch host objects.
    if (add_metrics(h, plan.supported) != CUPTI_SUCCESS) {
        std::vector<std::string> keep;
        for (const auto& m : plan.supported) {
            host_object probe;
            if (host_initialize(chip, availability, probe) == CUPTI_SUCCESS &&
                add_metrics(probe, {m}) == CUPTI_SUCCESS) {
                keep.push_back(m);
            } else {
                plan.rejected[m] = "unavailable_metric";
                plan.units.erase(m);
            }
        }
        plan.supported = keep;
        if (plan.supported.empty()) return;
        if (CUptiResult r = host_initialize(chip, availability, h); r != CUPTI_SUCCESS) {
            return failed("cuptiProfilerHostInitialize", r);
        }
        if (CUptiResult r = add_metrics(h, plan.supported); r != CUPTI_SUCCESS) {
            return failed("cuptiProfilerHostConfigAddMetrics", r);
        }
    }
    auto s = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    s.pHostObject = h.p;
    if (CUptiResult r = cuptiProfilerHostGetConfigImageSize(&s); r != CUPTI_SUCCESS) {
        return failed("cuptiProfilerHostGetConfigImageSize", r);
    }
    config_image.assign(s.configImageSize, 0);
    auto g = cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    g.pHostObject = h.p;
    g.configImageSize = config_image.size();
    g.pConfigImage = config_image.data();
    if (CUptiResult r = cuptiProfilerHostGetConfigImage(&g); r != CUPTI_SUCCESS) {
        return failed("cuptiProfilerHostGetConfigImage", r);
    }
    auto n = cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    n.configImageSize = config_image.size();
    n.pConfigImage = config_image.data();
    if (CUptiResult r = cuptiProfilerHostGetNumOfPasses(&n); r != CUPTI_SUCCESS) {
        return failed("cuptiProfilerHostGetNumOfPasses", r);
    }
    plan.passes = static_cast<int>(n.numOfPasses);
}

// CUPTI's profiler initialization is process-wide: one live counter_profiler at a time.
std::mutex g_profiler_mutex;
bool g_profiler_live = false;

using cu_ctx_get_current_fn = CUresult (*)(CUcontext*);

}  // namespace

metric_plan plan_metrics(const std::string& chip, const std::vector<std::string>& metrics,
                         const std::vector<std::uint8_t>& availability) {
    host_object h;
    metric_plan plan;
    std::vector<std::uint8_t> config;
    configure_host(chip, metrics, availability, h, plan, config);
    return plan;
}

// ---------------------------------------------------------------- the profiler

struct counter_profiler::impl {
    int device = 0;
    CUcontext ctx = nullptr;
    bool owns_live_slot = false;
    bool profiler_initialized = false;
    host_object host;
    std::vector<std::uint8_t> availability, config_image, counter_data;
    CUpti_RangeProfiler_Object* range = nullptr;
    std::vector<std::string> names;  // metrics in the config, in order
    int max_ranges = 64;
    int sm_count = 0;
    device_buffer l2_scratch;  // 3x L2, read before each measurement
    device_buffer l2_sink;
    bool used = false;

    impl() = default;
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;

    ~impl() {
        disable();
        host.reset();
        if (profiler_initialized) {
            auto d = cupti_params<CUpti_Profiler_DeInitialize_Params>(
                CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
            (void)cuptiProfilerDeInitialize(&d);
        }
        if (owns_live_slot) {
            std::lock_guard lk(g_profiler_mutex);
            g_profiler_live = false;
        }
    }

    void disable() noexcept {
        if (range == nullptr) return;
        auto d = cupti_params<CUpti_RangeProfiler_Disable_Params>(
            CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
        d.pRangeProfilerObject = range;
        (void)cuptiRangeProfilerDisable(&d);
        range = nullptr;
    }

    std::vector<const char*> name_ptrs() const {
        std::vector<const char*> p;
        for (const auto& n : names) p.push_back(n.c_str());
        return p;
    }

    // Enable + size the counter-data image. `call` names the failing function.
    CUptiResult enable(std::string& call) {
        auto e = cupti_params<CUpti_RangeProfiler_Enable_Params>(
            CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
        e.ctx = ctx;
        if (CUptiResult r = cuptiRangeProfilerEnable(&e); r != CUPTI_SUCCESS) {
            call = "cuptiRangeProfilerEnable";
            return r;
        }
        range = e.pRangeProfilerObject;
        auto ptrs = name_ptrs();
        auto s = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
        s.pRangeProfilerObject = range;
        s.pMetricNames = ptrs.data();
        s.numMetrics = ptrs.size();
        s.maxNumOfRanges = static_cast<std::size_t>(max_ranges);
        s.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
        if (CUptiResult r = cuptiRangeProfilerGetCounterDataSize(&s); r != CUPTI_SUCCESS) {
            call = "cuptiRangeProfilerGetCounterDataSize";
            return r;
        }
        counter_data.assign(s.counterDataSize, 0);
        return CUPTI_SUCCESS;
    }

    // A fresh counter-data image and the configuration, before every measurement.
    CUptiResult configure(std::string& call) {
        auto i = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
        i.pRangeProfilerObject = range;
        i.counterDataSize = counter_data.size();
        i.pCounterData = counter_data.data();
        if (CUptiResult r = cuptiRangeProfilerCounterDataImageInitialize(&i); r != CUPTI_SUCCESS) {
            call = "cuptiRangeProfilerCounterDataImageInitialize";
            return r;
        }
        auto c = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
            CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
        c.pRangeProfilerObject = range;
        c.configSize = config_image.size();
        c.pConfig = config_image.data();
        c.counterDataImageSize = counter_data.size();
        c.pCounterDataImage = counter_data.data();
        c.range = CUPTI_AutoRange;
        c.replayMode = CUPTI_KernelReplay;
        c.maxRangesPerPass = static_cast<std::size_t>(max_ranges);
        c.numNestingLevels = 1;
        c.minNestingLevel = 1;
        c.passIndex = 0;
        c.targetNestingLevel = 1;
        if (CUptiResult r = cuptiRangeProfilerSetConfig(&c); r != CUPTI_SUCCESS) {
            call = "cuptiRangeProfilerSetConfig";
            return r;
        }
        return CUPTI_SUCCESS;
    }

    CUptiResult prepare(std::string& call) {
        CUptiResult r = configure(call);
        if (r != CUPTI_SUCCESS && used && !cupti_result_is_environmental(r)) {
            // Re-configuring a used object is not documented for 13.0: start from a fresh one.
            disable();
            r = enable(call);
            if (r == CUPTI_SUCCESS) r = configure(call);
        }
        used = true;
        return r;
    }

    CUptiResult warm_up(std::string& call) {
        if (CUptiResult r = prepare(call); r != CUPTI_SUCCESS) return r;
        auto st = cupti_params<CUpti_RangeProfiler_Start_Params>(
            CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
        st.pRangeProfilerObject = range;
        if (CUptiResult r = cuptiRangeProfilerStart(&st); r != CUPTI_SUCCESS) {
            call = "cuptiRangeProfilerStart";
            return r;
        }
        std::byte* base = l2_sink.bytes_ptr();
        try {
            detail::launch_stream_read(base, 256, reinterpret_cast<unsigned*>(base + 256), sm_count,
                                       nullptr);
            CUDA_CHECK(cudaStreamSynchronize(nullptr));
        } catch (...) {
            std::string ignored;
            (void)stop(ignored);
            throw;
        }
        if (CUptiResult r = stop(call); r != CUPTI_SUCCESS) return r;
        auto dec = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
            CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
        dec.pRangeProfilerObject = range;
        if (CUptiResult r = cuptiRangeProfilerDecodeData(&dec); r != CUPTI_SUCCESS) {
            call = "cuptiRangeProfilerDecodeData";
            return r;
        }
        return CUPTI_SUCCESS;
    }

    CUptiResult stop(std::string& call) {
        auto s = cupti_params<CUpti_RangeProfiler_Stop_Params>(
            CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
        s.pRangeProfilerObject = range;
        const CUptiResult r = cuptiRangeProfilerStop(&s);
        if (r != CUPTI_SUCCESS) call = "cuptiRangeProfilerStop";
        return r;
    }
};

counter_profiler::counter_profiler(std::unique_ptr<impl> p) : m_impl(std::move(p)) {}
counter_profiler::~counter_profiler() = default;

std::unique_ptr<counter_profiler> counter_profiler::create(int device,
                                                           const std::vector<std::string>& metrics,
                                                           counter_result& failure,
                                                           int max_ranges) {
    failure = counter_result{};
    if (metrics.empty()) {
        failure = counters_unavailable(metrics, "no_metrics", "no metrics were requested", "error");
        return nullptr;
    }
    // Without a driver CUPTI device calls fail (999) or crash (cuptiDeviceGetChipName).
    const int count = cuda_device_count();
    if (count == 0) {
        failure = counters_unavailable(metrics, "no_device", "no CUDA device or driver");
        return nullptr;
    }
    if (device < 0 || device >= count) {
        failure = counters_unavailable(
            metrics, "invalid_device",
            "device " + std::to_string(device) + " of " + std::to_string(count), "error");
        return nullptr;
    }
    if (max_ranges < 1) {
        failure =
            counters_unavailable(metrics, "invalid_max_ranges", "max_ranges must be >= 1", "error");
        return nullptr;
    }
    auto im = std::make_unique<impl>();
    {
        std::lock_guard lk(g_profiler_mutex);
        if (g_profiler_live) {
            failure = counters_unavailable(metrics, "profiler_already_active",
                                           "another counter_profiler is alive in this process");
            return nullptr;
        }
        g_profiler_live = true;
        im->owns_live_slot = true;
    }
    im->device = device;
    im->max_ranges = max_ranges;

    auto cuda_failed = [&](const char* call, cudaError_t e) {
        (void)cudaGetLastError();
        failure = counters_unavailable(metrics, std::string("cuda_error:") + cudaGetErrorName(e),
                                       std::string(call) + ": " + cudaGetErrorString(e), "error");
        return nullptr;
    };
    auto cupti_failed = [&](const std::string& call, CUptiResult r) {
        failure = counter_failure(call, r, metrics);
        return nullptr;
    };

    // The primary context: the range profiler attaches to a context.
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        return cuda_failed("cudaSetDevice", e);
    if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) return cuda_failed("cudaFree(0)", e);
    int major = 0, minor = 0;
    if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
        e != cudaSuccess) {
        return cuda_failed("cudaDeviceGetAttribute", e);
    }
    if (cudaError_t e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
        e != cudaSuccess) {
        return cuda_failed("cudaDeviceGetAttribute", e);
    }
    if (major * 10 + minor < 75) {
        failure = counters_unavailable(metrics, "unsupported_device",
                                       "compute capability " + std::to_string(major) + "." +
                                           std::to_string(minor) +
                                           ": the CUPTI range profiler needs 7.5 or newer");
        return nullptr;
    }
    // cuCtxGetCurrent through the runtime, so that nothing here needs libcuda at link time.
    {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaError_t e = cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000,
                                                             cudaEnableDefault, &q);
            e != cudaSuccess || fn == nullptr) {
            return cuda_failed("cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)",
                               e != cudaSuccess ? e : cudaErrorSymbolNotFound);
        }
        if (reinterpret_cast<cu_ctx_get_current_fn>(fn)(&im->ctx) != CUDA_SUCCESS ||
            im->ctx == nullptr) {
            failure = counters_unavailable(metrics, "no_context", "cuCtxGetCurrent gave no context",
                                           "error");
            return nullptr;
        }
    }

    auto init = cupti_params<CUpti_Profiler_Initialize_Params>(
        CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
        return cupti_failed("cuptiProfilerInitialize", r);
    }
    im->profiler_initialized = true;

    auto sup = cupti_params<CUpti_Profiler_DeviceSupported_Params>(
        CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    sup.cuDevice = device;
    sup.api = CUPTI_PROFILER_RANGE_PROFILING;
    if (CUptiResult r = cuptiProfilerDeviceSupported(&sup); r != CUPTI_SUCCESS) {
        return cupti_failed("cuptiProfilerDeviceSupported", r);
    }
    const device_support ds{sup.isSupported,         sup.architecture, sup.sli, sup.vGpu,
                            sup.confidentialCompute, sup.cmp,          sup.wsl};
    if (auto why = unsupported_config(ds)) {
        failure =
            counters_unavailable(metrics, "unsupported_device",
                                 "cuptiProfilerDeviceSupported: not supported (" + *why + ")");
        return nullptr;
    }

    auto chip =
        cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(device);
    if (CUptiResult r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS) {
        return cupti_failed("cuptiDeviceGetChipName", r);
    }
    const std::string chip_name = chip.pChipName ? chip.pChipName : "";

    auto av = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    av.ctx = im->ctx;
    if (CUptiResult r = cuptiProfilerGetCounterAvailability(&av); r != CUPTI_SUCCESS) {
        return cupti_failed("cuptiProfilerGetCounterAvailability", r);
    }
    im->availability.assign(av.counterAvailabilityImageSize, 0);
    av.pCounterAvailabilityImage = im->availability.data();
    if (CUptiResult r = cuptiProfilerGetCounterAvailability(&av); r != CUPTI_SUCCESS) {
        return cupti_failed("cuptiProfilerGetCounterAvailability", r);
    }

    metric_plan plan;
    configure_host(chip_name, metrics, im->availability, im->host, plan, im->config_image);
    if (plan.cupti_result != 0) {
        failure = counter_failure(plan.cupti_call, plan.cupti_result, metrics);
        failure.chip = chip_name;
        return nullptr;
    }
    if (plan.supported.empty()) {
        failure = counters_unavailable(metrics, "unsupported_metric:" + metrics.front(),
                                       "none of the requested metrics exists on " + chip_name);
        for (const auto& [m, why] : plan.rejected) failure.metric_reasons[m] = why;
        failure.chip = chip_name;
        return nullptr;
    }
    im->names = plan.supported;

    // The L2-cleaning buffer: reading 3x L2 of other data evicts every line (dirty ones are
    // written back now, outside the ranges).
    {
        int l2 = 0;
        if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess) l2 = 0;
        if (cudaDeviceGetAttribute(&im->sm_count, cudaDevAttrMultiProcessorCount, device) !=
            cudaSuccess) {
            im->sm_count = 0;
        }
        (void)cudaGetLastError();
        const std::size_t scratch = (static_cast<std::size_t>(l2) * 3 + 15) / 16 * 16;
        try {
            im->l2_scratch = device_buffer(scratch);
            im->l2_sink = device_buffer(512);  // [0, 256): warm-up input, [256, 260): checksum sink
            CUDA_CHECK(cudaMemset(im->l2_sink.get(), 0, im->l2_sink.size()));
        } catch (const cuda_error& e) {
            failure = counters_unavailable(metrics, "cuda_error:out_of_memory",
                                           std::string("L2-cleaning buffer: ") + e.what(), "error");
            return nullptr;
        }
    }

    std::string call;
    if (CUptiResult r = im->enable(call); r != CUPTI_SUCCESS) {
        failure = counter_failure(call, r, metrics);
        failure.chip = chip_name;
        return nullptr;
    }
    // One throw-away measurement: the first range after Enable counted ~29 MB of extra DRAM
    // writes on H200 (CUPTI's first-use setup), and privilege errors that only surface at Start
    // are better reported here, where the caller expects `failure`.
    CUptiResult warm = CUPTI_SUCCESS;
    try {
        warm = im->warm_up(call);
    } catch (const cuda_error& e) {
        if (e.sticky()) throw;  // the context is lost: the caller must stop using the device
        failure = counters_unavailable(metrics, "cuda_error", std::string("warm-up: ") + e.what(),
                                       "error");
        return nullptr;
    }
    if (warm != CUPTI_SUCCESS) {
        failure = counter_failure(call, warm, metrics);
        failure.chip = chip_name;
        return nullptr;
    }
    std::unique_ptr<counter_profiler> p(new counter_profiler(std::move(im)));
    p->m_plan = std::move(plan);
    p->m_requested = metrics;
    return p;
}

counter_result counter_profiler::base_result() const {
    counter_result r;
    r.status = "ok";
    r.metrics = m_requested;
    r.chip = m_plan.chip;
    r.passes = m_plan.passes;
    for (const auto& m : m_requested) {
        r.values[m] = std::nullopt;
        if (auto u = m_plan.units.find(m); u != m_plan.units.end()) r.units[m] = u->second;
        if (auto j = m_plan.rejected.find(m); j != m_plan.rejected.end())
            r.metric_reasons[m] = j->second;
    }
    return r;
}

counter_result counter_profiler::measure(const std::function<void(cudaStream_t)>& launch_all,
                                         cudaStream_t stream) {
    impl& im = *m_impl;
    counter_result res = base_result();
    auto failed = [&](const std::string& call, CUptiResult r) {
        counter_result f = counter_failure(call, r, m_requested);
        f.chip = res.chip;
        f.passes = res.passes;
        f.units = res.units;
        return f;
    };
    if (cudaError_t e = cudaSetDevice(im.device); e != cudaSuccess) {
        (void)cudaGetLastError();
        return counters_unavailable(m_requested, std::string("cuda_error:") + cudaGetErrorName(e),
                                    std::string("cudaSetDevice: ") + cudaGetErrorString(e),
                                    "error");
    }
    if (m_clean_l2 && im.l2_scratch.size() > 0) {
        // Outside the ranges: Start comes after this kernel has finished.
        detail::launch_stream_read(im.l2_scratch.get(), im.l2_scratch.size(),
                                   static_cast<unsigned*>(im.l2_sink.get()), im.sm_count, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        res.l2_cleaned = true;
    }
    std::string call;
    if (CUptiResult r = im.prepare(call); r != CUPTI_SUCCESS) return failed(call, r);

    auto st = cupti_params<CUpti_RangeProfiler_Start_Params>(
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    st.pRangeProfilerObject = im.range;
    if (CUptiResult r = cuptiRangeProfilerStart(&st); r != CUPTI_SUCCESS) {
        return failed("cuptiRangeProfilerStart", r);
    }
    try {
        launch_all(stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    } catch (...) {
        std::string ignored;
        (void)im.stop(ignored);  // leave CUPTI usable for the next variant
        throw;
    }
    if (CUptiResult r = im.stop(call); r != CUPTI_SUCCESS) return failed(call, r);

    auto dec = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    dec.pRangeProfilerObject = im.range;
    if (CUptiResult r = cuptiRangeProfilerDecodeData(&dec); r != CUPTI_SUCCESS) {
        return failed("cuptiRangeProfilerDecodeData", r);
    }
    auto info = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = im.counter_data.data();
    info.counterDataImageSize = im.counter_data.size();
    if (CUptiResult r = cuptiRangeProfilerGetCounterDataInfo(&info); r != CUPTI_SUCCESS) {
        return failed("cuptiRangeProfilerGetCounterDataInfo", r);
    }
    if (dec.numOfRangeDropped > 0) {
        counter_result f =
            counters_unavailable(m_requested, "ranges_dropped",
                                 std::to_string(dec.numOfRangeDropped) +
                                     " kernels beyond max_ranges=" + std::to_string(im.max_ranges) +
                                     " were not profiled: values would be partial",
                                 "error");
        f.chip = res.chip;
        f.passes = res.passes;
        f.units = res.units;
        return f;
    }
    if (info.numTotalRanges == 0) {
        counter_result f = counters_unavailable(m_requested, "no_kernels_profiled",
                                                "launch_all launched no kernel", "error");
        f.chip = res.chip;
        f.passes = res.passes;
        f.units = res.units;
        return f;
    }

    auto ptrs = im.name_ptrs();
    std::vector<double> vals(ptrs.size());
    for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
        auto ri = cupti_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
            CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
        ri.pCounterDataImage = im.counter_data.data();
        ri.counterDataImageSize = im.counter_data.size();
        ri.rangeIndex = i;
        ri.rangeDelimiter = "/";
        const bool named = cuptiRangeProfilerCounterDataGetRangeInfo(&ri) == CUPTI_SUCCESS;
        res.range_names.push_back(named && ri.rangeName ? ri.rangeName : std::to_string(i));

        auto ev = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
        ev.pHostObject = im.host.p;
        ev.pCounterDataImage = im.counter_data.data();
        ev.counterDataImageSize = im.counter_data.size();
        ev.rangeIndex = i;
        ev.ppMetricNames = ptrs.data();
        ev.numMetrics = ptrs.size();
        ev.pMetricValues = vals.data();
        if (CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&ev); r != CUPTI_SUCCESS) {
            return failed("cuptiProfilerHostEvaluateToGpuValues", r);
        }
        std::map<std::string, double> row;
        for (std::size_t j = 0; j < im.names.size(); ++j) row[im.names[j]] = vals[j];
        res.range_values.push_back(std::move(row));
    }
    res.ranges = static_cast<int>(info.numTotalRanges);
    for (auto& [m, v] : combine_ranges(im.names, res.range_values)) {
        res.values[m] = v;
        if (!v) res.metric_reasons[m] = "not_collected";
    }
    if (!m_plan.rejected.empty()) {
        // Partial: the run goes on with the metrics that exist; the first rejected one is named.
        for (const auto& m : m_requested) {
            if (m_plan.rejected.count(m)) {
                res.reason = m_plan.rejected.at(m) + ":" + m;
                res.detail = "metric not available on " + res.chip + "; its value is null";
                break;
            }
        }
    }
    return res;
}

// ---------------------------------------------------------------- JSON

nlohmann::json to_json(const counter_result& r) {
    using nlohmann::json;
    json j;
    j["status"] = r.status;
    j["reason"] = r.reason.empty() ? json(nullptr) : json(r.reason);
    j["detail"] = r.detail.empty() ? json(nullptr) : json(r.detail);
    j["api"] = "cupti_range_profiler";
    j["range_mode"] = "auto";
    j["replay_mode"] = "kernel";
    j["chip"] = r.chip.empty() ? json(nullptr) : json(r.chip);
    j["passes"] = r.passes;
    j["l2_before"] = r.l2_cleaned ? "cleaned" : "as_left_by_earlier_work";
    j["ranges"] = r.ranges;
    j["range_names"] = r.range_names;
    j["requested"] = r.metrics;
    j["cupti_result"] = r.cupti_result == 0 ? json(nullptr) : json(r.cupti_result);
    j["cupti_error"] =
        r.cupti_result == 0 ? json(nullptr) : json(cupti_result_name(r.cupti_result));
    j["cupti_call"] = r.cupti_call.empty() ? json(nullptr) : json(r.cupti_call);
    json metrics = json::object();
    for (const auto& m : r.metrics) {
        json e;
        auto v = r.values.find(m);
        const bool known = v != r.values.end() && v->second.has_value();
        e["value"] = known ? json(*v->second) : json(nullptr);
        auto u = r.units.find(m);
        e["unit"] = u != r.units.end() ? json(u->second) : json(nullptr);
        if (!known) {
            auto why = r.metric_reasons.find(m);
            e["reason"] = why != r.metric_reasons.end() ? why->second
                                                        : (r.reason.empty() ? "unknown" : r.reason);
        }
        metrics[m] = std::move(e);
    }
    j["metrics"] = std::move(metrics);
    json per_range = json::array();
    for (std::size_t i = 0; i < r.range_values.size(); ++i) {
        json e;
        e["name"] = i < r.range_names.size() ? r.range_names[i] : std::to_string(i);
        json vals = json::object();
        for (const auto& [m, v] : r.range_values[i]) {
            vals[m] = std::isfinite(v) ? json(v) : json(nullptr);
        }
        e["values"] = std::move(vals);
        per_range.push_back(std::move(e));
    }
    j["per_range"] = std::move(per_range);
    return j;
}

}  // namespace fusebench
