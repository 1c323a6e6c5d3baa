// The fp8_gemm family (issue 19): block-scaled FP8 GEMM in the DeepSeek-V3 layout,
//   D [M, N] bf16 = (A * a_scale) (B * b_scale)^T, fp32 accumulation,
// A [M, K] E4M3 activations with one fp32 scale per 1 x 128 run of a row, B [N, K] E4M3 weights
// with one fp32 scale per 128 x 128 tile (kernels/fp8/gemm.hpp, references/fp8_gemm_reference.hpp).
//
// Inputs are realistic codes: a seeded bf16 source (activations with per-channel magnitudes and
// outlier channels, weights with per-row magnitudes) quantized by the CPU quantizer
// (references/fp8_reference.hpp, bit-exact with the GPU one). The sources travel as two more
// inputs that no variant reads: they are there for the quantization figure only.
//
// Two numbers per result, kept apart:
// - the verdict: the output against fp64 on the DEQUANTIZED inputs (the kernel's own error),
//   element-wise and relative to the naive baseline's error;
// - the quantization figure (output_check figures "quant_*"): the output against fp64 of the
//   UNQUANTIZED bf16 sources (rel L2, max abs, cosine, correlation), and the same for the fp64
//   reference itself ("quant_floor_rel_l2": what E4M3 with these scales costs, whatever the
//   kernel). Never part of the verdict.
//
// Not in the default run until it has been verified on a GPU (fusebench run --suite fp8_gemm).
#include "harness/parallel.hpp"
#include "kernels/fp8/gemm.hpp"
#include "references/fp8_gemm_reference.hpp"
#include "references/fp8_reference.hpp"
#include "suites/suites.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fusebench {
namespace {

namespace k = kernels;
namespace ref = references;

constexpr std::size_t block = kernels::fp8_gemm_block;

struct gemm_dims {
    std::size_t m, n, k;
    std::size_t kb() const { return (k + block - 1) / block; }
    std::size_t nb() const { return (n + block - 1) / block; }
};

gemm_dims dims_of(const case_desc& c) {
    return {static_cast<std::size_t>(c.dim("M")), static_cast<std::size_t>(c.dim("N")), static_cast<std::size_t>(c.dim("K"))};
}

k::fp8_gemm_shape kernel_shape(const case_desc& c) {
    const auto d = dims_of(c);
    return {d.m, d.n, d.k};
}

// ------------------------------------------------------------------ cases

struct projection {
    const char* label;
    std::int64_t n, k;  // weight [N, K] = [out, in]
};

// Llama-3-8B (hidden 4096, MLP 14336), Llama-3-70B (8192, 28672), DeepSeek-V3 (hidden 7168, dense
// MLP 18432, expert MLP 2048, q_lora_rank 1536 -> 128 heads x 192, kv_a 512 + 64, o 128 x 128).
constexpr projection projections[] = {
    {"llama3-8b.qo", 4096, 4096},          {"llama3-8b.gate_up", 14336, 4096},   {"llama3-8b.down", 4096, 14336},
    {"llama3-70b.qo", 8192, 8192},         {"llama3-70b.gate_up", 28672, 8192},  {"llama3-70b.down", 8192, 28672},
    {"deepseek-v3.expert_gate_up", 2048, 7168}, {"deepseek-v3.expert_down", 7168, 2048},
    {"deepseek-v3.q_b", 24576, 1536},      {"deepseek-v3.kv_a", 576, 7168},      {"deepseek-v3.o", 7168, 16384},
    {"deepseek-v3.dense_down", 7168, 18432},
};
constexpr std::int64_t token_counts[] = {1, 16, 128, 1024, 4096, 8192};

std::string case_name(std::int64_t m, std::int64_t n, std::int64_t kk, const std::string& label, const std::string& kind) {
    std::string s = "M" + std::to_string(m) + ":N" + std::to_string(n) + ":K" + std::to_string(kk);
    if (!label.empty()) s += ":" + label;
    if (kind != "random") s += ":" + kind;
    return s;
}

case_desc make_case(std::int64_t m, std::int64_t n, std::int64_t kk, const std::string& label, const std::string& kind, bool quick,
                    bool timed, bool full_only) {
    case_desc c;
    c.name = case_name(m, n, kk, label, kind);
    c.type = dtype::e4m3;
    c.dims = {{"M", m}, {"N", n}, {"K", kk}};
    c.input_kind = kind;
    c.quick = quick;
    c.timed = timed;
    c.full_only = full_only;
    return c;
}

// Timed in the default selection: Llama-3-8B's 4096 x 4096 projection at M = 1, 128, 4096 (decode,
// small batch, prefill), its MLP up projection and DeepSeek-V3's expert down projection at 4096
// tokens. Every other (model projection, M) pair is in --full. Verified only, in the default run:
// ragged M (1000), K not a multiple of 128 (300, 4000: partial last block), N not a multiple of 128
// (130, 576: partial last tile), K and N off the 16-byte grid (peer skipped), and adversarial inputs.
std::vector<case_desc> fp8_gemm_cases() {
    std::vector<case_desc> out;
    auto is_default = [](const std::string& label, std::int64_t m) {
        if (label == "llama3-8b.qo") return m == 1 || m == 128 || m == 4096;
        return (label == "llama3-8b.gate_up" || label == "deepseek-v3.expert_down") && m == 4096;
    };
    for (const auto& p : projections) {
        for (std::int64_t m : token_counts) {
            const bool def = is_default(p.label, m);
            out.push_back(make_case(m, p.n, p.k, p.label, "random", def && m == 1, true, !def));
        }
    }
    out.push_back(make_case(3, 5, 7, "", "random", true, false, false));
    out.push_back(make_case(17, 130, 300, "", "random", true, false, false));
    out.push_back(make_case(200, 200, 200, "", "random", true, false, false));
    out.push_back(make_case(33, 256, 4000, "", "random", true, false, false));
    out.push_back(make_case(128, 384, 384, "", "random", true, false, false));
    out.push_back(make_case(128, 384, 384, "", "zero_blocks", true, false, false));
    out.push_back(make_case(128, 384, 384, "", "outliers", true, false, false));
    out.push_back(make_case(1000, 576, 7168, "deepseek-v3.kv_a", "random", false, false, false));
    out.push_back(make_case(1000, 4096, 4096, "llama3-8b.qo", "random", false, false, false));
    return out;
}

// ------------------------------------------------------------------ inputs

enum input_index : std::size_t { in_a = 0, in_a_scale, in_b, in_b_scale, in_a_source, in_b_source };

std::vector<tensor_spec> fp8_gemm_inputs(const case_desc& c) {
    const auto d = dims_of(c);
    const auto m = static_cast<std::int64_t>(d.m), n = static_cast<std::int64_t>(d.n), kk = static_cast<std::int64_t>(d.k);
    const auto kb = static_cast<std::int64_t>(d.kb()), nb = static_cast<std::int64_t>(d.nb());
    return {{"a", dtype::e4m3, {m, kk}, 0, -1},
            {"a_scale", dtype::f32, {m, kb}, 0, -1},
            {"b", dtype::e4m3, {n, kk}, 0, -1},
            {"b_scale", dtype::f32, {nb, kb}, 0, -1},
            // The unquantized sources (read by no variant: the quantization figure's yardstick).
            {"a_source", dtype::bf16, {m, kk}, 0, -1},
            {"b_source", dtype::bf16, {n, kk}, 0, -1}};
}

std::vector<tensor_spec> fp8_gemm_outputs(const case_desc& c) {
    const auto d = dims_of(c);
    return {{"d", dtype::bf16, {static_cast<std::int64_t>(d.m), static_cast<std::int64_t>(d.n)}, 0, -1}};
}

// Sources (stored as bf16):
//   a[m, k] = t_m c_k z: token magnitudes t_m = 2^U(-1, 1), channel magnitudes c_k = 2^U(-2, 2) with
//     1% outlier channels 16x larger (the activation outliers that make per-block scales matter);
//   b[n, k] = r_n z / sqrt(K): row magnitudes r_n = 2^U(-1, 1);
//   z ~ N(0, 1). Block and tile scales therefore differ from one another (a scale applied to the
//   wrong block changes the result).
// zero_blocks: the 1 x 128 runs of A with (m + j) % 3 == 0 and the tiles of B with (i + j) % 2 == 0
//   are zero (scale 1, codes 0).
// outliers: one element of every 1 x 128 run of A and of every tile of B is 500x its row's
//   magnitude: the rest of the block falls into E4M3's subnormals (a kernel that flushes them, or
//   decodes them wrongly, fails).
void fp8_gemm_generate(const case_desc& c, const rng& r, std::vector<host_tensor>& in) {
    const auto d = dims_of(c);
    const std::string& kind = c.input_kind;
    const rng ra = r.fork("a"), rb = r.fork("b"), rch = r.fork("channel"), rout = r.fork("outlier channel"),
              rtok = r.fork("token"), rrow = r.fork("row"), rpos = r.fork("outlier position");
    const std::size_t kb = d.kb();
    std::vector<double> chan(d.k);
    for (std::size_t j = 0; j < d.k; ++j) {
        chan[j] = std::exp2(4.0 * rch.uniform(j) - 2.0) * (rout.uniform(j) < 0.01 ? 16.0 : 1.0);
    }
    // A, row by row.
    parallel_for(d.m, [&](std::size_t b0, std::size_t e0) {
        std::vector<double> z(d.k);
        for (std::size_t i = b0; i < e0; ++i) {
            const double t = std::exp2(2.0 * rtok.uniform(i) - 1.0);
            ra.fill_normal(i * d.k, d.k, z.data());
            for (std::size_t j = 0; j < d.k; ++j) {
                double v = t * chan[j] * z[j];
                if (kind == "zero_blocks" && (i + j / block) % 3 == 0) v = 0;
                in[in_a_source].set(i * d.k + j, v);
            }
            if (kind == "outliers") {
                for (std::size_t jb = 0; jb < kb; ++jb) {
                    const std::size_t len = std::min(block, d.k - jb * block);
                    const std::size_t j = jb * block + rpos.bits(i * kb + jb) % len;
                    in[in_a_source].set(i * d.k + j, (z[j] < 0 ? -500.0 : 500.0) * t);
                }
            }
        }
    }, 16);
    // B, row by row.
    const double inv_sqrt_k = 1.0 / std::sqrt(static_cast<double>(d.k));
    parallel_for(d.n, [&](std::size_t b0, std::size_t e0) {
        std::vector<double> z(d.k);
        for (std::size_t i = b0; i < e0; ++i) {
            const double rr = std::exp2(2.0 * rrow.uniform(i) - 1.0) * inv_sqrt_k;
            rb.fill_normal(i * d.k, d.k, z.data());
            for (std::size_t j = 0; j < d.k; ++j) {
                double v = rr * z[j];
                if (kind == "zero_blocks" && (i / block + j / block) % 2 == 0) v = 0;
                in[in_b_source].set(i * d.k + j, v);
            }
        }
    }, 16);
    if (kind == "outliers") {
        for (std::size_t ti = 0; ti < d.nb(); ++ti) {
            for (std::size_t tj = 0; tj < kb; ++tj) {
                const std::size_t rows = std::min(block, d.n - ti * block), cols = std::min(block, d.k - tj * block);
                const std::uint64_t pick = rpos.fork("b").bits(ti * kb + tj);
                const std::size_t i = ti * block + pick % rows, j = tj * block + (pick >> 32) % cols;
                in[in_b_source].set(i * d.k + j, 500.0 * std::exp2(2.0 * rrow.uniform(i) - 1.0) * inv_sqrt_k);
            }
        }
    }
    // Quantize with the CPU quantizer: A in chunks of rows, B in bands of 128 rows (a tile never
    // crosses a band, so the result is the whole-matrix quantization's).
    auto to_float = [](const host_tensor& t, std::size_t first, std::size_t count) {
        std::vector<float> x(count);
        for (std::size_t i = 0; i < count; ++i) x[i] = static_cast<float>(t.get(first + i));
        return x;
    };
    parallel_for(d.m, [&](std::size_t b0, std::size_t e0) {
        std::vector<std::uint8_t> codes;
        std::vector<float> scales;
        ref::quantize_e4m3_rows(to_float(in[in_a_source], b0 * d.k, (e0 - b0) * d.k), e0 - b0, d.k, block, codes, scales);
        std::memcpy(in[in_a].data.data() + b0 * d.k, codes.data(), codes.size());
        std::memcpy(in[in_a_scale].data.data() + b0 * kb * 4, scales.data(), scales.size() * 4);
    }, 64);
    parallel_for(d.nb(), [&](std::size_t b0, std::size_t e0) {
        for (std::size_t band = b0; band < e0; ++band) {
            const std::size_t r0 = band * block, rows = std::min(block, d.n - r0);
            std::vector<std::uint8_t> codes;
            std::vector<float> scales;
            ref::quantize_e4m3_tiles(to_float(in[in_b_source], r0 * d.k, rows * d.k), rows, d.k, block, codes, scales);
            std::memcpy(in[in_b].data.data() + r0 * d.k, codes.data(), codes.size());
            std::memcpy(in[in_b_scale].data.data() + band * kb * 4, scales.data(), scales.size() * 4);
        }
    }, 1);
}

// ------------------------------------------------------------------ reference and sampling

// Up to this many multiply-adds (M N K) the reference computes every row; above it, a sample of
// rows costing about this much (every column of each sampled row). A case may lower it with the
// parameter "verification_macs" (the tests do, to exercise the sampled path on small shapes).
constexpr double default_verification_macs = 8589934592.0;  // 2^33: about 1.7e10 flops, ~1 s on 16 cores
constexpr std::size_t min_sampled_rows = 16;

double verification_macs(const case_desc& c) { return c.param("verification_macs", default_verification_macs); }

bool sampled(const case_desc& c) {
    const auto d = dims_of(c);
    return static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k) > verification_macs(c);
}

