// Shared by GPU tests: skip cleanly on machines without a CUDA device.
#pragma once

#include "harness/device.hpp"

#include <catch2/catch_test_macros.hpp>

#define FUSEBENCH_REQUIRE_GPU()                                  \
    do {                                                         \
        if (::fusebench::cuda_device_count() == 0) SKIP("no CUDA device"); \
    } while (0)
