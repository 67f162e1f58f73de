// Bindings for binomial confidence intervals (Monte Carlo p-values of every sampling test).
#include "pybind.hpp"

#include "pairperm/intervals.hpp"

namespace pairperm::bindings {

void bind_intervals(py::module_& m) {
    m.def("clopper_pearson", &clopper_pearson, py::arg("hits"), py::arg("n"), py::arg("confidence"),
          py::call_guard<py::gil_scoped_release>(), "Exact two-sided interval for hits / n.");
    m.def("regularized_beta", &regularized_beta, py::arg("a"), py::arg("b"), py::arg("x"),
          py::call_guard<py::gil_scoped_release>(), "I_x(a, b) = P[Binomial(a + b - 1, x) >= a].");
}

}  // namespace pairperm::bindings
