// Internal: where long loops give the embedding program a chance to cancel them.
#pragma once

#include <atomic>
#include <cstddef>

#include "pairperm/interrupt.hpp"

namespace pairperm::detail {

// Calls the installed poll; throws pairperm::interrupted when it asks to stop. Does nothing
// on threads marked as workers, so the poll only ever runs on the thread that entered the core.
void check_interrupt();

// Marks the calling thread as a worker of the core for the rest of its life (every thread
// the core starts calls this first).
void mark_worker_thread() noexcept;

// Thrown inside worker threads when another thread has already failed or been interrupted;
// never escapes parallel_for.
struct cancelled {};

// Counts work and checks for cancellation once per `period` units, so the check costs
// nothing measurable in the hot loops. On the calling thread (stop == nullptr) it polls for
// an interrupt; on a worker thread it only reads the shared stop flag.
class Progress {
public:
    explicit Progress(const std::atomic<bool>* stop = nullptr, std::size_t period = std::size_t{1} << 20)
        : stop_(stop), period_(period) {}

    void add(std::size_t work) {
        done_ += work;
        if (done_ >= period_) {
            done_ = 0;
            check();
        }
    }

    void check() const {
        if (stop_ == nullptr) {
            check_interrupt();
        } else if (stop_->load(std::memory_order_relaxed)) {
            throw cancelled{};
        }
    }

private:
    const std::atomic<bool>* stop_;
    std::size_t period_;
    std::size_t done_ = 0;
};

}  // namespace pairperm::detail
