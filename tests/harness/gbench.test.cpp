#include "harness/gbench.hpp"

#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

using namespace fusebench;

TEST_CASE("Google Benchmark options are split from fusebench's", "[gbench]") {
    std::vector<std::string> raw{"fusebench", "gbench", "--suite", "glu", "--benchmark_filter=swiglu", "--quick",
                                 "--benchmark_repetitions=3"};
    std::vector<char*> argv;
    for (auto& s : raw) argv.push_back(s.data());
    const auto a = split_gbench_args(static_cast<int>(argv.size()), argv.data());
    CHECK(a.benchmark == std::vector<std::string>{"fusebench", "--benchmark_filter=swiglu", "--benchmark_repetitions=3"});
    CHECK(a.fusebench == std::vector<std::string>{"fusebench", "gbench", "--suite", "glu", "--quick"});
}

TEST_CASE("benchmark names carry suite, case, dtype and variant", "[gbench]") {
    case_desc c;
    c.name = "swiglu:4096x14336";
    c.type = dtype::bf16;
    CHECK(gbench_name("glu", c, "fused_vec") == "glu/swiglu:4096x14336/bf16/fused_vec");
}
