#include "references/attention_reference.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace fusebench::references;

namespace {

struct attention_data {
    std::vector<double> q, k, v;
};

attention_data make_random_data(const attention_problem& p, std::uint64_t seed, double magnitude = 1.0) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-magnitude, magnitude);
    attention_data d;
    d.q.resize(static_cast<std::size_t>(p.seq_q * p.head_dim));
    d.k.resize(static_cast<std::size_t>(p.seq_kv * p.head_dim));
    d.v.resize(static_cast<std::size_t>(p.seq_kv * p.head_dim));
    for (auto* buf : {&d.q, &d.k, &d.v}) {
        for (double& x : *buf) x = dist(rng);
    }
    return d;
}

// Written out independently of the reference: bottom-right causal mask, the full score matrix
// with masked entries at -inf, then a max-subtracted softmax with std::exp per row.
struct naive_result {
    std::vector<double> o, lse;
};

naive_result naive_attention(const attention_problem& p, const attention_data& d) {
    const std::int64_t sq = p.seq_q, skv = p.seq_kv, hd = p.head_dim;
    std::vector<double> scores(static_cast<std::size_t>(sq * skv));
    for (std::int64_t i = 0; i < sq; ++i) {
        for (std::int64_t j = 0; j < skv; ++j) {
            double dot = 0;
            for (std::int64_t t = 0; t < hd; ++t) dot += d.q[i * hd + t] * d.k[j * hd + t];
            const bool masked = p.causal && j > i + (skv - sq);
            scores[i * skv + j] = masked ? -std::numeric_limits<double>::infinity() : p.scale * dot;
        }
    }
    naive_result r;
    r.o.assign(static_cast<std::size_t>(sq * hd), 0.0);
    r.lse.assign(static_cast<std::size_t>(sq), 0.0);
    for (std::int64_t i = 0; i < sq; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < skv; ++j) mx = std::max(mx, scores[i * skv + j]);
        double sum = 0;
        for (std::int64_t j = 0; j < skv; ++j) {
            const double w = std::exp(scores[i * skv + j] - mx);
            sum += w;
            for (std::int64_t t = 0; t < hd; ++t) r.o[i * hd + t] += w * d.v[j * hd + t];
        }
        for (std::int64_t t = 0; t < hd; ++t) r.o[i * hd + t] /= sum;
        r.lse[i] = mx + std::log(sum);
    }
    return r;
}

// |a - b| <= rel * max(|b|, floor): relative, with an absolute floor for values near zero that
// are the result of cancellation (outputs are averages of values of magnitude ~1).
bool within_tol(double a, double b, double rel = 1e-12, double floor = 1.0) {
    return std::abs(a - b) <= rel * std::max(std::abs(b), floor);
}

struct computed {
    std::vector<double> o, lse;
};

computed run_reference(const attention_problem& p, const attention_data& d, std::int64_t row_begin,
                       std::int64_t row_end, double sentinel = std::numeric_limits<double>::quiet_NaN()) {
    computed c;
    c.o.assign(static_cast<std::size_t>(p.seq_q * p.head_dim), sentinel);
    c.lse.assign(static_cast<std::size_t>(p.seq_q), sentinel);
    attention_reference_rows(p, d.q.data(), d.k.data(), d.v.data(), row_begin, row_end, c.o.data(), c.lse.data());
    return c;
}

computed run_reference(const attention_problem& p, const attention_data& d) {
    return run_reference(p, d, 0, p.seq_q);
}

// Every row in [row_begin, row_end) of c matches the naive result.
void check_rows_match(const attention_problem& p, const computed& c, const naive_result& ref, std::int64_t row_begin,
                      std::int64_t row_end, double rel = 1e-12) {
    std::int64_t bad_o = 0, bad_lse = 0;
    for (std::int64_t i = row_begin; i < row_end; ++i) {
        if (!within_tol(c.lse[i], ref.lse[i], rel)) {
            if (bad_lse++ == 0) {
                CAPTURE(i, c.lse[i], ref.lse[i]);
                CHECK(within_tol(c.lse[i], ref.lse[i], rel));
            }
        }
        for (std::int64_t t = 0; t < p.head_dim; ++t) {
            const auto idx = i * p.head_dim + t;
            if (!within_tol(c.o[idx], ref.o[idx], rel)) {
                if (bad_o++ == 0) {
                    CAPTURE(i, t, c.o[idx], ref.o[idx]);
                    CHECK(within_tol(c.o[idx], ref.o[idx], rel));
                }
            }
        }
    }
    CHECK(bad_o == 0);
    CHECK(bad_lse == 0);
}

