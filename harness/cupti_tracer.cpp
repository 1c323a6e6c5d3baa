#include "harness/cupti_tracer.hpp"

#include "harness/device.hpp"

#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace fusebench {

// ---------------------------------------------------------------- CUPTI results -> reasons

std::string cupti_result_name(int result) {
    const char* s = nullptr;
    if (cuptiGetResultString(static_cast<CUptiResult>(result), &s) == CUPTI_SUCCESS &&
        s != nullptr && *s != '\0') {
        return s;
    }
    return "CUPTI_ERROR_" + std::to_string(result);
}

std::string cupti_reason(int result) {
    switch (result) {
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: return "cupti_multiple_subscribers";
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
            return "insufficient_privileges";
        case CUPTI_ERROR_NOT_INITIALIZED: return "cupti_not_initialized";
        case CUPTI_ERROR_HARDWARE_BUSY: return "counters_busy";
        case CUPTI_ERROR_INVALID_METRIC_NAME: return "unsupported_metric";
        case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED: return "cupti_old_profiler_api_active";
        case CUPTI_ERROR_NOT_SUPPORTED:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
        case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_INVALID_CHIP_NAME: return "unsupported_device";
        default: return "cupti_error:" + cupti_result_name(result);
    }
}

bool cupti_result_is_environmental(int result) {
    const std::string r = cupti_reason(result);
    return r.rfind("cupti_error:", 0) != 0;
}

namespace {

// The driver's counter-access switch, when /proc exposes it: 1 = admin only.
std::string rm_profiling_admin_only() {
    std::ifstream in("/proc/driver/nvidia/params");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("RmProfilingAdminOnly", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                std::string v = line.substr(colon + 1);
                v.erase(0, v.find_first_not_of(' '));
                return v;
            }
        }
    }
    return {};
}

}  // namespace

std::string cupti_hint(int result) {
    switch (result) {
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES: {
            std::string h =
                "GPU performance counters are restricted to admin users (ERR_NVGPUCTRPERM): run as "
                "root or with CAP_SYS_ADMIN (CAP_PERFMON from R565), or load the driver with "
                "NVreg_RestrictProfilingToAdminUsers=0; in a VM the hypervisor must enable "
                "profiling";
            const std::string v = rm_profiling_admin_only();
            if (!v.empty()) h += "; RmProfilingAdminOnly=" + v;
            return h;
        }
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
            return "another CUPTI client holds CUPTI (Nsight Systems, Nsight Compute, "
                   "compute-sanitizer, cuda-gdb or a profiler in this process); CUDA 13.0 allows "
                   "one subscriber";
        case CUPTI_ERROR_HARDWARE_BUSY:
            return "the performance-monitor hardware is in use (DCGM profiling metrics or another "
                   "profiler): pause it while benchmarking";
        case CUPTI_ERROR_NOT_INITIALIZED:
            return "CUPTI could not initialize: the driver may be older than this CUPTI";
        case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
            return "the deprecated CUPTI profiling API is active in this process";
        case CUPTI_ERROR_INVALID_METRIC_NAME:
            return "the metric does not exist on this chip (check the name with ncu "
                   "--query-metrics)";
        default:
            if (cupti_reason(result) == "unsupported_device") {
                return "profiling is not supported in this configuration (vGPU without profiling, "
                       "MIG, confidential compute, CMP, SLI or WSL)";
            }
            return {};
    }
}

// ---------------------------------------------------------------- records

std::string demangle_kernel_name(const char* mangled) {
    if (mangled == nullptr) return "<unnamed>";
    int status = 0;
    char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    if (status != 0 || out == nullptr) {
        std::free(out);
        return mangled;  // extern "C" kernels are not mangled
    }
    std::string s(out);
    std::free(out);
    return s;
}

traced_sample summarize_records(std::vector<kernel_record> records) {
    traced_sample s;
    s.kernels.reserve(records.size());
    for (auto& r : records) {
        if ((r.start_ns == 0 && r.end_ns == 0) || r.end_ns < r.start_ns) {
            ++s.untimed_records;
        } else {
            s.kernels.push_back(std::move(r));
        }
    }
    // Records in a CUPTI buffer are not ordered.
    std::stable_sort(
        s.kernels.begin(), s.kernels.end(), [](const kernel_record& a, const kernel_record& b) {
            return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
        });
    if (s.kernels.empty()) return s;
    std::uint64_t first = s.kernels.front().start_ns, last = 0, sum_ns = 0;
    for (const auto& k : s.kernels) {
        sum_ns += k.end_ns - k.start_ns;
        last = std::max(last, k.end_ns);
    }
    s.sum_us = static_cast<double>(sum_ns) * 1e-3;
    s.span_us = static_cast<double>(last - first) * 1e-3;
    return s;
}

