// Exception types thrown by the core, beyond the standard std::invalid_argument (bad input)
// and std::bad_alloc.
#pragma once

#include <stdexcept>
#include <string>

namespace pairperm {

// A dense support (or FFT grid) would exceed max_support entries: thrown before anything is
// allocated. entries() is what the engine would have needed (may be +inf when even that
// count overflows a double).
class support_too_large : public std::length_error {
public:
    support_too_large(const std::string& what, double entries) : std::length_error(what), entries_(entries) {}
    double entries() const noexcept { return entries_; }

private:
    double entries_;
};

// The installed interrupt poll (see pairperm/interrupt.hpp) asked a long computation to stop.
class interrupted : public std::runtime_error {
public:
    interrupted() : std::runtime_error("computation interrupted") {}
};

}  // namespace pairperm