// The rows the reference computes and the check compares: all, or rows 0, 1, M-2, M-1 plus rows
// drawn uniformly up to max(16, budget / (N K)), from a seed taken from the first bytes of A's
// codes (each run seed draws another sample; the check recomputes the same rows from the inputs).
std::vector<std::size_t> rows_to_check(const case_desc& c, const std::vector<host_tensor>& in) {
    const auto d = dims_of(c);
    std::vector<std::size_t> rows;
    if (!sampled(c)) {
        rows.resize(d.m);
        for (std::size_t i = 0; i < d.m; ++i) rows[i] = i;
        return rows;
    }
    const double per_row = static_cast<double>(d.n) * static_cast<double>(d.k);
    const std::size_t want = std::min<std::size_t>(
        d.m, std::max<std::size_t>(min_sampled_rows, static_cast<std::size_t>(verification_macs(c) / per_row)));
    std::uint64_t seed = 0;
    for (std::size_t i = 0; i < std::min<std::size_t>(64, in[in_a].data.size()); ++i) {
        seed = splitmix64(seed ^ static_cast<std::uint64_t>(in[in_a].data[i]));
    }
    const rng pick(seed);
    std::set<std::size_t> chosen;
    for (std::size_t i : {std::size_t{0}, std::size_t{1}, d.m - 2, d.m - 1}) {
        if (i < d.m) chosen.insert(i);
    }
    for (std::uint64_t t = 0; chosen.size() < want && t < 64 * want; ++t) chosen.insert(pick.bits(t) % d.m);
    rows.assign(chosen.begin(), chosen.end());
    return rows;
}

