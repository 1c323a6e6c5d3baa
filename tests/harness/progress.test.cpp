// The progress line's estimate of the time left.
#include "harness/progress.hpp"
#include "suites/suites.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace fusebench;

TEST_CASE("time left: nothing before the first item ends, then elapsed per unit of weight times the weight left", "[progress]") {
    const progress_estimate e({1.0, 3.0, 2.0, 4.0}, 0);
    CHECK(e.left_text(0, 0.0).empty());
    CHECK(e.left_text(0, 5.0).empty());
    // Item 0 (weight 1) took 10 s: 9 units left at 10 s each.
    CHECK(e.left_text(1, 10.0) == ", about 1m30s left");
    // Items 0-2 (weight 6) took 12 s: 4 units at 2 s.
    CHECK(e.left_text(3, 12.0) == ", about 8s left");
    CHECK(e.left_text(4, 20.0) == ", about 0s left");
    // A worker that resumes at item 2 learns from its own items only.
    const progress_estimate w({1.0, 3.0, 2.0, 4.0}, 2);
    CHECK(w.left_text(2, 3.0).empty());
    CHECK(w.left_text(3, 4.0) == ", about 8s left");
}

TEST_CASE("item weights grow with variants, timing and bytes", "[progress]") {
    registry reg;
    register_all(reg);
    selection_filter f;
    f.shapes = {"glu:tokens=1,inter=8", "glu:tokens=8192,inter=28672"};
    auto items = select_work(reg, f);
    REQUIRE(items.size() == 2);
    CHECK(progress_estimate::weight(items[1]) > progress_estimate::weight(items[0]));
    selection_item untimed = items[0];
    untimed.c.timed = false;
    CHECK(progress_estimate::weight(untimed) < progress_estimate::weight(items[0]));
    selection_item one = items[0];
    one.variants.resize(1);
    CHECK(progress_estimate::weight(one) < progress_estimate::weight(items[0]));
}
