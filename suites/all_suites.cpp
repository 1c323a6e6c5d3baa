#include "suites/suites.hpp"

namespace fusebench {

// The one place that knows which suites exist; order is the run and report order.
void register_all(registry& reg) {
    register_glu(reg);
    register_rmsnorm(reg);
    register_softmax_topk(reg);
    register_attention(reg);
    register_conv1d(reg);
    register_fp8_gemm(reg);
    register_mutants(reg);
}

}  // namespace fusebench
