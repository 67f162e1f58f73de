// Module-wide runtime glue: the core's limits, its exception types, and the interrupt poll
// that lets Ctrl-C stop a long computation.
#include "pybind.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "pairperm/interrupt.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/multidim.hpp"
#include "pairperm/pvalue.hpp"

namespace pairperm::bindings {

namespace {

// Python runs signal handlers only in the main thread; other threads never need the GIL here.
unsigned long main_thread_ident = 0;

// Ctrl-C must also stop calls running on other threads (a thread pool's tasks), which never
// see the signal. Each call answers to a cancel generation: the one current when it started,
// or the one its thread was given when its task was submitted. Moving the generation on
// cancels every call in flight, and every task submitted before; later calls run normally.
std::atomic<std::uint64_t> cancel_generation{0};
thread_local std::optional<std::uint64_t> task_generation;  // set per task; empty outside tasks
thread_local std::uint64_t call_generation = 0;              // of the call running on this thread

std::uint64_t current_generation() noexcept { return cancel_generation.load(std::memory_order_relaxed); }

// Called by the core from the thread that entered it, every ~10^5-10^6 operations. True
// when the call was cancelled from another thread, or when a signal handler raised on the
// main thread (e.g. KeyboardInterrupt on SIGINT; the Python error is left set), which then
// cancels the calls of the other threads too. The signal check is rate-limited by time so
// that hot loops pay one clock read; at most every 50 ms it takes the GIL briefly.
bool poll_python_signals() {
    if (call_generation != current_generation()) return true;
    if (PyThread_get_thread_ident() != main_thread_ident) return false;
    using clock = std::chrono::steady_clock;
    static clock::time_point next_check{};  // main thread only
    const clock::time_point now = clock::now();
    if (now < next_check) return false;
    next_check = now + std::chrono::milliseconds(50);
    const PyGILState_STATE gil = PyGILState_Ensure();
    const bool raised = PyErr_CheckSignals() != 0;
    PyGILState_Release(gil);
    if (raised) cancel_generation.fetch_add(1, std::memory_order_relaxed);
    return raised;
}

PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> support_error_type;

}  // namespace

bool start_core_call() noexcept {
    const std::uint64_t now = current_generation();
    call_generation = task_generation.value_or(now);
    return call_generation == now;
}

void bind_runtime(py::module_& m) {
    m.attr("max_support") = max_support;
    m.attr("max_abs_sum") = max_abs_sum;
    m.attr("max_ratio_term") = max_ratio_term;
    m.attr("multidim_tail_bound") = multidim_tail_bound;
    m.attr("vector_math") = vector_math_kind();
    m.attr("vector_math_ignored") = vector_math_ignored();

    support_error_type.call_once_and_store_result([&m]() -> py::object {
        py::object type = py::exception<support_too_large>(m, "SupportTooLargeError", PyExc_ValueError);
        type.attr("__doc__") =
            "A dense distribution or FFT grid would exceed max_support float64 entries; raised before "
            "allocating. `entries` is what was needed, `limit` the module's max_support.";
        return type;
    });
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const support_too_large& e) {
            const py::object& type = support_error_type.get_stored();
            py::object error = type(e.what());
            const double entries = e.entries();
            error.attr("entries") = std::isfinite(entries) ? py::reinterpret_steal<py::object>(PyLong_FromDouble(entries))
                                                           : py::object(py::float_(entries));
            error.attr("limit") = max_support;
            PyErr_SetObject(type.ptr(), error.ptr());
        } catch (const interrupted&) {
            // Reached only if the core was called without without_gil(); keep the pending error.
            if (PyErr_Occurred() == nullptr) PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
    });

    m.def("cancel_generation", &current_generation,
          "The current cancel generation: a task given it stops when cancel_calls() moves it on.");
    m.def(
        "cancel_calls", [] { cancel_generation.fetch_add(1, std::memory_order_relaxed); },
        "Stops every call into the core in flight on any thread at its next interrupt poll, and every "
        "task given an earlier generation; they raise KeyboardInterrupt. Later calls are unaffected.");
    m.def(
        "set_task_generation",
        [](std::optional<std::uint64_t> generation) { return std::exchange(task_generation, generation); },
        py::arg("generation"),
        "Makes the calling thread's calls answer to `generation` (None: each to the generation current "
        "when it starts); returns the previous setting.");

    main_thread_ident = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
    set_interrupt_poll(&poll_python_signals);
}

}  // namespace pairperm::bindings