// ---------------------------------------------------------------- the live tracer

namespace {

constexpr std::size_t activity_buffer_bytes = 1u << 20;  // [bytes] ~5000 kernel records
constexpr int activity_buffers_preallocated = 4;
constexpr std::size_t activity_buffer_align = 8;     // CUPTI requires 8-byte alignment
constexpr std::uint32_t min_cupti_version = 130001;  // 13.0 U1 fixed a deadlock in Disable

// CUPTI's buffer callbacks take no user pointer: this is the only way for them to reach the
// tracer. Guarded by g_live_mutex; set by create(), cleared by the destructor after the last
// forced flush. Lock order: g_live_mutex, then the tracer's m_mutex.
std::mutex g_live_mutex;
activity_tracer* g_live = nullptr;

// Zeroed and touched up front: CUPTI is told (ZEROED_OUT_ACTIVITY_BUFFER) that buffers arrive
// zeroed; otherwise it zeroes each new buffer itself in the application thread, inside a launch.
std::uint8_t* allocate_activity_buffer() {
    auto* b = static_cast<std::uint8_t*>(
        std::aligned_alloc(activity_buffer_align, activity_buffer_bytes));
    if (b) std::memset(b, 0, activity_buffer_bytes);
    return b;
}

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
    *max_records = 0;  // fill the buffer
    std::lock_guard lk(g_live_mutex);
    if (g_live != nullptr) {
        *buffer = g_live->take_buffer(*size);
    } else {
        *buffer = allocate_activity_buffer();
        *size = *buffer ? activity_buffer_bytes : 0;
    }
}

void CUPTIAPI on_buffer_completed(CUcontext ctx, std::uint32_t stream_id, std::uint8_t* buffer,
                                  std::size_t /*size*/, std::size_t valid_size) {
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
    std::lock_guard lk(g_live_mutex);
    if (g_live != nullptr) {
        g_live->accept_buffer(buffer, valid_size, dropped);
        g_live->return_buffer(buffer, valid_size);
    } else {
        std::free(buffer);
    }
}

// Never called: the subscription only claims CUPTI's one subscriber slot, so that a second tool
// is detected (error 39) instead of silently disturbing the timing.
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

const char* memcpy_kind_name(std::uint8_t kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "[memcpy HtoD]";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "[memcpy DtoH]";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "[memcpy DtoD]";
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "[memcpy HtoH]";
        case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "[memcpy PtoP]";
        default: return "[memcpy]";
    }
}

}  // namespace

std::unique_ptr<activity_tracer> activity_tracer::create(std::string& reason) {
    reason.clear();
    // Without a driver, CUPTI device calls fail with 999 or crash: probe the runtime first.
    if (cuda_device_count() == 0) {
        reason = "no_device";
        return nullptr;
    }
    {
        std::lock_guard lk(g_live_mutex);
        if (g_live != nullptr) {
            reason = "tracer_already_active";
            return nullptr;
        }
    }
    std::uint32_t version = 0;
    if (CUptiResult r = cuptiGetVersion(&version); r != CUPTI_SUCCESS) {
        reason = cupti_reason(r);
        return nullptr;
    }
    if (version < min_cupti_version) {
        reason = "cupti_too_old";
        return nullptr;
    }

    std::unique_ptr<activity_tracer> t(new activity_tracer());
    t->m_cupti_version = version;
    CUpti_SubscriberHandle h = nullptr;
    if (CUptiResult r = cuptiSubscribe(&h, on_callback, nullptr); r != CUPTI_SUCCESS) {
        reason = cupti_reason(r);
        return nullptr;
    }
    t->m_subscriber = h;

    auto fail = [&](const std::string& why) {
        reason = why;
        for (int k : t->m_enabled_kinds)
            (void)cuptiActivityDisable(static_cast<CUpti_ActivityKind>(k));
        t->m_enabled_kinds.clear();
        (void)cuptiUnsubscribe(h);
        t->m_subscriber = nullptr;
        return nullptr;
    };
    {
        std::uint8_t zeroed = 1;
        std::size_t size = sizeof zeroed;
        if (CUptiResult r = cuptiActivitySetAttribute(
                CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed);
            r != CUPTI_SUCCESS) {
            return fail(cupti_reason(r));
        }
        std::lock_guard lk(t->m_mutex);
        for (int i = 0; i < activity_buffers_preallocated; ++i) {
            if (std::uint8_t* b = allocate_activity_buffer()) t->m_free_buffers.push_back(b);
        }
    }
    if (CUptiResult r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
        r != CUPTI_SUCCESS) {
        return fail(cupti_reason(r));
    }
    // CONCURRENT_KERNEL keeps kernels concurrent (KIND_KERNEL would serialize them).
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                 CUPTI_ACTIVITY_KIND_MEMSET}) {
        if (CUptiResult r = cuptiActivityEnable(k); r != CUPTI_SUCCESS)
            return fail(cupti_reason(r));
        t->m_enabled_kinds.push_back(static_cast<int>(k));
    }
    bool installed = false;
    {
        std::lock_guard lk(g_live_mutex);
        if (g_live == nullptr) {
            g_live = t.get();
            installed = true;
        }
    }
    if (!installed) return fail("tracer_already_active");  // lost a race with another create()
    return t;
}

