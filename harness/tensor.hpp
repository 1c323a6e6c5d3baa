// Host tensors: typed byte buffers with a shape. Suites describe inputs and outputs with
// tensor_spec; the runner owns device copies.
#pragma once

#include "harness/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fusebench {

struct tensor_spec {
    std::string name;
    dtype type = dtype::f32;
    std::vector<std::int64_t> shape;
    // Offset of the device pointer from a 256-byte aligned allocation [bytes]. Non-zero values
    // exercise kernels on pointers that are not 16-byte aligned.
    std::size_t misalign_bytes = 0;
    // Outputs only: index of the input this output overwrites (in-place operation), or -1. The
    // runner then passes the same device storage, pre-filled with that input, for both.
    int alias_of_input = -1;

    std::size_t numel() const noexcept;
    std::size_t bytes() const noexcept { return numel() * dtype_size(type); }
};

struct host_tensor {
    tensor_spec spec;
    std::vector<std::byte> data;  // numel * dtype_size bytes, element type spec.type

    host_tensor() = default;
    explicit host_tensor(tensor_spec s) : spec(std::move(s)), data(spec.bytes()) {}

    std::size_t numel() const noexcept { return spec.numel(); }
    double get(std::size_t i) const noexcept { return load_element(spec.type, data.data(), i); }
    void set(std::size_t i, double v) noexcept { store_element(spec.type, data.data(), i, v); }
    // All elements widened to double (exact).
    std::vector<double> to_double() const;
};

}  // namespace fusebench
