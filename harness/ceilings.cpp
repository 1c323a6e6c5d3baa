#include "harness/ceilings.hpp"

#include "harness/ceiling_gemm.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device.hpp"
#include "harness/sm_clock.hpp"
#include "harness/stats.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace fusebench {

// ---------------------------------------------------------------- pure helpers

std::optional<double> theoretical_dram_gbps(int memory_clock_khz, int bus_width_bits) {
    if (memory_clock_khz <= 0 || bus_width_bits <= 0) return std::nullopt;
    return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) * 1e-9;
}

int fp32_lanes_per_sm(int cc_major, int cc_minor) {
    const int cc = cc_major * 10 + cc_minor;
    switch (cc) {
        case 70:
        case 72:
        case 75:
        case 80: return 64;
        case 86:
        case 87:
        case 89:
        case 90: return 128;
        case 100:
        case 101:
        case 103:
        case 110:
        case 120:
        case 121: return 128;
        default: return 0;
    }
}

std::optional<double> theoretical_fp32_tflops(int sm_count, int cc_major, int cc_minor,
                                              double sm_clock_mhz) {
    const int lanes = fp32_lanes_per_sm(cc_major, cc_minor);
    if (sm_count <= 0 || lanes == 0 || !(sm_clock_mhz > 0)) return std::nullopt;
    return sm_count * static_cast<double>(lanes) * 2.0 * sm_clock_mhz * 1e6 * 1e-12;
}

int tensor_flops_per_clock_per_sm(int cc_major, int cc_minor, int operand_bits) {
    // Dense, fp32 accumulation, from the vendor's peak figures over SMs x boost clock: A100
    // 312 TFLOP/s = 108 SMs x 1410 MHz x 2048; H100 SXM 989.4 = 132 x 1830 MHz x 4096 (fp8 1978.9
    // = x 8192). Parts not listed (consumer Ampere/Ada, Blackwell) are unknown here: 0.
    const int cc = cc_major * 10 + cc_minor;
    if (operand_bits == 16) {
        if (cc == 80) return 2048;
        if (cc == 90) return 4096;
    } else if (operand_bits == 8) {
        if (cc == 90) return 8192;
    }
    return 0;
}

std::optional<double> theoretical_tensor_tflops(int sm_count, int cc_major, int cc_minor,
                                                double sm_clock_mhz, int operand_bits) {
    const int per_clock = tensor_flops_per_clock_per_sm(cc_major, cc_minor, operand_bits);
    if (sm_count <= 0 || per_clock == 0 || !(sm_clock_mhz > 0)) return std::nullopt;
    return sm_count * static_cast<double>(per_clock) * sm_clock_mhz * 1e6 * 1e-12;
}

measured_ceiling ceiling_from_times(const std::vector<double>& times_ms, double work_per_rep,
                                    double scale, std::string unit, std::string method) {
    measured_ceiling c;
    c.unit = std::move(unit);
    c.method = std::move(method);
    c.samples = static_cast<int>(times_ms.size());
    if (times_ms.empty()) {
        c.reason = "no timed repetitions";
        return c;
    }
    for (double t : times_ms) {
        if (!(t > 0) || !std::isfinite(t)) {
            c.reason = "non-positive or non-finite repetition time";
            return c;
        }
    }
    const sample_stats s = summarize(times_ms);
    c.median_ms = s.median;
    c.noise = s.median > 0 ? s.stdev / s.median : 0;
    c.value = work_per_rep / (s.median * 1e-3) * scale;
    return c;
}

std::size_t ceiling_buffer_bytes(std::size_t l2_bytes, std::size_t free_bytes, bool quick) {
    constexpr std::size_t mib = std::size_t{1} << 20;
    const std::size_t floor_bytes = 4 * l2_bytes;
    std::size_t want =
        std::max(quick ? 4 * l2_bytes : 8 * l2_bytes, quick ? 256 * mib : 1024 * mib);
    want = std::min(want, free_bytes / 10 * 4);  // two buffers in at most 80 % of free memory
    want = want / mib * mib;
    return want >= floor_bytes && want > 0 ? want : 0;
}

