// Internal: the one place that checks a dense support against max_support and turns an
// oversized one into pairperm::support_too_large.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "pairperm/distribution.hpp"
#include "pairperm/errors.hpp"

namespace pairperm::detail {

// `entries` only needs to be compared with 2^28, so double is exact enough (and callers may
// pass counts far beyond int64, e.g. M^m grids).
inline void check_support(double entries, const char* engine, const char* hint) {
    if (!(entries > static_cast<double>(max_support))) return;
    auto count = [](double v) {
        return std::isfinite(v) && v < 1.8e19 ? std::to_string(static_cast<unsigned long long>(v)) : std::string("over 2^64");
    };
    throw support_too_large(std::string(engine) + ": the distribution would need " + count(entries) +
                                " float64 entries (" + count(entries * 8.0 / static_cast<double>(1 << 20)) +
                                " MiB), above the limit of " + std::to_string(max_support) + " entries; " + hint,
                            entries);
}

}  // namespace pairperm::detail
