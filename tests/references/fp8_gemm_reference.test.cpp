#include "references/fp8_gemm_reference.hpp"
#include "references/fp8_reference.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

using namespace fusebench::references;

namespace {

struct problem {
    std::size_t m, n, k, block;
    std::vector<std::uint8_t> a, b;
    std::vector<float> a_scale, b_scale;
    fp8_gemm_operands op() const { return {a.data(), a_scale.data(), b.data(), b_scale.data(), m, n, k, block}; }
};

std::size_t blocks(std::size_t x, std::size_t b) { return (x + b - 1) / b; }

problem random_problem(std::size_t m, std::size_t n, std::size_t k, std::size_t block, std::uint64_t seed) {
    problem p{m, n, k, block, std::vector<std::uint8_t>(m * k), std::vector<std::uint8_t>(n * k),
              std::vector<float>(m * blocks(k, block)), std::vector<float>(blocks(n, block) * blocks(k, block))};
    std::uint64_t s = seed;
    auto next = [&] {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::uint32_t>(s >> 33);
    };
    auto code = [&] {
        std::uint8_t c;
        do c = static_cast<std::uint8_t>(next() & 0xFF);
        while ((c & 0x7F) == 0x7F);  // no NaN codes here
        return c;
    };
    for (auto& c : p.a) c = code();
    for (auto& c : p.b) c = code();
    for (auto& v : p.a_scale) v = std::ldexp(1.0f + static_cast<float>(next() % 1000) / 1000.0f, static_cast<int>(next() % 9) - 6);
    for (auto& v : p.b_scale) v = std::ldexp(1.0f + static_cast<float>(next() % 1000) / 1000.0f, static_cast<int>(next() % 9) - 6);
    return p;
}

// The definition, term by term, with no shared code but the E4M3 decoder.
double direct(const problem& p, std::size_t r, std::size_t c) {
    const std::size_t kb = blocks(p.k, p.block);
    double sum = 0;
    for (std::size_t i = 0; i < p.k; ++i) {
        const double a = e4m3_to_double(p.a[r * p.k + i]) * p.a_scale[r * kb + i / p.block];
        const double b = e4m3_to_double(p.b[c * p.k + i]) * p.b_scale[(c / p.block) * kb + i / p.block];
        sum += a * b;
    }
    return sum;
}

std::vector<double> all_rows(const problem& p) {
    std::vector<std::size_t> rows(p.m);
    std::iota(rows.begin(), rows.end(), 0);
    std::vector<double> d(p.m * p.n);
    fp8_block_gemm_rows(p.op(), fp8_dequantize_b(p.op()), rows, d.data());
    return d;
}

}  // namespace

TEST_CASE("fp8 block GEMM reference equals the definition, partial blocks in K and N included", "[references][fp8]") {
    const problem p = random_problem(5, 200, 300, 128, 7);  // K = 128 + 128 + 44, N = 128 + 72
    const auto d = all_rows(p);
    for (std::size_t r = 0; r < p.m; ++r) {
        for (std::size_t c = 0; c < p.n; ++c) {
            const double want = direct(p, r, c);
            INFO("row " << r << " col " << c);
            CHECK(std::fabs(d[r * p.n + c] - want) <= 1e-12 * (1 + std::fabs(want)));
        }
    }
}

TEST_CASE("fp8 block GEMM reference uses the scale of each block: A per 1 x 128 run, B per 128 x 128 tile", "[references][fp8]") {
    // Every code 1.0 (0x38): D[r, c] = sum over K blocks of len_j * a_scale[r, j] * b_scale[c / 128, j],
    // with distinct powers of two per block so any other indexing gives another number.
    problem p{2, 130, 300, 128, std::vector<std::uint8_t>(2 * 300, 0x38), std::vector<std::uint8_t>(130 * 300, 0x38),
              {1, 2, 4, 8, 16, 32}, {0.5f, 0.25f, 0.125f, 64, 128, 256}};
    const auto d = all_rows(p);
    const double len[3] = {128, 128, 44};
    for (std::size_t r = 0; r < 2; ++r) {
        for (std::size_t c : {std::size_t{0}, std::size_t{127}, std::size_t{128}, std::size_t{129}}) {
            double want = 0;
            for (std::size_t j = 0; j < 3; ++j) want += len[j] * p.a_scale[r * 3 + j] * p.b_scale[(c / 128) * 3 + j];
            INFO("row " << r << " col " << c);
            CHECK(d[r * p.n + c] == want);  // exact: small integers times powers of two
        }
    }
    CHECK(d[0] == 128 * 1 * 0.5 + 128 * 2 * 0.25 + 44 * 4 * 0.125);
    CHECK(d[129] == 128 * 1 * 64 + 128 * 2 * 128.0 + 44 * 4 * 256.0);
}

TEST_CASE("fp8 block GEMM reference: a subset of rows equals those rows of the whole", "[references][fp8]") {
    const problem p = random_problem(9, 40, 256, 128, 11);
    const auto whole = all_rows(p);
    const std::vector<std::size_t> rows{8, 0, 3};
    std::vector<double> d(rows.size() * p.n);
    fp8_block_gemm_rows(p.op(), fp8_dequantize_b(p.op()), rows, d.data());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (std::size_t c = 0; c < p.n; ++c) CHECK(d[i * p.n + c] == whole[rows[i] * p.n + c]);
    }
    const std::vector<std::size_t> bad{9};
    CHECK_THROWS_AS(fp8_block_gemm_rows(p.op(), fp8_dequantize_b(p.op()), bad, d.data()), std::out_of_range);
}

TEST_CASE("fp8 block GEMM reference: a NaN code poisons its row of D and its column", "[references][fp8]") {
    problem p = random_problem(4, 6, 130, 128, 3);
    p.a[2 * p.k + 5] = 0x7F;   // A row 2
    p.b[4 * p.k + 129] = 0xFF;  // B row 4 (column 4 of D)
    const auto d = all_rows(p);
    for (std::size_t r = 0; r < p.m; ++r) {
        for (std::size_t c = 0; c < p.n; ++c) {
            INFO("row " << r << " col " << c);
            CHECK(std::isnan(d[r * p.n + c]) == (r == 2 || c == 4));
        }
    }
}
