// Bindings for binomial confidence intervals (Monte Carlo p-values of every sampling test).
#include "pybind.hpp"

#include "pairperm/intervals.hpp"

namespace pairperm::bindings {

void bind_intervals(py::module_& m) {
    m.def(
        "clopper_pearson",
        [](std::int64_t hits, std::int64_t n, double confidence) {
            return without_gil([&] { return clopper_pearson(hits, n, confidence); });
        },
        py::arg("hits"), py::arg("n"), py::arg("confidence"), "Exact two-sided interval for hits / n.");
    m.def(
        "regularized_beta",
        [](std::int64_t a, std::int64_t b, double x) { return without_gil([&] { return regularized_beta(a, b, x); }); },
        py::arg("a"), py::arg("b"), py::arg("x"), "I_x(a, b) = P[Binomial(a + b - 1, x) >= a].");
}

}  // namespace pairperm::bindings