ref::fp8_gemm_operands operands_of(const case_desc& c, const std::vector<host_tensor>& in) {
    const auto d = dims_of(c);
    ref::fp8_gemm_operands op;
    op.a = reinterpret_cast<const std::uint8_t*>(in[in_a].data.data());
    op.a_scale = reinterpret_cast<const float*>(in[in_a_scale].data.data());
    op.b = reinterpret_cast<const std::uint8_t*>(in[in_b].data.data());
    op.b_scale = reinterpret_cast<const float*>(in[in_b_scale].data.data());
    op.m = d.m;
    op.n = d.n;
    op.k = d.k;
    op.block = block;
    return op;
}

// fp64 D of the checked rows on the dequantized inputs; rows not checked hold NaN (never an
// expected value: the generated codes are finite, so every checked row is).
std::vector<std::vector<double>> fp8_gemm_reference_outputs(const case_desc& c, const std::vector<host_tensor>& in) {
    const auto d = dims_of(c);
    const auto op = operands_of(c, in);
    const auto rows = rows_to_check(c, in);
    const Eigen::MatrixXd b_deq = ref::fp8_dequantize_b(op);
    std::vector<double> out(d.m * d.n, std::numeric_limits<double>::quiet_NaN());
    constexpr std::size_t group = 16;
    const std::size_t groups = (rows.size() + group - 1) / group;
    parallel_for(groups, [&](std::size_t g0, std::size_t g1) {
        std::vector<double> tmp(group * d.n);
        for (std::size_t g = g0; g < g1; ++g) {
            const std::size_t first = g * group, count = std::min(group, rows.size() - first);
            ref::fp8_block_gemm_rows(op, b_deq, std::span<const std::size_t>(rows.data() + first, count), tmp.data());
            for (std::size_t i = 0; i < count; ++i) std::copy_n(tmp.data() + i * d.n, d.n, out.data() + rows[first + i] * d.n);
        }
    }, 1);
    return {std::move(out)};
}

// ------------------------------------------------------------------ the check

// Element-wise bound every variant must meet, the naive baseline included (bf16 output, fp32
// accumulation; u = 2^-8 the bf16 unit roundoff):
//   |got - ref| <= 2u |ref| + 2^-4 rms(ref).
// 2u |ref| is twice the output's rounding. The absolute term is the naive path's input rounding:
// it rounds every dequantized element to bf16, a relative error of std about 2^-9.3 each, 2^-8.8
// per product, so D[m, n] is off by a sum of K independent errors of std 2^-8.8 sqrt(sum_k (a_k
// b_k)^2); for random signs that root is rms(D) times the row and column magnitudes t_m r_n over
// their RMS (at most 4 / 1.35 with this generator). The largest of ~6e7 such Gaussian errors is
// ~5.7 sigma: 5.7 x 3 x 2^-8.8 = 2^-4.7 rms(D), below 2^-4 by a factor 1.6 (the row and column
// factor rarely reaches 3 where the error peaks: a CPU emulation of the naive path's roundings used
// 0.22 to 0.34 of the whole bound on five cases of up to 65k elements, tests/suites/
// fp8_gemm_suite.test.cpp, which requires less than 0.5). An exact FP8 kernel
// (products exact, fp32 accumulation) errs by the output rounding alone, far inside this bound; the
// sharp check is the baseline-relative one (s.relative_tolerance).
const tolerance d_tolerance{2.0 / 256, 1.0 / 16, 1};

