// derived.time_vs_random from a real run, in both of run's modes: with worker processes (the default),
// where the parent assembles the report from its workers' result lines, and --no-isolation, where
// make_report writes it. A kind and its random-input twin are different cases, so the pair is made
// across cases.
#include "support/gpu.hpp"
#include "support/shell.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace fusebench;
using fusebench::test::run_shell;

TEST_CASE("a run of an adversarial pair reports time_vs_random and prints it", "[gpu][cli]") {
    FUSEBENCH_REQUIRE_GPU();
    const std::string dir = std::filesystem::temp_directory_path() / "fusebench-tvr-test";
    std::filesystem::create_directories(dir);
    const std::string json = dir + "/r.json";
    for (const char* isolation : {"", " --no-isolation"}) {
        INFO("mode:" << isolation);
        std::filesystem::remove(json);
        const auto r = run_shell(std::string(FUSEBENCH_CLI) +
                                 " run --suite softmax_topk_adversarial --variant fused_stream --dtype bf16 --no-counters"
                                 " --case 4096x50257:K10:std1,4096x50257:K10:ties --json " + json + isolation + " 2>/dev/null");
        REQUIRE(r.code == 0);
        std::ifstream in(json);
        REQUIRE(in.good());
        const auto rep = nlohmann::json::parse(in);
        REQUIRE(rep["results"].size() == 2);
        const nlohmann::json* random = nullptr;
        const nlohmann::json* ties = nullptr;
        for (const auto& res : rep["results"]) (res["case_info"]["input_kind"] == "random" ? random : ties) = &res;
        REQUIRE(random != nullptr);
        REQUIRE(ties != nullptr);
        REQUIRE((*ties)["derived"]["time_vs_random"].is_number());
        CHECK((*ties)["derived"]["time_vs_random"].get<double>() ==
              (*ties)["timing"]["median_us"].get<double>() / (*random)["timing"]["median_us"].get<double>());
        CHECK((*random)["derived"]["time_vs_random"].is_null());
        CHECK((*random)["derived"]["null_reasons"]["time_vs_random"].get<std::string>().rfind("a random-input case", 0) == 0);
        CHECK(r.output.find("x random") != std::string::npos);
        CHECK(r.output.find("softmax_topk_adversarial fused_stream bf16: ") != std::string::npos);
    }
    std::filesystem::remove_all(dir);
}