// ---------------------------------------------------------------- measurement

namespace {

measured_ceiling failed_ceiling(std::string unit, std::string method, std::string reason) {
    measured_ceiling c;
    c.unit = std::move(unit);
    c.method = std::move(method);
    c.reason = std::move(reason);
    return c;
}

// Runs one measurement; a failure becomes a null value with the reason, except a sticky CUDA
// error, which the caller must see.
measured_ceiling guarded(const std::string& unit, const std::string& method, cudaStream_t stream,
                         const std::function<measured_ceiling()>& body) {
    try {
        measured_ceiling c = body();
        try {
            if (!c.sm_clock_mhz) c.sm_clock_mhz = measure_sm_clock_mhz(stream);
        } catch (const cuda_error& e) {
            if (e.sticky()) throw;
        }
        return c;
    } catch (const cuda_error& e) {
        if (e.sticky()) throw;
        return failed_ceiling(unit, method, std::string("error: ") + e.what());
    } catch (const std::exception& e) {
        (void)cudaGetLastError();
        return failed_ceiling(unit, method, std::string("error: ") + e.what());
    }
}

std::string mib_text(std::size_t bytes) {
    return std::to_string(bytes >> 20) + " MiB";
}

// The faster of two measurements of one ceiling; the method names both, so the report shows how
// close the two ways came.
measured_ceiling best_of(measured_ceiling a, measured_ceiling b, const std::string& method) {
    auto describe = [](const measured_ceiling& m) {
        char buf[64];
        if (m.value) std::snprintf(buf, sizeof buf, "%.0f GB/s", *m.value);
        return m.method + ": " + (m.value ? std::string(buf) : "failed (" + m.reason + ")");
    };
    const std::string both = method + " [" + describe(a) + "; " + describe(b) + "]";
    measured_ceiling best = (b.value && (!a.value || *b.value > *a.value)) ? std::move(b) : std::move(a);
    best.method = both;
    if (!best.value && best.reason.empty()) best.reason = "both measurements failed";
    return best;
}

}  // namespace