// Mean of v rows [0, n) in column t.
double mean_of_v_prefix(const attention_problem& p, const attention_data& d, std::int64_t n, std::int64_t t) {
    double s = 0;
    for (std::int64_t j = 0; j < n; ++j) s += d.v[j * p.head_dim + t];
    return s / static_cast<double>(n);
}

}  // namespace

TEST_CASE("attention_reference matches a naive implementation", "[reference][attention]") {
    struct shape {
        std::int64_t seq_q, seq_kv, head_dim;
    };
    const shape s = GENERATE(values<shape>({
        {1, 1, 3},
        {1, 1, 64},
        {17, 17, 3},
        {17, 17, 64},
        {100, 100, 3},
        {100, 100, 64},
        {1, 100, 64},     // decode: one query against a KV cache
        {5, 9, 3},        // bottom-right causal with seq_q < seq_kv
        {17, 100, 5},
        {70, 513, 16},    // one key past a key block; rows cross a row block
        {130, 1100, 7},   // several key blocks, a partial last one
        {600, 1100, 4},   // the causal diagonal crosses key block boundaries
    }));
    const bool causal = GENERATE(false, true);
    CAPTURE(s.seq_q, s.seq_kv, s.head_dim, causal);
    attention_problem p{s.seq_q, s.seq_kv, s.head_dim, causal, 1.0 / std::sqrt(static_cast<double>(s.head_dim))};
    const auto d = make_random_data(p, static_cast<std::uint64_t>(s.seq_q * 1000003 + s.seq_kv * 31 + s.head_dim));
    const auto ref = naive_attention(p, d);
    const auto c = run_reference(p, d);
    check_rows_match(p, c, ref, 0, p.seq_q);
}

TEST_CASE("attention_reference handles other scales and seq_q > seq_kv without a mask", "[reference][attention]") {
    const double scale = GENERATE(0.0, -0.7, 3.0);
    const std::int64_t seq_q = GENERATE(100, 9);
    CAPTURE(scale, seq_q);
    attention_problem p{seq_q, 17, 8, false, scale};
    const auto d = make_random_data(p, 42);
    check_rows_match(p, run_reference(p, d), naive_attention(p, d), 0, p.seq_q);
}

TEST_CASE("attention_visible_keys is bottom-right aligned", "[reference][attention]") {
    attention_problem p{5, 9, 4, true, 0.5};
    for (std::int64_t i = 0; i < 5; ++i) CHECK(attention_visible_keys(p, i) == 5 + i);
    p.causal = false;
    for (std::int64_t i = 0; i < 5; ++i) CHECK(attention_visible_keys(p, i) == 9);
    attention_problem square{8, 8, 4, true, 0.5};
    for (std::int64_t i = 0; i < 8; ++i) CHECK(attention_visible_keys(square, i) == i + 1);
    attention_problem decode{1, 1000, 4, true, 0.5};
    CHECK(attention_visible_keys(decode, 0) == 1000);
}

TEST_CASE("attention_reference decode: one causal query sees every key", "[reference][attention]") {
    attention_problem p{1, 700, 32, true, 1.0 / std::sqrt(32.0)};
    const auto d = make_random_data(p, 7);
    const auto causal = run_reference(p, d);
    p.causal = false;
    const auto full = run_reference(p, d);
    CHECK(causal.o == full.o);
    CHECK(causal.lse == full.lse);
}

