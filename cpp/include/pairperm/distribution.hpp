// The distribution of the summed local effects S, and limits shared by every engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pairperm {

// Dense pmf over consecutive integers: pmf[i] = P[S = offset + i].
struct Distribution {
    std::int64_t offset = 0;
    std::vector<double> pmf;
    // Certified upper bound on the probability mass outside [offset, offset + pmf.size()),
    // 0.0 when nothing was cut.
    double truncated_mass = 0.0;
};

enum class Alternative { two_sided, greater, less };

// Largest dense support (entries of float64) any engine will allocate: 2^28 entries = 2 GiB.
// Above it the engines throw pairperm::support_too_large (a std::length_error, see
// pairperm/errors.hpp) before allocating.
inline constexpr std::size_t max_support = std::size_t{1} << 28;

}  // namespace pairperm