// Rows of the figure: at most this many multiply-adds of the fp64 source product per check.
constexpr double figure_macs = 2147483648.0;  // 2^31

// The rows of `rows` the quantization figure uses: all when they fit the budget, else evenly spaced.
std::vector<std::size_t> figure_rows(const gemm_dims& d, const std::vector<std::size_t>& rows) {
    const double per_row = static_cast<double>(d.n) * static_cast<double>(d.k);
    const std::size_t want = std::min(rows.size(), std::max<std::size_t>(1, static_cast<std::size_t>(figure_macs / per_row)));
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < want; ++i) out.push_back(rows[i * rows.size() / want]);
    return out;
}

// fp64 of the unquantized sources on `rows`: rows.size() x n, row-major.
std::vector<double> source_product(const gemm_dims& d, const std::vector<host_tensor>& in, const std::vector<std::size_t>& rows) {
    using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const auto r = static_cast<Eigen::Index>(rows.size()), kk = static_cast<Eigen::Index>(d.k);
    row_major a(r, kk);
    for (Eigen::Index i = 0; i < r; ++i) {
        for (Eigen::Index j = 0; j < kk; ++j) a(i, j) = in[in_a_source].get(rows[static_cast<std::size_t>(i)] * d.k + static_cast<std::size_t>(j));
    }
    std::vector<double> out(rows.size() * d.n);
    constexpr std::size_t chunk = 256;  // B rows converted per step
    parallel_for((d.n + chunk - 1) / chunk, [&](std::size_t c0, std::size_t c1) {
        row_major b(static_cast<Eigen::Index>(chunk), kk), res;
        for (std::size_t cc = c0; cc < c1; ++cc) {
            const std::size_t n0 = cc * chunk, cnt = std::min(chunk, d.n - n0);
            b.resize(static_cast<Eigen::Index>(cnt), kk);
            for (std::size_t i = 0; i < cnt; ++i) {
                for (std::size_t j = 0; j < d.k; ++j) b(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = in[in_b_source].get((n0 + i) * d.k + j);
            }
            res = a * b.transpose();
            for (Eigen::Index i = 0; i < r; ++i) {
                for (std::size_t j = 0; j < cnt; ++j) out[static_cast<std::size_t>(i) * d.n + n0 + j] = res(i, static_cast<Eigen::Index>(j));
            }
        }
    }, 1);
    return out;
}

std::vector<output_check> fp8_gemm_check(const check_input& in) {
    const auto d = dims_of(in.c);
    const auto rows = rows_to_check(in.c, in.inputs);
    const auto& ref_d = in.reference[0];
    const std::byte* got = in.outputs[0].data.data();
    output_check co;
    if (rows.size() == d.m) {
        co = compare_elementwise("d", dtype::bf16, got, ref_d, d_tolerance);
    } else {
        std::vector<std::byte> got_rows(rows.size() * d.n * 2);
        std::vector<double> exp_rows(rows.size() * d.n);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            std::memcpy(got_rows.data() + i * d.n * 2, got + rows[i] * d.n * 2, d.n * 2);
            std::copy_n(ref_d.data() + rows[i] * d.n, d.n, exp_rows.data() + i * d.n);
        }
        co = compare_elementwise("d", dtype::bf16, got_rows.data(), exp_rows, d_tolerance);
        for (auto& mm : co.stats.first) mm.index = rows[mm.index / d.n] * d.n + mm.index % d.n;
        check_coverage cov;
        cov.unit = "row of D (every column)";
        cov.checked = rows.size();
        cov.total = d.m;
        cov.rule = "rows 0, 1, M-2 and M-1 plus rows drawn uniformly up to max(16, " +
                   std::to_string(static_cast<long long>(verification_macs(in.c))) + " / (N K)), seeded from the first bytes of A's codes (cases with M N K above " +
                   std::to_string(static_cast<long long>(verification_macs(in.c))) + ")";
        for (std::size_t rr : rows) cov.which.push_back({static_cast<std::int64_t>(rr)});
        co.coverage = cov;
    }

    // The quantization figure, on (a subset of) the checked rows.
    const auto frows = figure_rows(d, rows);
    const std::vector<double> src = source_product(d, in.inputs, frows);
    std::vector<double> out_f(frows.size() * d.n), ref_f(frows.size() * d.n);
    for (std::size_t i = 0; i < frows.size(); ++i) {
        for (std::size_t j = 0; j < d.n; ++j) {
            out_f[i * d.n + j] = load_element(dtype::bf16, got, frows[i] * d.n + j);
            ref_f[i * d.n + j] = ref_d[frows[i] * d.n + j];
        }
    }
    const std::string where = std::to_string(frows.size()) + " of " + std::to_string(d.m) + " rows, every column";
    co.figures = agreement_figures(out_f, src, "quant_",
                                   "the output against fp64 of the unquantized bf16 sources (quantization + kernel error; not "
                                   "part of the verdict), " + where);
    const auto floor = agreement_figures(ref_f, src, "", "");
    co.figures["quant_floor_rel_l2"] = {floor.at("rel_l2").value,
                                        "||ref - src|| / ||src||: the fp64 product of the dequantized inputs against that of "
                                        "the sources, the error of E4M3 with these scales whatever the kernel, " + where};
    return {std::move(co)};
}

// ------------------------------------------------------------------ models

// Compulsory traffic of a fused FP8 kernel: codes and scales read once, D written once (bf16).
// The sources are inputs only for the figure: no variant reads them, no model counts them.
traffic_model fp8_model(const case_desc& c) {
    const auto d = dims_of(c);
    const double codes = static_cast<double>(d.m * d.k + d.n * d.k);
    const double scales = 4.0 * static_cast<double>(d.m * d.kb() + d.nb() * d.kb());
    return {codes + scales, 2.0 * static_cast<double>(d.m * d.n),
            2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k), compute_unit::tensor_fp8};
}