TEST_CASE("attention_reference writes only the requested rows", "[reference][attention]") {
    const bool causal = GENERATE(false, true);
    CAPTURE(causal);
    attention_problem p{200, 600, 9, causal, 1.0 / 3.0};
    const auto d = make_random_data(p, 99);
    const auto ref = naive_attention(p, d);
    constexpr double sentinel = 12345.678;
    const std::int64_t begin = 37, end = 170;  // crosses two row-block boundaries
    const auto c = run_reference(p, d, begin, end, sentinel);
    check_rows_match(p, c, ref, begin, end);
    std::int64_t touched = 0;
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
        if (i >= begin && i < end) continue;
        touched += c.lse[i] != sentinel;
        for (std::int64_t t = 0; t < p.head_dim; ++t) touched += c.o[i * p.head_dim + t] != sentinel;
    }
    CHECK(touched == 0);

    // An empty range writes nothing.
    const auto none = run_reference(p, d, 50, 50, sentinel);
    CHECK(std::all_of(none.o.begin(), none.o.end(), [](double x) { return x == sentinel; }));
    CHECK(std::all_of(none.lse.begin(), none.lse.end(), [](double x) { return x == sentinel; }));

    // Ranges computed separately fill the whole output consistently.
    computed pieces;
    pieces.o.assign(c.o.size(), sentinel);
    pieces.lse.assign(c.lse.size(), sentinel);
    for (auto [b, e] : {std::pair<std::int64_t, std::int64_t>{0, 1}, {1, 64}, {64, 65}, {65, 199}, {199, 200}}) {
        attention_reference_rows(p, d.q.data(), d.k.data(), d.v.data(), b, e, pieces.o.data(), pieces.lse.data());
    }
    check_rows_match(p, pieces, ref, 0, p.seq_q);
}

TEST_CASE("attention_reference splits at row-block multiples reproduce one call bitwise", "[reference][attention]") {
    const bool causal = GENERATE(false, true);
    CAPTURE(causal);
    constexpr std::int64_t block = attention_reference_row_block;
    attention_problem p{3 * block + 20, 3 * block + 600, 24, causal, 0.2};
    const auto d = make_random_data(p, 1234);
    // One call for rows [10, seq_q) against calls for [10, 64), [64, 128), ... made in reverse order.
    constexpr std::int64_t first = 10;
    const auto whole = run_reference(p, d, first, p.seq_q, 0.0);
    computed split;
    split.o.assign(whole.o.size(), 0.0);
    split.lse.assign(whole.lse.size(), 0.0);
    for (std::int64_t b = p.seq_q - (p.seq_q % block); b >= 0; b -= block) {
        const std::int64_t begin = std::max(b, first), end = std::min(b + block, p.seq_q);
        if (begin < end) {
            attention_reference_rows(p, d.q.data(), d.k.data(), d.v.data(), begin, end, split.o.data(), split.lse.data());
        }
    }
    CHECK(split.o == whole.o);
    CHECK(split.lse == whole.lse);
}

TEST_CASE("attention_reference stays exact for large logits", "[reference][attention]") {
    // q and k entries of 100: scaled logits around 2e4, far beyond exp's range. A naive softmax
    // without the max subtraction would give inf / inf.
    const bool causal = GENERATE(false, true);
    CAPTURE(causal);
    attention_problem p{40, 1100, 4, causal, 0.5};
    auto d = make_random_data(p, 5);
    for (double& x : d.q) x = 100.0;

    SECTION("equal large logits average the visible values") {
        for (double& x : d.k) x = 100.0;  // every logit is 0.5 * 4 * 1e4 = 2e4
        const auto c = run_reference(p, d);
        for (std::int64_t i = 0; i < p.seq_q; ++i) {
            const std::int64_t n = causal ? i + (p.seq_kv - p.seq_q) + 1 : p.seq_kv;
            CAPTURE(i, n);
            CHECK(within_tol(c.lse[i], 2e4 + std::log(static_cast<double>(n))));
            for (std::int64_t t = 0; t < p.head_dim; ++t) {
                REQUIRE(std::isfinite(c.o[i * p.head_dim + t]));
                CHECK(within_tol(c.o[i * p.head_dim + t], mean_of_v_prefix(p, d, n, t)));
            }
        }
    }
    SECTION("a gap of 1000 between large logits is one-hot") {
        // Key j has logit 2e4 - 1000 * (j % 7 + 1), except key 3 with 2e4: every row sees key 3.
        for (std::int64_t j = 0; j < p.seq_kv; ++j) {
            const double f = j == 3 ? 1.0 : 1.0 - 0.05 * static_cast<double>(j % 7 + 1);
            for (std::int64_t t = 0; t < p.head_dim; ++t) d.k[j * p.head_dim + t] = 100.0 * f;
        }
        const auto c = run_reference(p, d);
        for (std::int64_t i = 0; i < p.seq_q; ++i) {
            CAPTURE(i);
            CHECK(within_tol(c.lse[i], 2e4));
            for (std::int64_t t = 0; t < p.head_dim; ++t) {
                CHECK(within_tol(c.o[i * p.head_dim + t], d.v[3 * p.head_dim + t], 1e-12, 0.0));
            }
        }
    }
}

