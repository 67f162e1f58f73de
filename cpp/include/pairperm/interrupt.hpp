// Cancelling long computations: a process-wide poll that the embedding program installs.
#pragma once

#include "pairperm/errors.hpp"

namespace pairperm {

// Returns true when the running computation should stop. Long loops (the DP, the FFT tree,
// the grouped engines' frequency loops, Monte Carlo and bootstrap blocks) call it from the
// thread that called into the core only, every ~10^5-10^6 elementary operations, and then
// throw pairperm::interrupted after joining any worker threads. It may be called often, so
// it should rate-limit any expensive check itself.
using interrupt_poll = bool (*)();

// Installs `poll` (nullptr: never interrupt, the default). Thread-safe.
void set_interrupt_poll(interrupt_poll poll) noexcept;

}  // namespace pairperm
