#include "harness/cuda_check.hpp"

#include <cstdio>

namespace fusebench {

bool is_sticky_cuda_error(cudaError_t e) noexcept {
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorAssert:
        case cudaErrorLaunchTimeout:
        case cudaErrorECCUncorrectable:
        case cudaErrorContextIsDestroyed:
        case cudaErrorUnknown:
            return true;
        default:
            return false;
    }
}

static std::string format(const char* name, const char* text, const char* expr, const char* file,
                          int line) {
    return std::string(file) + ":" + std::to_string(line) + ": " + name + " (" + text + ") in `" +
           expr + "`";
}

void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
    const bool sticky = is_sticky_cuda_error(e);
    if (!sticky) (void)cudaGetLastError();  // clear it so it is not reported twice
    throw cuda_error(format(cudaGetErrorName(e), cudaGetErrorString(e), expr, file, line), sticky);
}

void throw_cupti_error(int result, const char* name, const char* expr, const char* file, int line) {
    throw cuda_error(format(name, ("CUPTI result " + std::to_string(result)).c_str(), expr, file, line),
                     false);
}

void log_cuda_error(cudaError_t e, const char* expr, const char* file, int line) noexcept {
    if (!is_sticky_cuda_error(e)) (void)cudaGetLastError();
    std::fprintf(stderr, "fusebench: %s:%d: %s (%s) in `%s` (ignored in a destructor)\n", file, line,
                 cudaGetErrorName(e), cudaGetErrorString(e), expr);
}

}  // namespace fusebench