TEST_CASE("attention_reference: one dominant key gives its value row", "[reference][attention]") {
    const bool causal = GENERATE(false, true);
    CAPTURE(causal);
    attention_problem p{130, 1100, 16, causal, 0.25};
    auto d = make_random_data(p, 11);
    for (double& x : d.q) x = 0.5 + 0.5 * std::abs(x);  // q in [0.5, 1]: positive direction
    // Other logits are at most 0.25 * 16 = 4; the dominant one at least 0.25 * 16 * 0.5 * 50 = 100.
    const std::int64_t dominant = causal ? 900 : 1050;  // a later key block; causal: seen by every row
    for (std::int64_t t = 0; t < p.head_dim; ++t) d.k[dominant * p.head_dim + t] = 50.0;
    const auto c = run_reference(p, d);
    const auto ref = naive_attention(p, d);
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
        CAPTURE(i);
        double dom_logit = 0;
        for (std::int64_t t = 0; t < p.head_dim; ++t) dom_logit += p.scale * d.q[i * p.head_dim + t] * 50.0;
        CHECK(within_tol(c.lse[i], dom_logit));
        for (std::int64_t t = 0; t < p.head_dim; ++t) {
            CHECK(within_tol(c.o[i * p.head_dim + t], d.v[dominant * p.head_dim + t], 1e-12, 0.0));
        }
    }
    check_rows_match(p, c, ref, 0, p.seq_q);
}

TEST_CASE("attention_reference: identical keys or zero queries average the visible values", "[reference][attention]") {
    const bool causal = GENERATE(false, true);
    const bool zero_q = GENERATE(false, true);
    CAPTURE(causal, zero_q);
    attention_problem p{1100, 1100, 6, causal, 1.0 / std::sqrt(6.0)};
    auto d = make_random_data(p, 3);
    if (zero_q) {
        std::fill(d.q.begin(), d.q.end(), 0.0);
    } else {
        for (std::int64_t j = 1; j < p.seq_kv; ++j) {
            std::copy_n(d.k.begin(), p.head_dim, d.k.begin() + j * p.head_dim);
        }
    }
    const auto c = run_reference(p, d);
    // Prefix sums of v for the visible means.
    std::vector<double> prefix(static_cast<std::size_t>((p.seq_kv + 1) * p.head_dim), 0.0);
    for (std::int64_t j = 0; j < p.seq_kv; ++j) {
        for (std::int64_t t = 0; t < p.head_dim; ++t) {
            prefix[(j + 1) * p.head_dim + t] = prefix[j * p.head_dim + t] + d.v[j * p.head_dim + t];
        }
    }
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const std::int64_t n = causal ? i + 1 : p.seq_kv;
        double logit = 0;
        for (std::int64_t t = 0; t < p.head_dim; ++t) logit += d.q[i * p.head_dim + t] * d.k[t];
        logit *= p.scale;
        const double expected_lse = logit + std::log(static_cast<double>(n));
        if (!within_tol(c.lse[i], expected_lse) && bad++ == 0) {
            CAPTURE(i, n, c.lse[i], expected_lse);
            CHECK(within_tol(c.lse[i], expected_lse));
        }
        if (zero_q) CHECK((c.lse[i] == std::log(static_cast<double>(n)) || within_tol(c.lse[i], std::log(static_cast<double>(n)), 1e-14)));
        for (std::int64_t t = 0; t < p.head_dim; ++t) {
            const double mean = prefix[n * p.head_dim + t] / static_cast<double>(n);
            if (!within_tol(c.o[i * p.head_dim + t], mean) && bad++ == 0) {
                CAPTURE(i, t, n, c.o[i * p.head_dim + t], mean);
                CHECK(within_tol(c.o[i * p.head_dim + t], mean));
            }
        }
    }
    CHECK(bad == 0);
}

