// Internal: the one thread fan-out of the core. Work is cut into fixed blocks whose results
// depend only on the block index (each block seeds its own random stream), so the output is
// the same for any number of threads and any assignment of blocks to threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(_WIN32)
#include <process.h>
#else
#include <unistd.h>
#endif

#include "core/check_interrupt.hpp"

namespace pairperm::detail {

// Entries x resamples below which a sampler runs on the calling thread alone: waking the
// pool's helpers costs a few microseconds, ~10^5 entries of sampling.
inline constexpr double min_parallel_work = 2e5;

// 0 means one thread per hardware thread.
inline unsigned resolve_threads(unsigned requested) {
    return requested != 0 ? requested : std::max(1U, std::thread::hardware_concurrency());
}

// Helper threads kept alive between calls, so that a fan-out costs a wake-up rather than a
// thread start (tens of microseconds each, which small blocks of Monte Carlo paid every
// call). One job at a time: a caller that finds the pool busy (another thread of the
// embedding program inside the core) starts threads of its own instead. After a fork the
// child's pool has no threads behind it; it is abandoned (never destroyed: its threads
// are not joinable there) and a fresh one is made.
class HelperPool {
public:
    // The pool of this process, or nullptr if it cannot be used now (busy); on success the
    // caller holds it until finish().
    static HelperPool* acquire() {
        HelperPool* pool = instance();
        return pool->busy_.try_lock() ? pool : nullptr;
    }

    // Runs job() on up to `helpers` threads (started on first need) while the caller does its
    // own share. finish() withdraws the offer from helpers that have not woken yet (on a busy
    // machine one may not be scheduled before the caller is done, and waiting for it would
    // cost a time slice), waits for those that took the job, and releases the pool.
    void start(unsigned helpers, const std::function<void()>& job) {
        std::unique_lock<std::mutex> lock(mutex_);
        try {
            while (threads_.size() < helpers) threads_.emplace_back([this] { serve(); });
        } catch (const std::system_error&) {
            // No more threads to be had: those there are (and the caller) share the work.
        }
        job_ = &job;
        offered_ = std::min<unsigned>(helpers, static_cast<unsigned>(threads_.size()));
        ++generation_;
        lock.unlock();
        wake_.notify_all();
    }

    void finish() {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            offered_ = 0;
            done_.wait(lock, [this] { return running_ == 0; });
            job_ = nullptr;
        }
        busy_.unlock();
    }

private:
    static HelperPool* instance() {
        static std::atomic<HelperPool*> current{nullptr};
        static std::atomic<long> owner{0};
        static std::mutex create;
        const long pid = current_process();
        HelperPool* pool = current.load(std::memory_order_acquire);
        if (pool != nullptr && owner.load(std::memory_order_acquire) == pid) return pool;
        const std::lock_guard<std::mutex> lock(create);
        pool = current.load(std::memory_order_acquire);
        if (pool == nullptr || owner.load(std::memory_order_acquire) != pid) {
            pool = new HelperPool();  // lives as long as the process
            current.store(pool, std::memory_order_release);
            owner.store(pid, std::memory_order_release);
        }
        return pool;
    }

    static long current_process();

    void serve() {
        mark_worker_thread();
        std::uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return generation_ != seen && offered_ > 0; });
            seen = generation_;
            --offered_;
            ++running_;
            const std::function<void()>* job = job_;
            lock.unlock();
            (*job)();
            lock.lock();
            if (--running_ == 0) done_.notify_all();
        }
    }

    std::mutex busy_, mutex_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> threads_;
    const std::function<void()>* job_ = nullptr;
    unsigned offered_ = 0, running_ = 0;
    std::uint64_t generation_ = 0;
};

#if defined(_WIN32)
inline long HelperPool::current_process() { return static_cast<long>(_getpid()); }
#else
inline long HelperPool::current_process() { return static_cast<long>(getpid()); }
#endif

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

    // A fan-out inside another's body on the same thread runs alone: the pool is taken, and
    // its owner must not try to take it again.
    static thread_local bool fanning_out = false;
    if (fanning_out) threads = 1;
    struct Mark {
        bool& flag;
        const bool before;
        explicit Mark(bool& f) : flag(f), before(f) { flag = true; }
        ~Mark() { flag = before; }
    } mark(fanning_out);
    std::vector<std::thread> own;
    HelperPool* pool = threads > 1 ? HelperPool::acquire() : nullptr;
    std::function<void()> job;  // the pool's handle on worker, made only when the pool is used
    auto join_all = [&own, &pool] {
        if (pool != nullptr) pool->finish();
        pool = nullptr;
        for (std::thread& t : own)
            if (t.joinable()) t.join();
    };
    try {
        if (pool != nullptr) {
            job = worker;
            pool->start(threads - 1, job);
        } else {
            own.reserve(threads - 1);
            try {
                for (unsigned t = 1; t < threads; ++t) own.emplace_back(worker);
            } catch (const std::system_error&) {
                // As in the pool: the threads started (and the caller) share the work.
            }
        }
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
