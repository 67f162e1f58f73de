// Bindings for the paired bootstrap's resampling.
#include "pybind.hpp"

#include "pairperm/bootstrap.hpp"

namespace pairperm::bindings {

void bind_bootstrap(py::module_& m) {
    m.def(
        "bootstrap_counts",
        [](std::size_t n, std::size_t k, std::uint64_t seed, unsigned n_threads) {
            if (n == 0) throw std::invalid_argument("bootstrap_counts: n must be >= 1");
            py::array_t<double> out({static_cast<py::ssize_t>(k), static_cast<py::ssize_t>(n)});
            double* o = out.mutable_data();
            without_gil([&] { bootstrap_counts(n, k, seed, o, n_threads); });  // `out` is ours alone
            return out;
        },
        py::arg("n"), py::arg("k"), py::arg("seed"), py::arg("n_threads") = 0,
        "(k, n) float64 Multinomial(n, 1/n) count vectors; row r depends only on (seed, r).");
    m.def(
        "bootstrap_sums",
        [](const double_array& stats, std::size_t k,
           std::uint64_t seed, unsigned n_threads) {
            if (stats.ndim() != 2 || stats.shape(0) == 0)
                throw std::invalid_argument("bootstrap_sums: stats must have shape (N, m) with N >= 1");
            const auto n = static_cast<std::size_t>(stats.shape(0));
            const auto mm = static_cast<std::size_t>(stats.shape(1));
            py::array_t<double> out({static_cast<py::ssize_t>(k), static_cast<py::ssize_t>(mm)});
            const double* s = stats.data();
            double* o = out.mutable_data();
            // Reads `stats`, writes only `out`, which is ours.
            without_gil([&] { bootstrap_sums(s, n, mm, k, seed, o, n_threads); });
            return out;
        },
        py::arg("stats"), py::arg("k"), py::arg("seed"), py::arg("n_threads") = 0,
        "bootstrap_counts(N, k, seed) @ stats without materialising the counts.");
}

}  // namespace pairperm::bindings