TEST_CASE("attention_reference: masked keys never affect a row, not even non-finite ones", "[reference][attention]") {
    // Causal, seq 100: the last key is visible to the last row only. Its k and v rows are NaN/inf.
    attention_problem p{100, 100, 8, true, 0.35};
    auto d = make_random_data(p, 77);
    const auto finite_ref = naive_attention(p, d);
    const std::int64_t last = p.seq_kv - 1;
    d.k[last * p.head_dim + 2] = std::numeric_limits<double>::quiet_NaN();
    d.v[last * p.head_dim + 5] = std::numeric_limits<double>::infinity();
    d.q[40 * p.head_dim + 1] = std::numeric_limits<double>::infinity();  // row 40 only
    const auto c = run_reference(p, d);
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < last; ++i) {
        if (i == 40) continue;
        bad += !within_tol(c.lse[i], finite_ref.lse[i]);
        for (std::int64_t t = 0; t < p.head_dim; ++t) bad += !within_tol(c.o[i * p.head_dim + t], finite_ref.o[i * p.head_dim + t]);
    }
    CHECK(bad == 0);
    CHECK(!std::isfinite(c.lse[40]));
    CHECK(!std::isfinite(c.lse[last]));
    CHECK(std::isnan(c.o[last * p.head_dim]));
}

TEST_CASE("attention_reference handles a long sequence in bounded memory", "[reference][attention]") {
    // seq 16384, head_dim 128: a full score matrix would be 2 GiB; check a few rows at both ends.
    attention_problem p{16384, 16384, 128, true, 1.0 / std::sqrt(128.0)};
    const auto d = make_random_data(p, 2024);
    std::vector<double> o(static_cast<std::size_t>(p.seq_q * p.head_dim), 0.0), lse(static_cast<std::size_t>(p.seq_q), 0.0);
    for (auto [b, e] : {std::pair<std::int64_t, std::int64_t>{0, 3}, {p.seq_q - 3, p.seq_q}}) {
        attention_reference_rows(p, d.q.data(), d.k.data(), d.v.data(), b, e, o.data(), lse.data());
        for (std::int64_t i = b; i < e; ++i) {
            CAPTURE(i);
            const std::int64_t n = i + 1;
            std::vector<double> w(static_cast<std::size_t>(n));
            double mx = -std::numeric_limits<double>::infinity();
            for (std::int64_t j = 0; j < n; ++j) {
                double dot = 0;
                for (std::int64_t t = 0; t < p.head_dim; ++t) dot += d.q[i * p.head_dim + t] * d.k[j * p.head_dim + t];
                w[j] = p.scale * dot;
                mx = std::max(mx, w[j]);
            }
            double sum = 0;
            for (double& x : w) sum += (x = std::exp(x - mx));
            CHECK(within_tol(lse[i], mx + std::log(sum)));
            std::int64_t bad = 0;
            for (std::int64_t t = 0; t < p.head_dim; ++t) {
                double acc = 0;
                for (std::int64_t j = 0; j < n; ++j) acc += w[j] * d.v[j * p.head_dim + t];
                bad += !within_tol(o[i * p.head_dim + t], acc / sum);
            }
            CHECK(bad == 0);
        }
    }
}

