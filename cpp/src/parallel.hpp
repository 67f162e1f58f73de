// Internal: the one thread fan-out of the core. Work is cut into fixed blocks whose results
// depend only on the block index (each block seeds its own random stream), so the output is
// the same for any number of threads and any assignment of blocks to threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "check_interrupt.hpp"

namespace pairperm::detail {

// 0 means one thread per hardware thread.
inline unsigned resolve_threads(unsigned requested) {
    return requested != 0 ? requested : std::max(1U, std::thread::hardware_concurrency());
}

// Calls body(block, progress) for every block in [0, n_blocks) on up to `threads` threads,
// the calling thread being one of them. body reports its work through progress.add(...):
// on the calling thread that polls for an interrupt, on workers it watches the shared stop
// flag. The first exception (an interrupt on the caller, or any error in a block) stops
// the others at their next check; every thread is joined before it is rethrown.
template <class Body>
void parallel_for(std::size_t n_blocks, unsigned threads, Body&& body) {
    if (n_blocks == 0) return;
    threads = static_cast<unsigned>(std::clamp<std::size_t>(threads, 1, n_blocks));
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex failure_mutex;
    std::exception_ptr failure;

    auto worker = [&] {
        mark_worker_thread();
        Progress progress(&stop);
        try {
            for (;;) {
                if (stop.load(std::memory_order_relaxed)) return;
                const std::size_t b = next.fetch_add(1, std::memory_order_relaxed);
                if (b >= n_blocks) return;
                body(b, progress);
            }
        } catch (const cancelled&) {
            // Someone else failed first; their exception is the one reported.
        } catch (...) {
            // Exceptions must not leave a std::thread; the caller rethrows this one.
            const std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            stop.store(true, std::memory_order_relaxed);
        }
    };

    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    auto join_all = [&pool] {
        for (std::thread& t : pool)
            if (t.joinable()) t.join();
    };
    try {
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
        Progress progress;  // the calling thread: polls for interrupts
        for (;;) {
            progress.check();
            if (stop.load(std::memory_order_relaxed)) break;
            const std::size_t b = next.fetch_add(1, std::memory_order_relaxed);
            if (b >= n_blocks) break;
            body(b, progress);
        }
    } catch (...) {
        stop.store(true, std::memory_order_relaxed);
        join_all();
        throw;
    }
    join_all();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace pairperm::detail