std::vector<double> time_reps(const std::function<void()>& op, int warmup, int reps,
                              cudaStream_t stream) {
    for (int i = 0; i < warmup; ++i) op();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<cuda_event> starts(static_cast<std::size_t>(reps)),
        stops(static_cast<std::size_t>(reps));
    for (int i = 0; i < reps; ++i) {
        starts[i].record(stream);
        op();
        stops[i].record(stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(reps));
    for (int i = 0; i < reps; ++i) ms.push_back(stops[i].elapsed_ms_since(starts[i]));
    return ms;
}

burst_times time_idle_bursts(const std::function<void()>& op, const burst_schedule& s, cudaStream_t stream) {
    if (s.bursts < 1 || s.launches < 1 || s.keep < 1 || s.keep > s.launches) {
        throw std::invalid_argument("time_idle_bursts: need bursts >= 1 and 1 <= keep <= launches");
    }
    burst_times out;
    std::vector<cuda_event> starts(static_cast<std::size_t>(s.launches)), stops(static_cast<std::size_t>(s.launches));
    std::vector<double> kept;
    for (int burst = 0; burst < s.bursts; ++burst) {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::this_thread::sleep_for(std::chrono::milliseconds(s.gap_ms));
        for (int i = 0; i < s.launches; ++i) {
            starts[i].record(stream);
            op();
            stops[i].record(stream);
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        kept.clear();
        for (int i = s.launches - s.keep; i < s.launches; ++i) kept.push_back(stops[i].elapsed_ms_since(starts[i]));
        out.ms.push_back(summarize(kept).median);
        out.sm_clock_mhz.push_back(measure_sm_clock_mhz(stream));
    }
    return out;
}

device_ceilings measure_ceilings(int device, cudaStream_t stream, bool quick) {
    device_ceilings c;
    c.device = device;
    c.quick = quick;
    const std::string gbps = "GB/s", tflops = "TFLOP/s";
    const std::string m_copy =
        "cudaMemcpyAsync device-to-device, (bytes read + written) / median time";
    const std::string m_read = "streaming read kernels, 16-byte loads, bytes / median time, the faster of two";
    const std::string m_write = "streaming writes, 16-byte stores, bytes / median time, the faster of cudaMemsetAsync and a store kernel";
    const std::string m_copy_kernel =
        "streaming copy kernel, 16-byte loads and stores, (bytes read + written) / median time";
    // The tensor-core GEMMs (ceiling_gemm) and their schedule (burst_schedule).
    constexpr int gemm_n = 8192;
    const burst_schedule sched;  // quick too: the gaps, not the GEMMs, take the time (~2 s a ceiling)
    const std::string m_schedule = ", " + std::to_string(sched.bursts) + " bursts of " + std::to_string(sched.launches) +
                                   " launches each after a " + std::to_string(sched.gap_ms) +
                                   " ms idle gap (a burst's time: the median of its last " + std::to_string(sched.keep) +
                                   "), 2 n^3 / median burst time; SM clock: the median of the reads after each burst";
    auto m_gemm = [&](ceiling_gemm_kind kind) { return ceiling_gemm::describe(kind, gemm_n) + m_schedule; };
    const std::string m_fma =
        "FMA-chain kernel, 8 independent chains per thread, 2 flops per FMA / median time";

    if (cuda_device_count() == 0) {
        for (auto* m : {&c.copy_gbps, &c.read_gbps, &c.write_gbps, &c.copy_kernel_gbps})
            *m = failed_ceiling(gbps, "", "no_device");
        for (auto* m : {&c.bf16_tflops, &c.fp16_tflops, &c.fp8_tflops, &c.fp32_tflops})
            *m = failed_ceiling(tflops, "", "no_device");
        c.copy_gbps.method = m_copy;
        c.read_gbps.method = m_read;
        c.write_gbps.method = m_write;
        c.copy_kernel_gbps.method = m_copy_kernel;
        c.bf16_tflops.method = m_gemm(ceiling_gemm_kind::bf16);
        c.fp16_tflops.method = m_gemm(ceiling_gemm_kind::fp16);
        c.fp8_tflops.method = m_gemm(ceiling_gemm_kind::fp8);
        c.fp32_tflops.method = m_fma;
        c.theoretical_reason = "no_device";
        return c;
    }
    CUDA_CHECK(cudaSetDevice(device));

    auto attr = [&](cudaDeviceAttr a) {
        int v = 0;
        if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
            (void)cudaGetLastError();
            v = 0;
        }
        return v;
    };
    const int sm_count = attr(cudaDevAttrMultiProcessorCount);
    const int cc_major = attr(cudaDevAttrComputeCapabilityMajor);
    const int cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
    const std::size_t l2 = static_cast<std::size_t>(attr(cudaDevAttrL2CacheSize));
    const int mem_khz = attr(cudaDevAttrMemoryClockRate);
    const int bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
    const max_sm_clock maxclk = query_max_sm_clock(device);
    c.max_sm_clock_mhz = maxclk.mhz;

    c.theoretical_dram_gbps = theoretical_dram_gbps(mem_khz, bus_bits);
    if (maxclk.mhz) {
        c.theoretical_fp32_tflops =
            theoretical_fp32_tflops(sm_count, cc_major, cc_minor, *maxclk.mhz);
        c.theoretical_tensor_16bit_tflops =
            theoretical_tensor_tflops(sm_count, cc_major, cc_minor, *maxclk.mhz, 16);
        c.theoretical_tensor_fp8_tflops =
            theoretical_tensor_tflops(sm_count, cc_major, cc_minor, *maxclk.mhz, 8);
    }
    {
        std::string why;
        if (!c.theoretical_dram_gbps) why += "memory clock or bus width attribute unavailable";
        if (!c.theoretical_fp32_tflops) {
            if (!why.empty()) why += "; ";
            why += !maxclk.mhz ? "max SM clock unknown (" + maxclk.reason + ")"
                               : "FP32 lanes per SM unknown for compute capability " +
                                     std::to_string(cc_major) + "." + std::to_string(cc_minor);
        }
        if (maxclk.mhz && (!c.theoretical_tensor_16bit_tflops || !c.theoretical_tensor_fp8_tflops)) {
            if (!why.empty()) why += "; ";
            why += "dense tensor-core rate per SM not tabulated for compute capability " +
                   std::to_string(cc_major) + "." + std::to_string(cc_minor) +
                   (c.theoretical_tensor_16bit_tflops ? " (fp8 operands)" : "");
        }
        c.theoretical_reason = why;
    }

    const int warmup = quick ? 2 : 3;
    const int reps = quick ? 10 : 20;

    // ---- bandwidth: buffers well beyond L2, so every repetition streams from DRAM
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t buf_bytes = ceiling_buffer_bytes(l2, free_b, quick);
    if (buf_bytes == 0) {
        const std::string why = "not enough free device memory for 2 buffers of 4x L2";
        c.copy_gbps = failed_ceiling(gbps, m_copy, why);
        c.read_gbps = failed_ceiling(gbps, m_read, why);
        c.write_gbps = failed_ceiling(gbps, m_write, why);
        c.copy_kernel_gbps = failed_ceiling(gbps, m_copy_kernel, why);
    } else {
        device_buffer src(buf_bytes), dst(buf_bytes), sink(sizeof(unsigned));
        CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5a, buf_bytes, stream));
        CUDA_CHECK(cudaMemsetAsync(dst.get(), 0, buf_bytes, stream));
        const std::string size_note = ", 2 x " + mib_text(buf_bytes);
        c.copy_gbps = guarded(gbps, m_copy + size_note, stream, [&] {
            auto t = time_reps(
                [&] {
                    CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), buf_bytes,
                                               cudaMemcpyDeviceToDevice, stream));
                },
                warmup, reps, stream);
            return ceiling_from_times(t, 2.0 * buf_bytes, 1e-9, gbps, m_copy + size_note);
        });
        const std::string mib = mib_text(buf_bytes);
        c.read_gbps = best_of(
            guarded(gbps, "grid-stride kernel, 4 loads in flight, " + mib, stream, [&] {
                auto t = time_reps(
                    [&] {
                        detail::launch_stream_read(src.get(), buf_bytes,
                                                   static_cast<unsigned*>(sink.get()), sm_count, stream);
                    },
                    warmup, reps, stream);
                return ceiling_from_times(t, static_cast<double>(buf_bytes), 1e-9, gbps,
                                          "grid-stride kernel, 4 loads in flight, " + mib);
            }),
            guarded(gbps, "block-contiguous 32 KiB spans, 8 loads in flight, " + mib, stream, [&] {
                auto t = time_reps(
                    [&] {
                        detail::launch_stream_read_spans(src.get(), buf_bytes,
                                                         static_cast<unsigned*>(sink.get()), stream);
                    },
                    warmup, reps, stream);
                return ceiling_from_times(t, static_cast<double>(buf_bytes), 1e-9, gbps,
                                          "block-contiguous 32 KiB spans, 8 loads in flight, " + mib);
            }),
            m_read);
        c.write_gbps = best_of(
            guarded(gbps, "cudaMemsetAsync, " + mib, stream, [&] {
                auto t = time_reps(
                    [&] { CUDA_CHECK(cudaMemsetAsync(dst.get(), 0x3c, buf_bytes, stream)); },
                    warmup, reps, stream);
                return ceiling_from_times(t, static_cast<double>(buf_bytes), 1e-9, gbps,
                                          "cudaMemsetAsync, " + mib);
            }),
            guarded(gbps, "store kernel, one 16-byte store per thread, " + mib, stream, [&] {
                auto t = time_reps([&] { detail::launch_stream_write(dst.get(), buf_bytes, stream); },
                                   warmup, reps, stream);
                return ceiling_from_times(t, static_cast<double>(buf_bytes), 1e-9, gbps,
                                          "store kernel, one 16-byte store per thread, " + mib);
            }),
            m_write);
        c.copy_kernel_gbps = guarded(gbps, m_copy_kernel + size_note, stream, [&] {
            auto t = time_reps(
                [&] { detail::launch_stream_copy(src.get(), dst.get(), buf_bytes, stream); },
                warmup, reps, stream);
            return ceiling_from_times(t, 2.0 * buf_bytes, 1e-9, gbps, m_copy_kernel + size_note);
        });
    }

    // ---- fp32 FMA rate, before the GEMMs: they heat the GPU and can lower its clock
    c.fp32_tflops = guarded(tflops, m_fma, stream, [&] {
        int threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
        if (threads_per_sm <= 0) threads_per_sm = 2048;
        const int threads = 256;
        const int blocks = std::max(1, sm_count) * std::max(1, threads_per_sm / threads);
        // About 2 ms per repetition at the theoretical peak (60 TFLOP/s when unknown).
        const double peak = c.theoretical_fp32_tflops.value_or(60.0) * 1e12;
        const double per_iteration =
            static_cast<double>(blocks) * threads * detail::fma_chain_flops_per_thread_iteration;
        const int iterations = std::max(64, static_cast<int>(peak * 2e-3 / per_iteration));
        device_buffer sink(sizeof(float));
        auto t = time_reps(
            [&] {
                detail::launch_fma_chains(static_cast<float*>(sink.get()), iterations, blocks,
                                          threads, stream);
            },
            warmup, reps, stream);
        const std::string method = m_fma + ", " + std::to_string(blocks) + " x " +
                                   std::to_string(threads) + " threads, " +
                                   std::to_string(iterations) + " iterations";
        return ceiling_from_times(t, per_iteration * iterations, 1e-12, tflops, method);
    });
    // ---- tensor-core GEMMs through cuBLAS / cuBLASLt, in bursts after idle gaps (burst_schedule)
    auto gemm_ceiling = [&](ceiling_gemm_kind kind) {
        return guarded(tflops, m_gemm(kind), stream, [&] {
            ceiling_gemm g(kind, gemm_n, stream);
            g.run();  // loads the library's kernels: not timed
            CUDA_CHECK(cudaStreamSynchronize(stream));
            const burst_times b = time_idle_bursts([&] { g.run(); }, sched, stream);
            measured_ceiling m = ceiling_from_times(b.ms, g.flops(), 1e-12, tflops, m_gemm(kind));
            m.sm_clock_mhz = summarize(b.sm_clock_mhz).median;
            return m;
        });
    };
    c.bf16_tflops = gemm_ceiling(ceiling_gemm_kind::bf16);
    c.fp16_tflops = gemm_ceiling(ceiling_gemm_kind::fp16);
    c.fp8_tflops = gemm_ceiling(ceiling_gemm_kind::fp8);

    return c;
}