TEST_CASE("attention_reference rejects invalid arguments", "[reference][attention]") {
    const attention_problem good{8, 8, 4, true, 0.5};
    std::vector<double> q(64, 0.1), k(64, 0.2), v(64, 0.3), o(32, 0.0), lse(8, 0.0);
    const auto call = [&](const attention_problem& p, std::int64_t b, std::int64_t e) {
        attention_reference_rows(p, q.data(), k.data(), v.data(), b, e, o.data(), lse.data());
    };
    CHECK_NOTHROW(call(good, 0, 8));
    CHECK_NOTHROW(call(good, 8, 8));

    for (auto bad : {attention_problem{0, 8, 4, false, 0.5}, attention_problem{8, 0, 4, false, 0.5},
                     attention_problem{8, 8, 0, false, 0.5}, attention_problem{-1, 8, 4, false, 0.5},
                     attention_problem{8, 8, -4, false, 0.5}, attention_problem{8, 7, 4, true, 0.5},
                     attention_problem{8, 8, 4, false, std::numeric_limits<double>::quiet_NaN()},
                     attention_problem{8, 8, 4, false, std::numeric_limits<double>::infinity()}}) {
        CAPTURE(bad.seq_q, bad.seq_kv, bad.head_dim, bad.causal, bad.scale);
        CHECK_THROWS_AS(call(bad, 0, 1), std::invalid_argument);
        CHECK_THROWS_AS(attention_visible_keys(bad, 0), std::invalid_argument);
    }
    // Without causal, seq_q > seq_kv is fine.
    CHECK_NOTHROW(call(attention_problem{8, 7, 4, false, 0.5}, 0, 8));

    CHECK_THROWS_AS(call(good, -1, 4), std::invalid_argument);
    CHECK_THROWS_AS(call(good, 0, 9), std::invalid_argument);
    CHECK_THROWS_AS(call(good, 5, 4), std::invalid_argument);
    CHECK_THROWS_AS(attention_visible_keys(good, -1), std::invalid_argument);
    CHECK_THROWS_AS(attention_visible_keys(good, 8), std::invalid_argument);

    CHECK_THROWS_AS(attention_reference_rows(good, nullptr, k.data(), v.data(), 0, 8, o.data(), lse.data()), std::invalid_argument);
    CHECK_THROWS_AS(attention_reference_rows(good, q.data(), nullptr, v.data(), 0, 8, o.data(), lse.data()), std::invalid_argument);
    CHECK_THROWS_AS(attention_reference_rows(good, q.data(), k.data(), nullptr, 0, 8, o.data(), lse.data()), std::invalid_argument);
    CHECK_THROWS_AS(attention_reference_rows(good, q.data(), k.data(), v.data(), 0, 8, nullptr, lse.data()), std::invalid_argument);
    CHECK_THROWS_AS(attention_reference_rows(good, q.data(), k.data(), v.data(), 0, 8, o.data(), nullptr), std::invalid_argument);
}

// The score magnitude of the FP8 lse bound: |scale| * max over visible keys of sum_k |q_ik| |k_jk|,
// against a direct loop, over shapes that cross the row and key blocks and the causal diagonal, and
// split row ranges (the suite computes it per run of checked rows).
TEST_CASE("attention_score_magnitude_rows is |scale| max_j sum_k |q_ik| |k_jk| over the visible keys", "[reference][attention][fp8]") {
    struct shape {
        std::int64_t seq_q, seq_kv, head_dim;
    };
    const shape s = GENERATE(values<shape>({{1, 1, 3}, {17, 17, 64}, {1, 100, 16}, {5, 9, 3}, {70, 513, 16}, {600, 1100, 4}}));
    const bool causal = GENERATE(false, true);
    const double scale = GENERATE(0.125, -0.5);
    CAPTURE(s.seq_q, s.seq_kv, s.head_dim, causal, scale);
    attention_problem p{s.seq_q, s.seq_kv, s.head_dim, causal, scale};
    const auto d = make_random_data(p, static_cast<std::uint64_t>(s.seq_q * 7919 + s.seq_kv));
    std::vector<double> got(static_cast<std::size_t>(p.seq_q), -1.0);
    // Two calls, split at a row that is not a block multiple.
    const std::int64_t mid = p.seq_q / 3;
    attention_score_magnitude_rows(p, d.q.data(), d.k.data(), 0, mid, got.data());
    attention_score_magnitude_rows(p, d.q.data(), d.k.data(), mid, p.seq_q, got.data());
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
        double want = 0;
        for (std::int64_t j = 0; j < attention_visible_keys(p, i); ++j) {
            double sum = 0;
            for (std::int64_t x = 0; x < p.head_dim; ++x) {
                sum += std::abs(d.q[static_cast<std::size_t>(i * p.head_dim + x)]) *
                       std::abs(d.k[static_cast<std::size_t>(j * p.head_dim + x)]);
            }
            want = std::max(want, sum);
        }
        want *= std::abs(scale);
        CAPTURE(i);
        CHECK(std::abs(got[static_cast<std::size_t>(i)] - want) <= 1e-12 * want);
    }
    // A key the causal mask hides never counts: make the last key huge; rows that cannot see it keep
    // their magnitude.
    if (causal && p.seq_q == p.seq_kv && p.seq_q > 1) {
        auto big = d;
        for (std::int64_t x = 0; x < p.head_dim; ++x) big.k[static_cast<std::size_t>((p.seq_kv - 1) * p.head_dim + x)] = 1e6;
        std::vector<double> masked(static_cast<std::size_t>(p.seq_q));
        attention_score_magnitude_rows(p, big.q.data(), big.k.data(), 0, p.seq_q, masked.data());
        for (std::int64_t i = 0; i + 1 < p.seq_q; ++i) CHECK(masked[static_cast<std::size_t>(i)] == got[static_cast<std::size_t>(i)]);
        CHECK(masked.back() > 1e3 * got.back());
    }
    CHECK_THROWS_AS(attention_score_magnitude_rows(p, d.q.data(), nullptr, 0, 1, got.data()), std::invalid_argument);
}

