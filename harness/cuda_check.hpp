// Error checks for the CUDA runtime, the driver API and CUPTI. They throw (never exit) so that a
// failing variant becomes an `error` outcome and the run goes on.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace fusebench {

// Thrown by the *_CHECK macros. `sticky` marks errors that leave the CUDA context unusable
// (illegal address, trap, ...): the runner must not launch anything else in this process.
class cuda_error : public std::runtime_error {
public:
    cuda_error(const std::string& what, bool sticky) : std::runtime_error(what), m_sticky(sticky) {}
    bool sticky() const noexcept { return m_sticky; }

private:
    bool m_sticky;
};

// True for the errors that corrupt the context (cudaGetLastError cannot clear them).
bool is_sticky_cuda_error(cudaError_t e) noexcept;

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line);
[[noreturn]] void throw_cupti_error(int result, const char* name, const char* expr, const char* file,
                                    int line);
// For destructors: logs to stderr instead of throwing.
void log_cuda_error(cudaError_t e, const char* expr, const char* file, int line) noexcept;

}  // namespace fusebench

// Message: "file:line: cudaErrorX (text) in `expr`". The non-sticky error is cleared so the next
// call does not report it again.
#define CUDA_CHECK(expr)                                                                   \
    do {                                                                                   \
        cudaError_t fusebench_err_ = (expr);                                               \
        if (fusebench_err_ != cudaSuccess) {                                               \
            ::fusebench::throw_cuda_error(fusebench_err_, #expr, __FILE__, __LINE__);      \
        }                                                                                  \
    } while (0)

#define CUDA_CHECK_NOEXCEPT(expr)                                                          \
    do {                                                                                   \
        cudaError_t fusebench_err_ = (expr);                                               \
        if (fusebench_err_ != cudaSuccess) {                                               \
            ::fusebench::log_cuda_error(fusebench_err_, #expr, __FILE__, __LINE__);        \
        }                                                                                  \
    } while (0)
