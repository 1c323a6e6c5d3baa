// The CLI's answers to bad input: one clear line on stderr and exit code 2, whatever the machine.
#include "support/shell.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <string>

namespace {

fusebench::test::shell_result run_cli(const std::string& args) {
    return fusebench::test::run_shell(std::string(FUSEBENCH_CLI) + " " + args + " 2>&1");
}

std::size_t lines(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

}  // namespace

TEST_CASE("bad arguments give one clear line and exit 2", "[cli]") {
    const auto [args, needle] = GENERATE(table<std::string, std::string>({
        {"", "missing command"},
        {"frobnicate", "unknown command"},
        {"run --suite nosuch", "unknown suite 'nosuch'"},
        {"list --suite nosuch", "unknown suite 'nosuch'"},
        {"run --dtype fp8", "unknown dtype 'fp8'"},
        {"run --variant nosuch", "no variant named 'nosuch'"},
        {"run --seed -3", "--seed"},
        {"run --seed 12abc", "--seed"},
        {"run --noise-target lots", "--noise-target"},
        {"run --time-budget 99", "--time-budget"},
        {"run --mode tepid", "--mode"},
        {"run --json", "--json needs a value"},
        {"run --case no-such-case", "select no case"},
        {"run --bogus", "unknown option '--bogus'"},
        {"run --shard 3/2", "--shard"},
        {"run --shard 0/2", "--shard"},
        {"run --shard two", "--shard"},
        {"gbench --bogus", "unknown option '--bogus'"},
        {"gbench --suite nosuch", "unknown suite 'nosuch'"},
    }));
    CAPTURE(args);
    const auto r = run_cli(args);
    CHECK(r.code == 2);
    CHECK(lines(r.output) == 1);
    CHECK(r.output.find(needle) != std::string::npos);
}

TEST_CASE("help, version and list work without a GPU", "[cli]") {
    auto r = run_cli("help");
    CHECK(r.code == 0);
    CHECK(r.output.find("usage: fusebench") != std::string::npos);
    r = run_cli("version");
    CHECK(r.code == 0);
    CHECK(r.output.rfind("fusebench ", 0) == 0);
    r = run_cli("list --suite glu --quick");
    CHECK(r.code == 0);
    CHECK(r.output.find("variant fused_vec") != std::string::npos);
    CHECK(r.output.find("swiglu:3x7") != std::string::npos);
}