// ---------------------------------------------------------------- JSON

nlohmann::json to_json(const measured_ceiling& c) {
    using nlohmann::json;
    json j;
    j["value"] = c.value ? json(*c.value) : json(nullptr);
    j["unit"] = c.unit;
    j["method"] = c.method;
    j["reason"] = c.value ? json(nullptr) : json(c.reason.empty() ? "unknown" : c.reason);
    j["samples"] = c.samples;
    j["noise"] = c.value ? json(c.noise) : json(nullptr);
    j["median_ms"] = c.value ? json(c.median_ms) : json(nullptr);
    j["sm_clock_mhz_after"] = c.sm_clock_mhz ? json(*c.sm_clock_mhz) : json(nullptr);
    return j;
}

nlohmann::json to_json(const device_ceilings& c) {
    using nlohmann::json;
    json j;
    j["device"] = c.device;
    j["quick"] = c.quick;
    j["copy_gbps"] = to_json(c.copy_gbps);
    j["read_gbps"] = to_json(c.read_gbps);
    j["write_gbps"] = to_json(c.write_gbps);
    j["copy_kernel_gbps"] = to_json(c.copy_kernel_gbps);
    j["bf16_tflops"] = to_json(c.bf16_tflops);
    j["fp16_tflops"] = to_json(c.fp16_tflops);
    j["fp8_tflops"] = to_json(c.fp8_tflops);
    j["fp32_tflops"] = to_json(c.fp32_tflops);
    json th;
    th["dram_gbps"] = c.theoretical_dram_gbps ? json(*c.theoretical_dram_gbps) : json(nullptr);
    th["fp32_tflops"] =
        c.theoretical_fp32_tflops ? json(*c.theoretical_fp32_tflops) : json(nullptr);
    th["tensor_16bit_tflops"] = c.theoretical_tensor_16bit_tflops
                                    ? json(*c.theoretical_tensor_16bit_tflops)
                                    : json(nullptr);
    th["tensor_fp8_tflops"] =
        c.theoretical_tensor_fp8_tflops ? json(*c.theoretical_tensor_fp8_tflops) : json(nullptr);
    th["reason"] = c.theoretical_reason.empty() ? json(nullptr) : json(c.theoretical_reason);
    th["method"] =
        "device attributes: 2 x memory clock x bus width; SMs x FP32 lanes x 2 x max SM clock; "
        "SMs x dense tensor flops per clock per SM (fp32 accumulation) x max SM clock";
    j["theoretical"] = std::move(th);
    j["max_sm_clock_mhz"] = c.max_sm_clock_mhz ? json(*c.max_sm_clock_mhz) : json(nullptr);
    return j;
}