// The naive path also writes the bf16 copies of A and B and reads them back in the GEMM; its
// flops run on the bf16 tensor cores.
traffic_model naive_model(const case_desc& c) {
    traffic_model m = fp8_model(c);
    const auto d = dims_of(c);
    const double copies = 2.0 * static_cast<double>(d.m * d.k + d.n * d.k);
    m.bytes_written += copies;
    m.bytes_read += copies;
    m.unit = compute_unit::tensor_bf16;
    return m;
}

std::optional<std::string> unsupported(const char* why) {
    if (why) return std::string(why);
    return std::nullopt;
}

// Tuning configurations of wgmma_block, each verified and timed as its own result. The default
// for a case is wgmma_block_lead_config's: c1_n256_overlap_la where its rule picks the 128 x 256 tile,
// c1_n192_overlap_sk or c1_n192_overlap where it picks 128 x 192, else the first (c1_overlap), which
// stays timed on every timed case. Names are report keys: never
// rename, retire and add.
struct wgmma_block_config {
    const char* name;
    const char* description;
    k::fp8_gemm_wgmma_options options;
    // Timed on every timed case, like the default (candidates for the default); otherwise at
    // M >= 4096 only.
    bool timed_everywhere = false;
    // The domain text of a configuration that is the default on some cases (null: derived from
    // timed_everywhere).
    const char* domain = nullptr;
};
const wgmma_block_config wgmma_block_configs[] = {
    {"c1_overlap",
     "default where none of c1_n256_overlap_la, c1_n192_overlap, c1_n192_overlap_sk is (M < 4096, or the wider "
     "tiles' wave efficiency below 0.91 of this tile's; k::fp8_gemm_wgmma_default_tile_n), timed on every timed case: one CTA per 128 x 128 tile (no cluster), D through shared memory and TMA stores where N % 8 == 0, two "
     "block accumulators: K block kb + 1's wgmma run while block kb is promoted (wait_group 1), and each tile's epilogue "
     "runs while the next tile's first block is on the tensor cores. 5-10% faster than c1 on every timed case measured "
     "on an H100, M = 1 and 128 included (kernels/fp8/NOTES.md, run 4)",
     {1, true, true}},
    {"c1", "c1_overlap with one block accumulator (the default until run 4): the block's wgmma, wait, promotion in turn",
     {1, true},
     true},
    {"c1_direct", "D stored straight from the registers (the first version of the kernel): what the TMA-store epilogue buys",
     {1, false}},
    {"c2",
     "clusters of 2 CTAs, each loading half of B's tile into both (TMA multicast to a pair of row blocks): correct; "
     "~2x slower than c1 on an H100 until run 9 removed a cluster-scope memory barrier from every remote stage "
     "release, now 1.7% slower than c1 at 4096^3 (kernels/fp8/NOTES.md run 9), kept to measure",
     {2, true}},
    {"c2_sms",
     "c2 with a persistent grid of SMs / 2 clusters instead of cudaOccupancyMaxActiveClusters's count: measured within 1% "
     "of c2 on an H100, so that count was not what made c2 ~2x slower (kernels/fp8/NOTES.md runs 3 and 9)",
     {2, true, false, true}},
    {"c2_sms_overlap", "c2_sms with c1_overlap's two block accumulators", {2, true, true, true}},
    {"c1_overlap_serp",
     "c1_overlap with a serpentine K order: every second tile of a CTA walks K backwards, so a wave starts on the K "
     "blocks the previous wave read last: 10% fewer DRAM bytes on the long-K shapes, 0.8-2.5% faster on the three long-K "
     "down projections (within the spread but on 8b.down) and equal elsewhere on an H100 (kernels/fp8/NOTES.md, run 4)",
     {1, true, true, false, 0, true},
     true},
    {"c1_overlap_stagger",
     "c1_overlap with a staggered K order: the tile at (m_blk, n_blk) starts at K block (m_blk + n_blk) % 8 and wraps "
     "around, so the CTAs sharing a panel of A or B do not all request the same K block at once: measured 3-6% slower "
     "than c1_overlap at M = 4096 on an H100 (kernels/fp8/NOTES.md, run 4), kept to measure",
     {1, true, true, false, 8, false}},
    {"c1_n192",
     "128 x 192 tiles (two consumer warpgroups of m64n192, a 4-stage ring of 40 KiB stages, three TMA stores per "
     "warpgroup): 17% fewer L2 -> shared-memory bytes per FLOP than 128 x 128; one 96-register block accumulator per "
     "thread (block wgmma, wait, promotion in turn, as c1); a tile straddles two 128-column scale blocks of B "
     "(kernels/fp8/NOTES.md, run 5)",
     {1, true, false, false, 0, false, 192}},
    {"c1_n192_overlap",
     "default where M >= 4096, K < 8192, c1_n256_overlap_la is not (its tile's wave efficiency below 0.95 of this one's: "
     "kv_a, N = 576), nor c1_n144_overlap (kv_a at M >= 4096), and its wave efficiency on the device's SMs is at least 0.91 of 128 x 128's "
     "(k::fp8_gemm_wgmma_default_tile_n; 2-41% faster than c1_overlap on nine M = 4096 projections on an H100, "
     "kernels/fp8/NOTES.md run 5; with K >= 8192 c1_n192_overlap_sk is the default, run 6): c1_n192 with each K block's product taken in two halves of 96 columns (m64n96k32, two commit groups): each "
     "block's half 0 is promoted while its half 1 is on the tensor cores, half 1 after a drain (half the promotion "
     "overlapped); two whole 96-register block accumulators (c1_overlap's scheme) do not fit the registers at this "
     "width (kernels/fp8/NOTES.md, run 5)",
     {1, true, true, false, 0, false, 192},
     false,
     "every untimed case of the kernel's domain; timed at M >= 4096 (there the default where its 128 x 192 tile's wave "
     "efficiency on the device is at least 0.91 of 128 x 128's, K < 8192 and c1_n256_overlap_la is not) and wherever it "
     "is the default"},
    {"c1_n192_overlap_serp", "c1_n192_overlap with c1_overlap_serp's serpentine K order",
     {1, true, true, false, 0, true, 192}},
    {"c1_n256_overlap",
     "128 x 256 tiles (kernels/fp8/NOTES.md, run 7): two consumer warpgroups of 64 x 256, each K block's product in "
     "four pieces of 64 columns (m64n64k32) into two 32-register buffers used in turn, each piece promoted while the "
     "next one is on the tensor cores (all of the promotion overlapped); 14% fewer L2 -> shared "
     "bytes per FLOP than 128 x 192 (48 KiB per 8.4 MFLOP) and whole waves on 132 SMs where N is a multiple of 1024; "
     "a 3-stage ring of 48 KiB stages, four TMA stores per warpgroup",
     {1, true, true, false, 0, false, 256}},
    {"c1_n256_overlap_la",
     "default where M >= 4096 and the 128 x 256 tile's wave efficiency on the device's SMs is at least 0.91 of 128 x "
     "128's and 0.95 of 128 x 192's (k::fp8_gemm_wgmma_default_tile_n: 11 of the 12 M = 4096 projections on 132 SMs, "
     "all but kv_a; 1-15% faster than the earlier default on 17 of 24 M = 4096 / 8192 projections on an H100, "
     "kernels/fp8/NOTES.md run 7): c1_n256_overlap with the pieces' second order (options.pieces_lookahead): piece q + "
     "1 issued before piece q is waited for within a K block (wait_group 1), the block's last piece drained and "
     "promoted before the next block's first goes in; 4-6% faster than c1_n256_overlap on the M = 4096 projections",
     {1, true, true, false, 0, false, 256, false, false, true},
     false,
     "every untimed case of the kernel's domain; timed at M >= 4096 (there the default where its 128 x 256 tile's wave "
     "efficiency on the device is at least 0.91 of 128 x 128's and 0.95 of 128 x 192's) and wherever it is the default"},
    {"c1_n144",
     "128 x 144 tiles (kernels/fp8/NOTES.md, run 8): for N = 576 (DeepSeek-V3 kv_a) 4 column blocks = N exactly, "
     "128 tiles at M = 4096 for 132 SMs where 128 x 192 runs 96; two consumer warpgroups of m64n144, one 72-register "
     "block accumulator (block wgmma, wait, promotion in turn, as c1), a 5-stage ring of 34 KiB stages, each tile "
     "straddling two 128-column scale blocks of B (picked per 8-column group); D through two 64-column TMA stores per "
     "warpgroup and the last 16 columns from the registers",
     {1, true, false, false, 0, false, 144}},
    {"c1_n144_overlap",
     "default where the rule would pick the 128 x 192 tile without the tail split and the 128 x 144 tile's "
     "wave efficiency on the device's SMs is at least 1.2 times the 128 x 192 tile's (k::fp8_gemm_wgmma_default_tile_n: "
     "kv_a at M = 4096 and 8192 on 132 SMs, 6.8% and 7.4% faster than c1_n192_overlap on an H100, kernels/fp8/NOTES.md "
     "run 10; run 8's version, with a select per 8-column group in the promotion, was 0.4% slower at M = 4096): c1_n144 with each K block's product in two halves of 72 "
     "columns (m64n72k32) as c1_n192_overlap: half 0 promoted under half 1, half 1 after a drain; the tile's "
     "scale-block boundary a compile-time constant (one instantiation per n_blk % 8); each tile's epilogue "
     "under the next tile's first block (two whole 72-register block accumulators spill)",
     {1, true, true, false, 0, false, 144},
     false,
     "every untimed case of the kernel's domain; timed at M >= 4096 (there the default where "
     "k::fp8_gemm_wgmma_default_tile_n picks 144) and wherever it is the default"},
    {"c1_n192_mc2",
     "c1_n192_overlap in clusters of 2 CTAs along M (kernels/fp8/NOTES.md run 9): the two row blocks of a cluster share "
     "B's 192 x 128 tile of each K block, each CTA loading 96 rows of it into both (TMA multicast), so B's L2 -> "
     "shared-memory bytes per tile halve; a stage is free once every consumer warp of both CTAs has released it. "
     "Measured 4.8-5.2% slower than c1_n192_overlap on kv_a at M = 4096, 2.6% at M = 8192 on an H100; clusters of 4 "
     "along M and the 144-wide tile's 2 x 1, 1 x 4 and 2 x 2 clusters (options.cluster x cluster_n) were slower still "
     "(run 9) and are not timed by the suite",
     {2, true, true, false, 0, false, 192, false, false, false, 1}},
    {"c1_n144_mc1x2",
     "c1_n144_overlap in clusters of 2 CTAs along N (kernels/fp8/NOTES.md run 9): A's 128 x 128 tile of each K block "
     "multicast in two slices of 64 rows (half of A's L2 -> shared-memory bytes per tile). Measured 3.3-3.7% slower than "
     "c1_n144_overlap on kv_a at M = 4096, 0.5-0.8% at M = 8192 on an H100",
     {1, true, true, false, 0, false, 144, false, false, false, 2}},
    {"c1_n192_pf4",
     "c1_n192_overlap with an L2 prefetch (options.l2_prefetch = 4; kernels/fp8/NOTES.md run 9): before each ring load the "
     "producer asks the TMA unit to bring A's and B's tiles 4 K blocks further on into L2 (no shared memory), so that "
     "where a wave streams its K panels from DRAM in step (kv_a) the ring's loads find them in L2. Measured 51% slower "
     "than c1_n192_overlap on kv_a at M = 4096 on an H100 (8 blocks ahead: 55%; the 144-wide tile: 61-68%)",
     {1, true, true, false, 0, false, 192, false, false, false, 1, 4}},
    {"c1_n192_overlap_sk",
     "default where M >= 4096, K >= 8192, c1_n256_overlap_la is not and the 128 x 192 tile's wave efficiency with the "
     "tail split is at least 0.91 of 128 x 128's (k::fp8_gemm_wgmma_default_split: none of the 12 M = 4096 "
     "projections on 132 SMs since run 7, six before it; 0.2-5.5% faster than c1_n192_overlap there on an H100, "
     "1.7-9.2% slower on the four with K <= 4096 and a tail; kernels/fp8/NOTES.md run 6): c1_n192_overlap with the tail split (options.split, kernels/fp8/split_plan.hpp): "
     "where the 128 x 192 tiles do not fill whole waves of the SMs, the whole tiles run as in c1_n192_overlap (the "
     "same kernel, its own launch), then each tile of the partial last wave is cut along K into 2-8 pieces of whole "
     "128-wide K blocks (a cost model picks the count) run at once by a second launch, one CTA per piece; the CTA "
     "holding a tile's first piece adds the others' fp32 partials from the workspace in piece order (deterministic, "
     "no atomics on data; another summation order than c1_n192_overlap on those tiles); where no split pays, "
     "c1_n192_overlap's kernel and schedule",
     {1, true, true, false, 0, false, 192, true},
     false,
     "every untimed case of the kernel's domain; timed at M >= 4096 (there the default where "
     "k::fp8_gemm_wgmma_default_split holds) and wherever it is the default"},
};

