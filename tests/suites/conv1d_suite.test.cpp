// The conv1d suite. CPU: the cases the issue asks for, the models. GPU: every variant passes every
// untimed case, bitwise deterministic, within 2x the baseline's error.
#include "harness/device_info.hpp"
#include "harness/runner.hpp"
#include "suites/suites.hpp"
#include "support/gpu.hpp"

#include <catch2/catch_test_macros.hpp>

#include <set>
#include <string>

using namespace fusebench;
using fusebench::test::verify_untimed_cases;

TEST_CASE("conv1d declares the Whisper and Mamba shapes, every width, the decode step and awkward sizes", "[suites][conv1d]") {
    registry reg;
    register_conv1d(reg);
    const suite* s = reg.find("conv1d");
    REQUIRE(s != nullptr);
    CHECK_FALSE(s->default_run);  // until verified on a GPU
    std::set<std::string> names;
    std::set<std::int64_t> widths, lengths;
    std::set<dtype> types;
    bool decode = false;
    for (const auto& c : s->cases()) {
        names.insert(c.name);
        types.insert(c.type);
        if (c.dims.count("width")) widths.insert(c.dim("width"));
        if (c.dims.count("length")) lengths.insert(c.dim("length"));
        decode = decode || c.name.rfind("decode:", 0) == 0;
        // Every case's inputs and outputs are declared, and the fused model moves no more bytes
        // than the baseline's.
        CHECK_FALSE(s->input_specs(c).empty());
        CHECK(s->variants[1].model(c).bytes_read <= s->baseline()->model(c).bytes_read);
    }
    for (const char* n : {"dense:b1:80->384:L3000:s1", "dense:b16:1280->1280:L3000:s2", "dense:b8:512->512:L3000:s1",
                          "dense:b8:80->512:L3000:s1", "dense:b2:3->5:L1:s2", "depthwise:b1:c2048:L65536:w4", "decode:b64:c4096:w4"}) {
        CAPTURE(n);
        CHECK(names.count(n));
    }
    CHECK(widths == std::set<std::int64_t>{2, 3, 4});
    for (std::int64_t l : {1, 2, 7, 3000, 4096, 65536}) CHECK(lengths.count(l));
    CHECK(types == std::set<dtype>{dtype::f32, dtype::bf16, dtype::f16});
    CHECK(decode);
}

TEST_CASE("every conv1d variant passes every untimed case, within 2x the baseline's error", "[gpu][conv1d]") {
    FUSEBENCH_REQUIRE_GPU();
    registry reg;
    register_conv1d(reg);
    std::size_t fused_checked = 0;
    for (const auto& r : verify_untimed_cases(reg, "conv1d")) {
        CAPTURE(r.c.name, std::string(dtype_name(r.c.type)), r.variant, r.reason);
        CHECK(r.result == outcome::pass);
        REQUIRE(r.correctness.has_value());
        CHECK(r.correctness->deterministic == true);
        if (r.variant == "fused") ++fused_checked;
    }
    CHECK(fused_checked > 40);
}
