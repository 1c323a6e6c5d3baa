// NVTX ranges named after suite/case/variant around every launch, so Nsight Systems and Nsight
// Compute (--nvtx --nvtx-include) can pick out one variant. Header-only NVTX v3: no library.
#pragma once

#include <string>

#if defined(FUSEBENCH_HAVE_NVTX3)
#include <nvtx3/nvToolsExt.h>
#endif

namespace fusebench {

// Move-less scoped range: pushed in the constructor, popped in the destructor of the same scope.
class nvtx_range {
public:
    explicit nvtx_range(const std::string& name) {
#if defined(FUSEBENCH_HAVE_NVTX3)
        nvtxRangePushA(name.c_str());
#else
        (void)name;
#endif
    }
    ~nvtx_range() {
#if defined(FUSEBENCH_HAVE_NVTX3)
        nvtxRangePop();
#endif
    }
    nvtx_range(const nvtx_range&) = delete;
    nvtx_range& operator=(const nvtx_range&) = delete;
};

}  // namespace fusebench