activity_tracer::~activity_tracer() {
    if (m_subscriber != nullptr) shut_down();  // null when create() failed part-way and cleaned up
    std::lock_guard lk(m_mutex);
    for (std::uint8_t* b : m_free_buffers) std::free(b);
    m_free_buffers.clear();
}

void activity_tracer::shut_down() noexcept {
    CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
    for (int k : m_enabled_kinds) {
        const CUptiResult r = cuptiActivityDisable(static_cast<CUpti_ActivityKind>(k));
        if (r != CUPTI_SUCCESS) {
            std::fprintf(stderr, "fusebench: cuptiActivityDisable: %s (ignored in a destructor)\n",
                         cupti_result_name(r).c_str());
        }
    }
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    {
        std::lock_guard lk(g_live_mutex);
        if (g_live == this) g_live = nullptr;
    }
    (void)cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(m_subscriber));
    m_subscriber = nullptr;
}

void activity_tracer::flush_all(bool forced) {
    // Never with m_mutex held: the completion callback runs on this thread and takes it.
    CUPTI_CHECK(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0));
}

void activity_tracer::begin() {
    // A record is delivered only once complete, and flush does not synchronize.
    CUDA_CHECK(cudaDeviceSynchronize());
    {
        std::lock_guard lk(m_mutex);
        m_in_sample = false;
    }
    // A default flush, not a forced one: on H200 a forced flush made the next launch call take
    // ~210 us instead of ~11 us, and that launch is the sample's first, inside any event window.
    // The device is idle, so every earlier record is complete and the default flush delivers it;
    // end() also drops records that finished before `now`, should one still arrive late.
    flush_all(false);
    std::uint64_t now = 0;
    CUPTI_CHECK(cuptiGetTimestamp(&now));  // same timeline as the records' start and end
    std::lock_guard lk(m_mutex);
    m_records.clear();
    m_begin_ns = now;
    m_in_sample = true;
}

traced_sample activity_tracer::end() {
    CUDA_CHECK(cudaDeviceSynchronize());
    // Forced: after the synchronize every record is complete, and forced also returns buffers
    // CUPTI still holds open. Its cost (a slow next launch) falls between samples.
    flush_all(true);
    std::vector<kernel_record> records;
    {
        std::lock_guard lk(m_mutex);
        records.swap(m_records);
        m_in_sample = false;
        std::vector<kernel_record> kept;
        kept.reserve(records.size());
        for (auto& r : records) {
            // Untimed records (0, 0) stay: summarize_records counts them.
            if (r.end_ns != 0 && r.end_ns <= m_begin_ns) {
                ++m_discarded;
            } else {
                kept.push_back(std::move(r));
            }
        }
        records.swap(kept);
    }
    return summarize_records(std::move(records));
}