// The score magnitudes against a direct loop over several key blocks (masking at the diagonal):
// attention_reference_rows' softmax-weighted mean of scale * sum_k |q_ik| |k_jk| with its own lse,
// and attention_score_magnitude_rows' max of it over the visible keys; the mean lies under the max,
// equals it where a row sees one key, and asking for it leaves o and lse bitwise as they were.
TEST_CASE("attention score magnitudes: the softmax-weighted mean and the max over visible keys", "[reference][attention]") {
    const bool causal = GENERATE(false, true);
    CAPTURE(causal);
    attention_problem p{70, 600, 16, causal, 0.25};
    const auto d = make_random_data(p, 77);
    std::vector<double> o(static_cast<std::size_t>(p.seq_q * p.head_dim)), lse(static_cast<std::size_t>(p.seq_q));
    std::vector<double> weighted(lse.size()), mag(lse.size());
    attention_reference_rows(p, d.q.data(), d.k.data(), d.v.data(), 0, p.seq_q, o.data(), lse.data(), weighted.data());
    attention_score_magnitude_rows(p, d.q.data(), d.k.data(), 0, p.seq_q, mag.data());
    std::vector<double> o_plain(o.size()), lse_plain(lse.size());
    attention_reference_rows(p, d.q.data(), d.k.data(), d.v.data(), 0, p.seq_q, o_plain.data(), lse_plain.data());
    CHECK(o_plain == o);
    CHECK(lse_plain == lse);
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
        double want = 0, want_weighted = 0;
        const std::int64_t keys = attention_visible_keys(p, i);
        for (std::int64_t j = 0; j < keys; ++j) {
            double abs_sum = 0, dot = 0;
            for (std::int64_t t = 0; t < p.head_dim; ++t) {
                abs_sum += std::abs(d.q[i * p.head_dim + t]) * std::abs(d.k[j * p.head_dim + t]);
                dot += d.q[i * p.head_dim + t] * d.k[j * p.head_dim + t];
            }
            want = std::max(want, p.scale * abs_sum);
            want_weighted += std::exp(p.scale * dot - lse[i]) * p.scale * abs_sum;
        }
        CAPTURE(i);
        CHECK(std::abs(mag[i] - want) <= 1e-12 * want);
        CHECK(std::abs(weighted[i] - want_weighted) <= 1e-12 * want_weighted);
        CHECK(weighted[i] <= mag[i] * (1 + 1e-12));
    }
    // One key per row (a one-key causal row, seq_q = seq_kv = 1): the weighted mean is the max.
    attention_problem one{1, 1, 16, true, 0.25};
    std::vector<double> o1(16), l1(1), m1(1), w1(1);
    attention_reference_rows(one, d.q.data(), d.k.data(), d.v.data(), 0, 1, o1.data(), l1.data(), w1.data());
    attention_score_magnitude_rows(one, d.q.data(), d.k.data(), 0, 1, m1.data());
    CHECK(std::abs(w1[0] - m1[0]) <= 1e-12 * m1[0]);
}
