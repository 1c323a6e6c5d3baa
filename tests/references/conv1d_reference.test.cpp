// conv1d references against direct evaluation of their definitions on small cases.
#include "references/conv1d_reference.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <algorithm>
#include <cmath>
#include <random>

using namespace fusebench::references;
using Catch::Matchers::WithinRel;

TEST_CASE("dense conv1d: kernel 3, padding 1, strides 1 and 2, bias and GELU", "[conv1d]") {
    std::mt19937 gen(7);
    std::normal_distribution<double> n;
    for (std::size_t stride : {1u, 2u}) {
        for (std::size_t length : {1u, 2u, 7u, 8u}) {
            const std::size_t B = 2, ci = 3, co = 5, lo = conv1d_out_length(length, stride);
            CHECK(lo == (length + 2 - 3) / stride + 1);
            std::vector<double> x(B * ci * length), w(co * ci * 3), bias(co), y(B * co * lo, -1);
            for (auto* v : {&x, &w, &bias})
                for (auto& e : *v) e = n(gen);
            // Two halves of the output channels, as the suite splits them over threads.
            conv1d_dense_reference(x, w, bias, B, ci, co, length, stride, y, 0, B, 0, 2);
            conv1d_dense_reference(x, w, bias, B, ci, co, length, stride, y, 0, B, 2, co);
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t o = 0; o < co; ++o)
                    for (std::size_t t = 0; t < lo; ++t) {
                        double z = bias[o];
                        for (std::size_t i = 0; i < ci; ++i)
                            for (int k = 0; k < 3; ++k) {
                                const long p = static_cast<long>(t * stride) + k - 1;
                                if (p >= 0 && p < static_cast<long>(length)) z += w[(o * ci + i) * 3 + k] * x[(b * ci + i) * length + p];
                            }
                        CAPTURE(stride, length, b, o, t);
                        CHECK(y[(b * co + o) * lo + t] == Catch::Approx(0.5 * z * std::erfc(-z / std::sqrt(2.0))).epsilon(1e-12).margin(1e-300));
                    }
        }
    }
}

TEST_CASE("depthwise causal conv1d and its decode step agree step by step", "[conv1d]") {
    std::mt19937 gen(11);
    std::normal_distribution<double> n;
    for (std::size_t width : {2u, 3u, 4u}) {
        const std::size_t B = 2, C = 3, L = 9;
        std::vector<double> x(B * C * L), w(C * width), bias(C), y(B * C * L);
        for (auto* v : {&x, &w, &bias})
            for (auto& e : *v) e = n(gen);
        conv1d_depthwise_reference(x, w, bias, C, L, width, y, 0, B * C);
        // t = 0 sees only x[0] (causal, zero history).
        CHECK(y[0] == Catch::Approx(silu(bias[0] + w[width - 1] * x[0])));
        // Decode, step by step from a zero state, reproduces the prefill output.
        std::vector<double> state(B * C * (width - 1), 0.0), next(state.size()), step(B * C), yd(B * C);
        for (std::size_t t = 0; t < L; ++t) {
            for (std::size_t r = 0; r < B * C; ++r) step[r] = x[r * L + t];
            conv1d_decode_reference(step, state, w, bias, B, C, width, yd, next);
            for (std::size_t r = 0; r < B * C; ++r) {
                CAPTURE(width, t, r);
                CHECK(yd[r] == Catch::Approx(y[r * L + t]).epsilon(1e-13));
            }
            state = next;
        }
        // The state holds the last width - 1 inputs, oldest first.
        CHECK(state[width - 2] == x[L - 1]);
    }
}