const wgmma_block_config& wgmma_block_config_named(std::string_view name) {
    if (name.empty()) return wgmma_block_configs[0];
    for (const auto& c : wgmma_block_configs)
        if (name == c.name) return c;
    throw std::invalid_argument("wgmma_block: no configuration named '" + std::string(name) + "'");
}

// The configuration that is the default for a case (as the attention suite's lead configuration
// per head_dim), by the declared rule of kernels/fp8/gemm.hpp on the current device's SMs:
// - c1_n192_overlap_sk where k::fp8_gemm_wgmma_default_split holds (M >= 4096, K >= 8192 and a
//   128 x 192 wave efficiency with the tail split at least 0.91 of 128 x 128's);
// - c1_n256_overlap_la where k::fp8_gemm_wgmma_default_tile_n picks 256 (M >= 4096 and a 128 x 256
//   wave efficiency at least 0.91 of 128 x 128's and 0.95 of 128 x 192's, with the split where it pays);
// - c1_n192_overlap where it picks 192 otherwise;
// - c1_n144_overlap where it picks 144 (kv_a at M >= 4096 on 132 SMs: NOTES.md runs 8, 10);
// - else c1_overlap.
// On an H100 (run 7 call 2) this picked the fastest wgmma configuration measured, or one within 1.8%
// of it, on all 24 M = 4096 / 8192 projections. Only asked for cases the kernel runs (a device is there).
const wgmma_block_config& wgmma_block_lead_config(const case_desc& c) {
    const int sms = k::fp8_gemm_wgmma_device_sms();
    if (sms > 0 && k::fp8_gemm_wgmma_default_split(kernel_shape(c), sms)) return wgmma_block_config_named("c1_n192_overlap_sk");
    const int tile_n = sms > 0 ? k::fp8_gemm_wgmma_default_tile_n(kernel_shape(c), sms) : 128;
    if (tile_n == 256) return wgmma_block_config_named("c1_n256_overlap_la");
    if (tile_n == 192) return wgmma_block_config_named("c1_n192_overlap");
    if (tile_n == 144) return wgmma_block_config_named("c1_n144_overlap");
    return wgmma_block_configs[0];
}