std::optional<double> ceiling_value(const nlohmann::json& ceilings, const char* key) {
    if (!ceilings.is_object()) return std::nullopt;
    const auto it = ceilings.find(key);
    if (it == ceilings.end() || !it->is_object()) return std::nullopt;
    const auto v = it->find("value");
    return v != it->end() && v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt;
}

std::vector<std::string> describe_ceilings(const nlohmann::json& j) {
    std::vector<std::string> lines;
    if (!j.is_object()) return lines;
    auto text = [&](const char* key) {
        if (const auto v = ceiling_value(j, key)) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.0f", *v);
            return std::string(buf);
        }
        std::string why = "not measured";
        if (j.contains(key) && j[key].is_object() && j[key].contains("reason") && j[key]["reason"].is_string()) {
            why += " (" + j[key]["reason"].get<std::string>() + ")";
        }
        return why;
    };
    lines.push_back("measured copy bandwidth " + text("copy_gbps") + " GB/s (read stream " + text("read_gbps") + ", write stream " +
                    text("write_gbps") + " GB/s)");
    std::optional<double> max_clock;
    if (j.contains("max_sm_clock_mhz") && j["max_sm_clock_mhz"].is_number()) max_clock = j["max_sm_clock_mhz"].get<double>();
    std::string clocks;
    std::vector<std::string> warnings;
    for (const auto& [key, name] : {std::pair{"bf16_tflops", "bf16"}, std::pair{"fp16_tflops", "fp16"}, std::pair{"fp8_tflops", "fp8"}}) {
        if (!ceiling_value(j, key)) continue;
        const auto& c = j[key]["sm_clock_mhz_after"];
        if (!c.is_number()) continue;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", c.get<double>());
        clocks += (clocks.empty() ? "" : " / ") + std::string(buf);
        if (max_clock && clock_below(c.get<double>(), *max_clock, 0.85)) {
            char w[200];
            std::snprintf(w, sizeof w, "warning: the SM clock after the %s ceiling's GEMMs read %.0f MHz, below 85%% of the maximum %.0f MHz: "
                          "that ceiling is a throttled rate", name, c.get<double>(), *max_clock);
            warnings.emplace_back(w);
        }
    }
    lines.push_back("measured tensor-core GEMMs bf16 " + text("bf16_tflops") + " / fp16 " + text("fp16_tflops") + " / fp8 " +
                    text("fp8_tflops") + " TFLOP/s" + (clocks.empty() ? std::string() : " (SM clock after them " + clocks + " MHz)") +
                    ", FMA " + text("fp32_tflops") + " TFLOP/s");
    lines.insert(lines.end(), warnings.begin(), warnings.end());
    return lines;
}

}  // namespace fusebench
