// Element types as kernels see them. Kernels do not depend on the harness, so they carry their own
// small enum; suites map the harness dtype onto it.
#pragma once

namespace fusebench::kernels {

enum class elem { f32, f16, bf16 };

}  // namespace fusebench::kernels
