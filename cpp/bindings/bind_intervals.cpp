// Bindings for binomial confidence intervals (Monte Carlo p-values of every sampling test) and the
// saddlepoint end of the paired-permutation inversion interval (pairperm.shift_interval).
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
    m.def(
        "saddlepoint_shift_bound",
        [](const double_array& values, const double_array& counts, double tail, double z) {
            if (values.ndim() != 1 || counts.ndim() != 1 || values.shape(0) != counts.shape(0) || values.shape(0) == 0)
                throw std::invalid_argument("values and counts must be non-empty 1-D arrays of the same length");
            const double *v = values.data(), *c = counts.data();
            const auto m = static_cast<std::size_t>(values.shape(0));
            return without_gil([&] { return saddlepoint_shift_bound(v, c, m, tail, z); });
        },
        py::arg("values"), py::arg("counts"), py::arg("tail"), py::arg("z"),
        "Lower end of the permutation-inversion interval by the saddlepoint, from d's distinct values and counts.");
}

}  // namespace pairperm::bindings
