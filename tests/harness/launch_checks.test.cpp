// The launch checks' decisions on host data: stream order from activity records, the decoy
// rotation, the stale-result rule, and when a mutant's catching check is off.
#include "harness/launch_checks.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace fusebench;

namespace {

kernel_record rec(const char* name, std::uint32_t stream, std::uint64_t start, std::uint64_t end,
                  const char* kind = "kernel") {
    kernel_record r;
    r.name = name;
    r.stream_id = stream;
    r.start_ns = start;
    r.end_ns = end;
    r.kind = kind;
    return r;
}

std::vector<std::byte> bytes_of(const std::vector<float>& v) {
    std::vector<std::byte> b(v.size() * sizeof(float));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

}  // namespace

TEST_CASE("work on a stream nobody joined is flagged; stream-ordered and fork-join work is not", "[launch_checks]") {
    constexpr std::uint32_t launch = 13;
    // The harness's memsets on the launch stream start at 1000 ns, once the gate opened.
    const auto harness = rec("[memset]", launch, 1000, 1100, "memset");

    SECTION("everything on the launch stream") {
        CHECK_FALSE(unordered_side_stream_work({harness, rec("k", launch, 1200, 2000)}, launch).has_value());
    }
    SECTION("fork-join: the side stream starts after the launch stream reached the launch") {
        CHECK_FALSE(unordered_side_stream_work({harness, rec("k1", launch, 1200, 2000), rec("k2", 7, 2100, 2500)}, launch)
                        .has_value());
    }
    SECTION("a side stream that ran while the launch stream was held") {
        const auto why = unordered_side_stream_work({rec("glu_scalar_kernel", 7, 200, 300), harness}, launch);
        REQUIRE(why.has_value());
        CHECK(why->find("side stream") == 0);
        CHECK(why->find("glu_scalar_kernel") != std::string::npos);
        CHECK(why->find("stream 7") != std::string::npos);
        CHECK(why->find("1 activity") != std::string::npos);
    }
    SECTION("several unordered activities name the earliest") {
        const auto why = unordered_side_stream_work(
            {rec("second", 9, 400, 500), harness, rec("first", 7, 100, 200, "memcpy")}, launch);
        REQUIRE(why.has_value());
        CHECK(why->find("2 activities") != std::string::npos);
        CHECK(why->find("memcpy 'first'") != std::string::npos);
    }
    SECTION("nothing ran on the launch stream: nothing to compare with") {
        CHECK_FALSE(unordered_side_stream_work({rec("k", 7, 100, 200)}, launch).has_value());
    }
    SECTION("untimed records (start 0) are ignored") {
        CHECK_FALSE(unordered_side_stream_work({rec("k", 7, 0, 0), harness}, launch).has_value());
    }
}

TEST_CASE("the decoy is the input rotated by one element", "[launch_checks]") {
    const std::vector<float> v{1, 2, 3, 4};
    const auto b = bytes_of(v);
    const auto r = rotated_by_one(b, sizeof(float));
    std::vector<float> back(4);
    std::memcpy(back.data(), r.data(), r.size());
    CHECK(back == std::vector<float>{2, 3, 4, 1});
    CHECK(rotation_changes(b, sizeof(float)));
    // Constant data, one element or none: the rotation cannot tell inputs apart.
    CHECK_FALSE(rotation_changes(bytes_of({5, 5, 5}), sizeof(float)));
    CHECK_FALSE(rotation_changes(bytes_of({5}), sizeof(float)));
    CHECK_FALSE(rotation_changes({}, sizeof(float)));
    // Equal bytes across an element boundary but different elements: a change.
    CHECK(rotation_changes(bytes_of({1, 1, 2}), sizeof(float)));
}

TEST_CASE("a stale result is named only for a variant that already fails, on inputs that differed",
          "[launch_checks]") {
    const auto a = bytes_of({1, 2, 3}), b = bytes_of({1, 2, 4});
    const std::vector<std::span<const std::byte>> decoy{a}, same{a}, other{b};
    const auto why = stale_result(decoy, same, true, true);
    REQUIRE(why.has_value());
    CHECK(why->find("stale result") == 0);
    CHECK_FALSE(stale_result(decoy, other, true, true).has_value());   // outputs followed the inputs
    CHECK_FALSE(stale_result(decoy, same, false, true).has_value());   // inputs did not change
    CHECK_FALSE(stale_result(decoy, same, true, false).has_value());   // a pass stays a pass
    // Every output must match: one that changed clears the variant of caching.
    const std::vector<std::span<const std::byte>> two_decoy{a, a}, two_run{a, b};
    CHECK_FALSE(stale_result(two_decoy, two_run, true, true).has_value());
}

TEST_CASE("a mutant's catching check is off when the run cannot fire it", "[launch_checks]") {
    active_checks on;
    on.timed_cold = true;
    on.bandwidth_measured = true;
    on.model_bytes = 587e6;
    on.l2_bytes = 50u << 20;
    on.stream_order = true;
    CHECK_FALSE(catching_check_off("faster than physics", on).has_value());
    CHECK_FALSE(catching_check_off("side stream", on).has_value());
    CHECK_FALSE(catching_check_off("never written", active_checks{}).has_value());  // always on

    active_checks k = on;
    k.timed_cold = false;
    CHECK(catching_check_off("faster than physics", k).has_value());
    k = on;
    k.bandwidth_measured = false;
    CHECK(catching_check_off("faster than physics", k).has_value());
    k = on;
    k.model_bytes = 100e6;  // under 4 x 50 MiB
    const auto why = catching_check_off("faster than physics", k);
    REQUIRE(why.has_value());
    CHECK(why->find("4x the L2") != std::string::npos);
    k = on;
    k.stream_order = false;
    CHECK(catching_check_off("side stream", k).has_value());
    CHECK_FALSE(catching_check_off("faster than physics", k).has_value());
}