void activity_tracer::set_serial(bool serial) {
    if (serial == m_serial) return;
    CUDA_CHECK(cudaDeviceSynchronize());
    flush_all(true);  // records of earlier work are complete; delivered now, outside any sample
    const CUpti_ActivityKind from = serial ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
    const CUpti_ActivityKind to = serial ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    if (CUptiResult r = cuptiActivityDisable(from); r != CUPTI_SUCCESS) {
        throw std::runtime_error("cuptiActivityDisable(kernel records): " + cupti_reason(r));
    }
    if (CUptiResult r = cuptiActivityEnable(to); r != CUPTI_SUCCESS) {
        (void)cuptiActivityEnable(from);  // back to the kind that worked
        throw std::runtime_error("cuptiActivityEnable(kernel records): " + cupti_reason(r));
    }
    std::lock_guard lk(m_mutex);
    std::replace(m_enabled_kinds.begin(), m_enabled_kinds.end(), static_cast<int>(from), static_cast<int>(to));
    m_serial = serial;
}

void activity_tracer::pause() {
    CUDA_CHECK(cudaDeviceSynchronize());
    flush_all(true);
    std::lock_guard lk(m_mutex);
    m_paused = true;
}

void activity_tracer::resume() {
    CUDA_CHECK(cudaDeviceSynchronize());
    flush_all(true);  // the replayed (untimed) records of the counter pass go to discarded
    std::lock_guard lk(m_mutex);
    m_paused = false;
}

bool activity_tracer::paused() const {
    std::lock_guard lk(m_mutex);
    return m_paused;
}

std::uint64_t activity_tracer::dropped_records() const {
    std::lock_guard lk(m_mutex);
    return m_dropped;
}

std::uint64_t activity_tracer::discarded_records() const {
    std::lock_guard lk(m_mutex);
    return m_discarded;
}

std::uint8_t* activity_tracer::take_buffer(std::size_t& size) {
    std::lock_guard lk(m_mutex);
    std::uint8_t* b = nullptr;
    if (!m_free_buffers.empty()) {
        b = m_free_buffers.back();
        m_free_buffers.pop_back();
    } else {
        b = allocate_activity_buffer();
    }
    size = b ? activity_buffer_bytes : 0;
    return b;
}

void activity_tracer::return_buffer(std::uint8_t* buffer, std::size_t used) {
    if (buffer == nullptr) return;
    // Zeroed here, at delivery (a flush, outside any timed launch), not in the next launch.
    // All of it: CUPTI may have touched bytes past `used` (1 MB: ~50 us).
    (void)used;
    std::memset(buffer, 0, activity_buffer_bytes);
    std::lock_guard lk(m_mutex);
    m_free_buffers.push_back(buffer);
}

void activity_tracer::accept_buffer(std::uint8_t* buffer, std::size_t valid_size,
                                    std::uint64_t dropped) {
    std::lock_guard lk(m_mutex);
    m_dropped += dropped;
    if (buffer == nullptr || valid_size == 0) return;
    const bool keep = m_in_sample && !m_paused;
    CUpti_Activity* rec = nullptr;
    // Stops at MAX_LIMIT_REACHED (end of buffer) or INVALID_KIND (an incomplete record).
    while (cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS) {
        kernel_record k;
        switch (rec->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                // Only the fields Kernel10 shares with later record versions are read.
                const auto* a = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
                if (!keep) break;
                const std::string mangled = a->name ? a->name : "";
                auto it = m_demangled.find(mangled);
                if (it == m_demangled.end()) {
                    it = m_demangled.emplace(mangled, demangle_kernel_name(a->name)).first;
                }
                k.name = it->second;
                k.start_ns = a->start;
                k.end_ns = a->end;
                k.device_id = a->deviceId;
                k.stream_id = a->streamId;
                k.correlation_id = a->correlationId;
                k.kind = "kernel";
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto* a = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
                if (!keep) break;
                k.name = memcpy_kind_name(a->copyKind);
                k.start_ns = a->start;
                k.end_ns = a->end;
                k.device_id = a->deviceId;
                k.stream_id = a->streamId;
                k.correlation_id = a->correlationId;
                k.kind = "memcpy";
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const auto* a = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
                if (!keep) break;
                k.name = "[memset]";
                k.start_ns = a->start;
                k.end_ns = a->end;
                k.device_id = a->deviceId;
                k.stream_id = a->streamId;
                k.correlation_id = a->correlationId;
                k.kind = "memset";
                break;
            }
            default: continue;  // kinds this tracer did not enable
        }
        if (keep) {
            m_records.push_back(std::move(k));
        } else {
            ++m_discarded;
        }
    }
}

}  // namespace fusebench
