#include "harness/tensor.hpp"

namespace fusebench {

std::size_t tensor_spec::numel() const noexcept {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return n;
}

std::vector<double> host_tensor::to_double() const {
    std::vector<double> out(numel());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = get(i);
    return out;
}

}  // namespace fusebench