// Every configuration verifies every untimed case; the case's default (lead), c1_overlap and the
// candidates (timed_everywhere) are timed on every timed case they cover, the others only at
// M >= 4096 (where the cluster, the epilogue and the tile width matter), which keeps their cost in
// the default run small.
std::optional<std::string> wgmma_block_domain(const case_desc& c, const wgmma_block_config& cfg) {
    if (auto why = unsupported(k::fp8_gemm_wgmma_unsupported(kernel_shape(c)))) return why;
    if (&cfg == &wgmma_block_configs[0] || cfg.timed_everywhere || !c.timed || c.dim("M") >= 4096) return std::nullopt;
    if (&cfg == &wgmma_block_lead_config(c)) return std::nullopt;
    return std::string("configuration ") + cfg.name +
           " is timed at M >= 4096 only (the default configuration covers this case; every configuration verifies every "
           "untimed case)";
}

// Each wgmma_block configuration's own domain (variant_config overrides; the workspace is the
// variant's: it depends on the shape only).
variant_config wgmma_block_variant_config(const wgmma_block_config& cfg) {
    variant_config v{cfg.name, cfg.description};
    v.supports = [&cfg](const case_desc& c) { return wgmma_block_domain(c, cfg); };
    if (cfg.options.split) {
        // The tail pieces' fp32 partials and ready flags: sized for the current device's grid.
        v.workspace_bytes = [&cfg](const case_desc& c) {
            return k::fp8_gemm_wgmma_workspace_bytes(kernel_shape(c), cfg.options, k::fp8_gemm_wgmma_device_sms());
        };
    }
    if (cfg.domain) {
        v.domain = cfg.domain;
    } else if (&cfg != &wgmma_block_configs[0] && !cfg.timed_everywhere) {
        v.domain = "every untimed case of the default's domain; timed at M >= 4096";
    }
    return v;
}

shape_support fp8_gemm_shapes() {
    shape_support sh;
    sh.axes = {{"M", "tokens (rows of A and D)", 1, 1048576, std::nullopt, ""},
               {"N", "output features (rows of B)", 1, 1048576, std::nullopt, ""},
               {"K", "input features (the reduction)", 1, 1048576, std::nullopt, ""}};
    sh.dtypes = {dtype::e4m3};
    sh.default_dtypes = {dtype::e4m3};
    sh.check = [](const user_shape&) -> std::optional<std::string> { return std::nullopt; };
    sh.make_case = [](const user_shape& u, dtype) {
        return make_case(u.dims.at("M"), u.dims.at("N"), u.dims.at("K"), "", "random", false, true, false);
    };
    return sh;
}

}  // namespace

