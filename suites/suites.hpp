// One registration function per family. register_all() in all_suites.cpp calls each, in order:
// that is the one place that knows which suites exist.
#pragma once

#include "harness/registry.hpp"

namespace fusebench {

void register_glu(registry& reg);
void register_softmax_topk(registry& reg);
void register_rmsnorm(registry& reg);
void register_attention(registry& reg);
void register_conv1d(registry& reg);
void register_fp8_gemm(registry& reg);
void register_mutants(registry& reg);

void register_all(registry& reg);

}  // namespace fusebench
