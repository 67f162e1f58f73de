// Internal: the exact rejection test of a ratio difference at one state, shared by the
// dense-pmf p-values and the tilted tails.
#pragma once

#include <cstdint>

#include "pairperm/multidim.hpp"

namespace pairperm {
namespace detail {

// Throws std::invalid_argument unless every comparison on [lo1, hi1] x [lo2, hi2] fits in
// 128 bits and no denominator is negative there.
void check_ratio_box(const RatioDifference& h, std::int64_t lo1, std::int64_t hi1, std::int64_t lo2, std::int64_t hi2);

// Whether state (s1, s2) is in the rejection region (exact; ties count). Needs a checked box.
bool ratio_rejects(const RatioDifference& h, std::int64_t s1, std::int64_t s2, Alternative alt);

}  // namespace detail
}  // namespace pairperm