void register_fp8_gemm(registry& reg) {
    suite s;
    s.name = "fp8_gemm";
    s.family = "block-scaled FP8 GEMM (DeepSeek-V3 layout)";
    s.description =
        "D = (A * a_scale) (B * b_scale)^T: A [M, K] E4M3 activations with one fp32 scale per 1 x 128 run of a row, B [N, K] "
        "E4M3 weights (out x in, the TN GEMM) with one fp32 scale per 128 x 128 tile, D [M, N] bf16, fp32 accumulation. "
        "Inputs are a seeded bf16 source quantized by the CPU quantizer; the sources ride along (read by no variant) for "
        "the quantization figure.";
    s.semantics =
        "Edge blocks may be partial (K or N not a multiple of 128). The verdict compares against fp64 on the dequantized "
        "inputs; the output's figures quant_* compare against fp64 of the unquantized sources and are never part of the "
        "verdict. Cases above 2^33 multiply-adds verify a stated sample of rows (coverage). Codes are finite (NaN codes "
        "are outside the declared domain). FLOPs: 2 M N K.";
    s.default_run = false;
    s.shapes = fp8_gemm_shapes();
    s.cases = fp8_gemm_cases;
    s.input_specs = fp8_gemm_inputs;
    s.output_specs = fp8_gemm_outputs;
    s.generate = fp8_gemm_generate;
    s.reference = fp8_gemm_reference_outputs;
    s.tolerance.per_dtype = {{dtype::bf16, d_tolerance}};
    // Relative to the naive baseline (the way attention is judged): max abs and rel L2 error at
    // most twice the naive path's, plus 2^-10 of the output's RMS. The naive path carries the bf16
    // rounding of every dequantized input on top of the output rounding; a kernel that multiplies
    // the E4M3 codes exactly and applies the scales in fp32 should come in below it, so 2x is room
    // for a different summation order, not for a wrong scale.
    s.relative_tolerance = [](const case_desc&) {
        return std::map<std::string, baseline_relative_tolerance>{{"d", {2.0, 1.0 / 1024}}};
    };
    s.custom_check = fp8_gemm_check;

    variant naive;
    naive.name = "naive";
    naive.role = variant_role::baseline;
    naive.description =
        "unfused: a dequantize kernel writes A and B as bf16 (e4m3(code) * block scale, rounded to bf16), then a cuBLAS "
        "bf16 GEMM (fp32 accumulation, bf16 out)";
    naive.launch = [](const launch_args& a) {
        k::launch_fp8_gemm_naive(kernel_shape(a.c), static_cast<const std::uint8_t*>(a.in[in_a]), static_cast<const float*>(a.in[in_a_scale]),
                                 static_cast<const std::uint8_t*>(a.in[in_b]), static_cast<const float*>(a.in[in_b_scale]), a.out[0],
                                 a.workspace, a.workspace_bytes, a.stream);
    };
    naive.model = naive_model;
    naive.workspace_bytes = [](const case_desc& c) { return k::fp8_gemm_naive_workspace_bytes(kernel_shape(c)); };
    s.variants.push_back(std::move(naive));

    variant lt;
    lt.name = "cublaslt_fp8";
    lt.role = variant_role::peer;
    lt.description =
        "peer: cuBLASLt FP8 matmul, E4M3 x E4M3 -> bf16, with cuBLASLt's own block scaling (BLK128x128_32F for the "
        "weights, VEC128_32F for the activations: the same quantization as the inputs, so judged on the same "
        "reference); a small kernel first rewrites the scale tables into cuBLASLt's layouts (timed with it); plan per "
        "shape cached (" + k::fp8_gemm_cublaslt_describe() + ")";
    lt.launch = [](const launch_args& a) {
        k::launch_fp8_gemm_cublaslt(kernel_shape(a.c), static_cast<const std::uint8_t*>(a.in[in_a]), static_cast<const float*>(a.in[in_a_scale]),
                                    static_cast<const std::uint8_t*>(a.in[in_b]), static_cast<const float*>(a.in[in_b_scale]), a.out[0],
                                    a.workspace, a.workspace_bytes, a.stream);
    };
    lt.model = fp8_model;
    lt.workspace_bytes = [](const case_desc& c) { return k::fp8_gemm_cublaslt_workspace_bytes(kernel_shape(c)); };
    lt.req = {90, [](const case_desc& c) { return unsupported(k::fp8_gemm_cublaslt_unsupported(kernel_shape(c))); },
              "K and N multiples of 16, and the shapes for which cuBLASLt's heuristic returns a block-scaled FP8 "
              "algorithm on the device (Hopper, cuBLAS >= 12.9); skipped with the reason otherwise"};
    s.variants.push_back(std::move(lt));

    variant wg;
    wg.name = "wgmma_block";
    wg.role = variant_role::fused;
    wg.description =
        "fused Hopper kernel (sm_90a): TMA loads of the E4M3 tiles into a 6-stage shared-memory ring, wgmma m64n128k32 "
        "e4m3 x e4m3 -> fp32 per 128-wide K block, each block's product promoted into the fp32 accumulator times "
        "a_scale * b_scale (DeepGEMM's scheme), bf16 out through TMA stores; 128 x 128 tiles, two consumer warpgroups and a "
        "producer, persistent grid; the default configuration (c1_overlap) promotes each block while the next block's wgmma "
        "run; at M >= 4096 the default is c1_n256_overlap_la (128 x 256 tiles, four m64n64 pieces per K block) where "
        "that tile's waves fill the SMs (wave-efficiency rule), else c1_n192_overlap (128 x 192 tiles, m64n192 / m64n96 "
        "wgmma; with K >= 8192 c1_n192_overlap_sk, the partial last wave's tiles split along K) where those do, c1_n144_overlap (128 x 144 tiles, m64n72 halves) on kv_a (N = 576) at M >= 4096. Versus naive: no bf16 copies of A and B, and FP8 tensor cores (twice the bf16 rate)";
    wg.launch = [](const launch_args& a) {
        k::launch_fp8_gemm_wgmma(kernel_shape(a.c), static_cast<const std::uint8_t*>(a.in[in_a]), static_cast<const float*>(a.in[in_a_scale]),
                                 static_cast<const std::uint8_t*>(a.in[in_b]), static_cast<const float*>(a.in[in_b_scale]), a.out[0],
                                 a.workspace, a.workspace_bytes, a.stream, wgmma_block_config_named(a.config).options);
    };
    wg.model = fp8_model;
    wg.workspace_bytes = [](const case_desc& c) { return k::fp8_gemm_wgmma_workspace_bytes(kernel_shape(c)); };
    wg.req = {90, [](const case_desc& c) { return unsupported(k::fp8_gemm_wgmma_unsupported(kernel_shape(c))); },
              "every shape (M, N, K below 2^31) on compute capability 9.0 with this build's sm_90a code; K not a multiple "
              "of 16 costs a padded copy of A and B into the workspace (TMA's 16-byte row pitch)"};
    for (const auto& cfg : wgmma_block_configs) wg.configs.push_back(wgmma_block_variant_config(cfg));
    s.variants.push_back(std::move(wg));
    reg.add(std::move(s));
}

}  // namespace fusebench