TEST_CASE("conv1d sums of absolute terms: |bias| + sum |w| |x| over each output's terms, split as the references", "[conv1d]") {
    std::mt19937 gen(13);
    std::normal_distribution<double> n;
    SECTION("dense") {
        for (std::size_t stride : {1u, 2u}) {
            for (std::size_t length : {1u, 2u, 7u}) {
                const std::size_t B = 2, ci = 3, co = 5, lo = conv1d_out_length(length, stride);
                std::vector<double> x(B * ci * length), w(co * ci * 3), bias(co), s(B * co * lo, -1);
                for (auto* v : {&x, &w, &bias})
                    for (auto& e : *v) e = n(gen);
                conv1d_dense_abs_sum(x, w, bias, B, ci, co, length, stride, s, 0, 1, 0, co);
                conv1d_dense_abs_sum(x, w, bias, B, ci, co, length, stride, s, 1, B, 0, 3);
                conv1d_dense_abs_sum(x, w, bias, B, ci, co, length, stride, s, 1, B, 3, co);
                for (std::size_t b = 0; b < B; ++b)
                    for (std::size_t o = 0; o < co; ++o)
                        for (std::size_t t = 0; t < lo; ++t) {
                            double want = std::fabs(bias[o]);
                            for (std::size_t i = 0; i < ci; ++i)
                                for (int k = 0; k < 3; ++k) {
                                    const long p = static_cast<long>(t * stride) + k - 1;
                                    if (p >= 0 && p < static_cast<long>(length))
                                        want += std::fabs(w[(o * ci + i) * 3 + k]) * std::fabs(x[(b * ci + i) * length + p]);
                                }
                            CAPTURE(stride, length, b, o, t);
                            CHECK_THAT(s[(b * co + o) * lo + t], WithinRel(want, 1e-13));
                        }
            }
        }
        // Exact on small integers; the tap at position -1 is padding and adds nothing.
        std::vector<double> x{1, 2, 3}, w{-1, -2, -3}, bias{-4}, s(3);
        conv1d_dense_abs_sum(x, w, bias, 1, 1, 1, 3, 1, s, 0, 1, 0, 1);
        CHECK(s[1] == 4.0 + 1 * 1 + 2 * 2 + 3 * 3);
        CHECK(s[0] == 4.0 + 2 * 1 + 3 * 2);
    }
    SECTION("depthwise and decode") {
        for (std::size_t width : {2u, 3u, 4u}) {
            const std::size_t B = 2, C = 3, L = 6, hist = width - 1;
            std::vector<double> x(B * C * L), w(C * width), bias(C), s(B * C * L);
            for (auto* v : {&x, &w, &bias})
                for (auto& e : *v) e = n(gen);
            conv1d_depthwise_abs_sum(x, w, bias, C, L, width, s, 0, 4);
            conv1d_depthwise_abs_sum(x, w, bias, C, L, width, s, 4, B * C);
            for (std::size_t r = 0; r < B * C; ++r)
                for (std::size_t t = 0; t < L; ++t) {
                    double want = std::fabs(bias[r % C]);
                    for (std::size_t k = 0; k < width; ++k) {
                        const long p = static_cast<long>(t + k) - static_cast<long>(width - 1);
                        if (p >= 0) want += std::fabs(w[(r % C) * width + k] * x[r * L + p]);
                    }
                    CAPTURE(width, r, t);
                    CHECK_THAT(s[r * L + t], WithinRel(want, 1e-14));
                }
            std::vector<double> xd(B * C), state(B * C * hist), sd(B * C);
            for (auto* v : {&xd, &state})
                for (auto& e : *v) e = n(gen);
            conv1d_decode_abs_sum(xd, state, w, bias, B, C, width, sd);
            for (std::size_t r = 0; r < B * C; ++r) {
                double want = std::fabs(bias[r % C]) + std::fabs(w[(r % C) * width + hist] * xd[r]);
                for (std::size_t k = 0; k < hist; ++k) want += std::fabs(w[(r % C) * width + k] * state[r * hist + k]);
                CAPTURE(width, r);
                CHECK_THAT(sd[r], WithinRel(want, 1e-14));
            }
        }
    }
}

TEST_CASE("the activations' Lipschitz constants bound their slopes, tightly", "[conv1d]") {
    // Central differences on a fine grid over [-12, 12] (both slopes are flat beyond it).
    double gelu_max = 0, silu_max = 0;
    const double h = 1e-5;
    for (int i = -1200000; i <= 1200000; ++i) {
        const double z = i * 1e-5;
        gelu_max = std::max(gelu_max, std::fabs(gelu_erf(z + h) - gelu_erf(z - h)) / (2 * h));
        silu_max = std::max(silu_max, std::fabs(silu(z + h) - silu(z - h)) / (2 * h));
    }
    CHECK(gelu_max <= gelu_erf_lipschitz);
    CHECK(gelu_max > gelu_erf_lipschitz - 1e-4);
    CHECK(silu_max <= silu_lipschitz);
    CHECK(silu_max > silu_lipschitz - 1e-4);
}
