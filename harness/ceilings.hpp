// Ceilings measured on the GPU at hand, once per run and device: datasheet peaks are wrong (an
// H100 SXM copies at about 3.0 TB/s of a 3.35 TB/s datasheet figure), and "% of speed of light"
// must be relative to what the card can really do. Theoretical peaks from the device attributes
// are reported beside them.
#pragma once

#include <cuda_runtime_api.h>

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fusebench {

struct measured_ceiling {
    std::optional<double> value;         // null when it could not be measured
    std::string unit;                    // "GB/s" (1e9 bytes/s) or "TFLOP/s"
    std::string method;                  // what was timed and how
    std::string reason;                  // why value is null
    int samples = 0;                     // timed repetitions
    double noise = 0;                    // stdev / median of the timed repetitions
    double median_ms = 0;                // median time of one repetition [ms]
    // Measured right after the repetitions (the tensor-core GEMMs: after each burst, the median):
    // shows throttling.
    std::optional<double> sm_clock_mhz;
};

// The tensor-core ceilings' schedule. An 8192^3 GEMM draws enough power that launches back to back
// run into the board's power limit within a few tens of milliseconds: the FP8 ceiling timed that
// way read 1269-1430 TFLOP/s over four default runs on two H100s and two H200s, the SM clock after
// it 1407-1708 MHz, while the kernels it judges (tens of microseconds) run at 1965-1990 MHz
// (kernels/fp8/NOTES.md). Short bursts after idle gaps held 1938-2000 MHz and read the rate of an
// unthrottled back-to-back run (harness/probes/fp8_ceiling_clock.cu). So: `bursts` bursts of
// `launches` launches, each burst after `gap_ms` of idle time (the stream synchronized, the host
// asleep), each launch between its own events; a burst's time is the median of its last `keep`
// launches (the first ones absorb the ramp from idle), the SM clock read after each burst.
struct burst_schedule {
    int bursts = 10;
    int launches = 5;
    int keep = 3;
    int gap_ms = 200;
};
struct burst_times {
    std::vector<double> ms;            // one per burst
    std::vector<double> sm_clock_mhz;  // one per burst, read right after it
};
// `warmup` untimed launches, then `reps` back to back, each between its own events; the times [ms].
// The bandwidth and FMA ceilings' schedule. Throws cuda_error (and whatever op throws).
std::vector<double> time_reps(const std::function<void()>& op, int warmup, int reps, cudaStream_t stream);
// Throws cuda_error (and whatever op throws). Requires 1 <= keep <= launches, bursts >= 1.
burst_times time_idle_bursts(const std::function<void()>& op, const burst_schedule& s, cudaStream_t stream);


struct device_ceilings {
    int device = 0;
    bool quick = false;
    // Large cudaMemcpyAsync D2D (>= 4x L2): (bytes read + written) / median time.
    measured_ceiling copy_gbps;
    // Read-only streaming, 16-byte loads: the best of two kernels (grid-stride with four loads in
    // flight; one block-contiguous span per block). The speed-of-light guard's read rate: a
    // kernel's compulsory reads cannot stream faster than the best read-only stream we measure.
    measured_ceiling read_gbps;
    // Write-only streaming: the best of cudaMemsetAsync and a 16-byte store kernel. The guard's
    // write rate.
    measured_ceiling write_gbps;
    // Streaming copy kernel, 16-byte loads and stores: what a fused elementwise kernel can reach.
    measured_ceiling copy_kernel_gbps;
    // cuBLAS GEMM 8192^3 on random (not zero) data, tensor cores, fp32 accumulation.
    measured_ceiling bf16_tflops, fp16_tflops;
    // Dense FP8 tensor-core rate: cuBLASLt E4M3 x E4M3 -> bf16, fp32 accumulation, 8192^3 (the
    // ceiling of the fp8_gemm suite's `tensor_fp8` unit).
    measured_ceiling fp8_tflops;
    // FMA-chain kernel.
    measured_ceiling fp32_tflops;
    // From device attributes; null (with theoretical_reason) when unknown.
    std::optional<double> theoretical_dram_gbps, theoretical_fp32_tflops;
    // Dense tensor-core peaks at the maximum SM clock: bf16/fp16 operands and fp8 operands, fp32
    // accumulation. Null for compute capabilities this table does not know.
    std::optional<double> theoretical_tensor_16bit_tflops, theoretical_tensor_fp8_tflops;
    std::string theoretical_reason;
    std::optional<double> max_sm_clock_mhz;  // used for the theoretical fp32 peak
};

// Never throws for a measurement that fails (value null, reason set), except for a sticky CUDA
// error (the context is lost: the caller must know). Without a device every value is null with
// reason "no_device". quick: smaller buffers and fewer repetitions (the tensor-core GEMMs' bursts,
// about 2 s each, stay as they are). About 7 s either way.
device_ceilings measure_ceilings(int device, cudaStream_t stream, bool quick);

nlohmann::json to_json(const measured_ceiling& c);

// The value of ceiling `key` ("copy_gbps", "fp8_tflops", ...) of a report's ceilings block; null
// when the block, the ceiling or its value is missing or null. Every reader of the block uses it.
std::optional<double> ceiling_value(const nlohmann::json& ceilings, const char* key);

// The lines `fusebench run` prints once the ceilings are measured (a report's "ceilings" block): the
// bandwidths, the tensor-core and FMA rates with the SM clock read after the GEMMs, and a warning for
// each GEMM ceiling read below 85 % of the maximum SM clock (the judged kernels would then be held
// to a throttled rate). A value that is missing or null reads "not measured (reason)".
std::vector<std::string> describe_ceilings(const nlohmann::json& ceilings);
nlohmann::json to_json(const device_ceilings& c);  // nulls with reasons, never 0 for unknown

// ---- pure helpers, tested on the CPU

// 2 (double data rate) * clock * bus width; null when an attribute is 0 (unknown).
std::optional<double> theoretical_dram_gbps(int memory_clock_khz, int bus_width_bits);
// FP32 lanes per SM for a compute capability; 0 when this table does not know it.
int fp32_lanes_per_sm(int cc_major, int cc_minor);
// sm_count * lanes * 2 flops per FMA * clock; null when any input is unknown.
std::optional<double> theoretical_fp32_tflops(int sm_count, int cc_major, int cc_minor,
                                              double sm_clock_mhz);
// Dense tensor-core flops per clock per SM (fp32 accumulation) for 16-bit (operand_bits 16) or
// 8-bit float operands (operand_bits 8); 0 when this table does not know the part.
int tensor_flops_per_clock_per_sm(int cc_major, int cc_minor, int operand_bits);
// sm_count * tensor flops per clock per SM * clock; null when any input is unknown.
std::optional<double> theoretical_tensor_tflops(int sm_count, int cc_major, int cc_minor,
                                                double sm_clock_mhz, int operand_bits);
// value = work_per_rep / median time, scaled: work in bytes -> GB/s with scale 1e-9, flops ->
// TFLOP/s with scale 1e-12. times_ms must hold positive times; otherwise value is null.
measured_ceiling ceiling_from_times(const std::vector<double>& times_ms, double work_per_rep,
                                    double scale, std::string unit, std::string method);
// Bytes per buffer for the bandwidth ceilings: at least 4x L2 (8x when not quick) and 256 MiB
// (1 GiB when not quick), at most 40 % of free memory per buffer (two are needed); 0 when free
// memory cannot hold 4x L2.
std::size_t ceiling_buffer_bytes(std::size_t l2_bytes, std::size_t free_bytes, bool quick);

namespace detail {
// Kernels of the ceilings (harness/ceilings.cu). Generic streaming kernels: the counter tests use
// them too. Each checks cudaGetLastError() and throws; none synchronizes.

// Reads `bytes` (a multiple of 16, 16-byte aligned) with 16-byte loads; writes d_sink[0] only
// when an impossible checksum comes out, so the loads cannot be elided.
void launch_stream_read(const void* d_src, std::size_t bytes, unsigned* d_sink, int sm_count,
                        cudaStream_t stream);
// Reads one byte every `stride` bytes of [d_src, d_src + bytes), one thread per byte in blocks of
// 256: a kernel of many short blocks (the tracer tests use it).
void launch_strided_read(const void* d_src, std::size_t bytes, std::size_t stride, unsigned* d_sink,
                         cudaStream_t stream);
// Reads `bytes` like launch_stream_read, but every block of 256 threads reads one contiguous
// 32 KiB span (8 16-byte loads per thread, all issued before any use), the grid covering the
// buffer once: each DRAM page is read by one block at a time, as in the copy kernel.
void launch_stream_read_spans(const void* d_src, std::size_t bytes, unsigned* d_sink, cudaStream_t stream);
// Writes `bytes` (a multiple of 16, 16-byte aligned) with 16-byte stores of a pattern, one element
// per thread over a full grid.
void launch_stream_write(void* d_dst, std::size_t bytes, cudaStream_t stream);
// Copies `bytes` (a multiple of 16, both 16-byte aligned) with 16-byte loads and stores, one
// element per thread over a full grid.
void launch_stream_copy(const void* d_src, void* d_dst, std::size_t bytes, cudaStream_t stream);
// blocks x threads threads each run 8 independent FMA chains of 128 * iterations FMAs in all:
// flops = blocks * threads * iterations * 256.
// One block of 32 threads that does nothing: what a timer reads for a launch with no work (the
// runner's `timing.empty_kernel`).
void launch_empty_kernel(cudaStream_t stream);
void launch_fma_chains(float* d_sink, int iterations, int blocks, int threads, cudaStream_t stream);
constexpr double fma_chain_flops_per_thread_iteration = 256;
// Uniform values in [-1, 1) from a hash of (seed, index): bf16 when `bf16`, else fp16.
// Random finite E4M3 codes (|x| < 2, both signs, never a NaN code).
void launch_fill_random_fp8(void* d_dst, std::size_t n, std::uint64_t seed, cudaStream_t stream);
void launch_fill_random_16bit(void* d_dst, std::size_t n, bool bf16, std::uint64_t seed,
                              cudaStream_t stream);
}  // namespace detail

}  // namespace fusebench
