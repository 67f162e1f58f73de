// The process-wide interrupt poll.
#include "core/check_interrupt.hpp"

#include <atomic>

namespace pairperm {
namespace {

std::atomic<interrupt_poll> installed_poll{nullptr};
thread_local bool is_worker_thread = false;

}  // namespace

void set_interrupt_poll(interrupt_poll poll) noexcept { installed_poll.store(poll, std::memory_order_release); }

namespace detail {

void mark_worker_thread() noexcept { is_worker_thread = true; }

void check_interrupt() {
    if (is_worker_thread) return;
    const interrupt_poll poll = installed_poll.load(std::memory_order_acquire);
    if (poll != nullptr && poll()) throw interrupted();
}

}  // namespace detail
}  // namespace pairperm
