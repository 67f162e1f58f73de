// Internal: the one place that turns an oversized support into a clear error.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "pairperm/distribution.hpp"

namespace pairperm {
namespace detail {

inline void check_support(long double entries, const char* engine, const char* hint) {
    if (entries > static_cast<long double>(max_support)) {
        throw std::length_error(std::string(engine) + ": the distribution would need " +
                                std::to_string(static_cast<unsigned long long>(entries)) +
                                " float64 entries (" +
                                std::to_string(static_cast<unsigned long long>(entries * 8.0L / (1 << 20))) +
                                " MiB), above the limit of " + std::to_string(max_support) +
                                " entries; " + hint);
    }
}

}  // namespace detail
}  // namespace pairperm
