// Shared by every binding file: the pybind11 namespace alias, array helpers and the one
// way to run core code without the GIL.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pairperm/distribution.hpp"
#include "pairperm/errors.hpp"
#include "pairperm/plan.hpp"
#include "pairperm/real_valued.hpp"

// Every GIL release goes through without_gil() below: the guards' destructors are noexcept,
// and re-taking the GIL there from a daemon thread at interpreter exit aborts the process.
#pragma GCC poison gil_scoped_release gil_scoped_acquire

namespace py = pybind11;

namespace pairperm::bindings {

// Inputs arrive contiguous and int64 only after Python validated them.
using int_array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using double_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// Starts a call into the core on this thread (bind_runtime.cpp): fixes the cancel generation
// the call answers to. False when that generation was already cancelled (a task of a pool
// that was interrupted before it reached the core).
bool start_core_call() noexcept;

// Runs f() with the GIL released and takes it back explicitly, never in a destructor: at
// interpreter exit, re-taking the GIL from a daemon thread ends that thread with a forced
// unwind (pthread_exit), and if that unwind crossed a noexcept destructor such as
// ~gil_scoped_release the process would abort. f must join any threads it starts before
// returning or throwing (the core's parallel_for does). pairperm::interrupted becomes the
// Python exception that the interrupt poll left pending, or KeyboardInterrupt when the call
// was cancelled from another thread.
template <class F>
decltype(auto) without_gil(F&& f) {
    if (!start_core_call()) {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        throw py::error_already_set();
    }
    PyThreadState* state = PyEval_SaveThread();
    try {
        if constexpr (std::is_void_v<decltype(f())>) {
            f();
            PyEval_RestoreThread(state);
        } else {
            auto result = f();
            PyEval_RestoreThread(state);
            return result;
        }
#if defined(__GLIBCXX__)
    } catch (abi::__forced_unwind&) {
        throw;  // this thread is being torn down: it must not touch Python again
#endif
    } catch (const interrupted&) {
        PyEval_RestoreThread(state);
        if (PyErr_Occurred() == nullptr) PyErr_SetNone(PyExc_KeyboardInterrupt);
        throw py::error_already_set();
    } catch (...) {
        PyEval_RestoreThread(state);
        throw;
    }
}

// Runs f() holding the GIL, from inside without_gil(): a caller's Python statistic evaluated on
// the core's distributions. Taken and given back as the interrupt poll does; an exception from
// Python leaves as py::error_already_set, which releases what it holds under the GIL itself.
template <class F>
decltype(auto) with_gil(F&& f) {
    const PyGILState_STATE gil = PyGILState_Ensure();
    try {
        auto result = f();
        PyGILState_Release(gil);
        return result;
    } catch (...) {
        PyGILState_Release(gil);
        throw;
    }
}

// Hand a std::vector to NumPy without copying: the capsule owns it.
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
    auto* owned = new std::vector<T>(std::move(v));
    py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(), free_when_done);
}

inline py::tuple distribution_tuple(Distribution&& d) {
    const double tm = d.truncated_mass;
    const auto off = d.offset;
    return py::make_tuple(off, to_numpy(std::move(d.pmf)), tm);
}

// A real-valued problem (real_valued.hpp) from 1-D float64 stay and swap, with the scores'
// magnitudes and grid where the effects were formed from scores (magnitude per entry, in units
// of 2^exponent; every score a multiple of 2^grid, or the grid of the scores in grid_scores, the
// varying units' scores of each system), or as read (no magnitude).
using real_array = py::array_t<double, py::array::c_style | py::array::forcecast>;
struct RealScores {
    std::optional<real_array> magnitude;
    int exponent = 0;
    std::optional<int> grid;
    std::optional<std::pair<real_array, real_array>> grid_scores;
};
RealProblem real_problem_from(const real_array& stay, const real_array& swap, const std::string& alternative,
                              double rtol, const RealScores& scores = {});

inline Alternative parse_alternative(const std::string& s) {
    if (s == "two-sided") return Alternative::two_sided;
    if (s == "greater") return Alternative::greater;
    if (s == "less") return Alternative::less;
    throw std::invalid_argument("alternative must be one of 'two-sided', 'greater', 'less', got '" + s + "'");
}

inline Method parse_method(const std::string& s) {
    if (s == "auto") return Method::automatic;
    if (s == "exact") return Method::exact;
    if (s == "dp") return Method::dp;
    if (s == "fft") return Method::fft;
    if (s == "monte_carlo") return Method::monte_carlo;
    throw std::invalid_argument("method must be one of 'auto', 'exact', 'dp', 'fft', 'monte_carlo', got '" + s + "'");
}

// stay and swap must be 1-D arrays of the same length.
inline std::size_t check_pair(const int_array& a, const int_array& b) {
    if (a.ndim() != 1 || b.ndim() != 1) throw std::invalid_argument("expected 1-D arrays");
    if (a.shape(0) != b.shape(0))
        throw std::invalid_argument("length mismatch: " + std::to_string(a.shape(0)) + " vs " +
                                    std::to_string(b.shape(0)));
    return static_cast<std::size_t>(a.shape(0));
}

void bind_local_effects(py::module_& m);
void bind_engines(py::module_& m);
void bind_pvalue(py::module_& m);
void bind_band_tail(py::module_& m);
void bind_monte_carlo(py::module_& m);
void bind_multidim(py::module_& m);
void bind_bootstrap(py::module_& m);
void bind_runtime(py::module_& m);
void bind_real(py::module_& m);
void bind_intervals(py::module_& m);
void bind_batch(py::module_& m);
void bind_plan(py::module_& m);
void bind_executor(py::module_& m);
void bind_mt(py::module_& m);

}  // namespace pairperm::bindings
