// Bindings for Monte Carlo sampling of S, plain and tilted.
#include "pybind.hpp"

#include "pairperm/monte_carlo.hpp"

namespace pairperm::bindings {

void bind_monte_carlo(py::module_& m) {
    m.def(
        "sample_sums",
        [](const int_array& stay, const int_array& swap, std::size_t n_resamples, std::uint64_t seed,
           unsigned n_threads) {
            if (stay.ndim() != 2 || swap.ndim() != 2 || stay.shape(0) != swap.shape(0) ||
                stay.shape(1) != swap.shape(1))
                throw std::invalid_argument("sample_sums: stay and swap must both have shape (N, m)");
            const auto n = static_cast<std::size_t>(stay.shape(0));
            const auto mm = static_cast<std::size_t>(stay.shape(1));
            py::array_t<std::int64_t> out({static_cast<py::ssize_t>(n_resamples), static_cast<py::ssize_t>(mm)});
            const std::int64_t *a = stay.data(), *b = swap.data();
            std::int64_t* o = out.mutable_data();
            // `out` is ours alone until we return it.
            without_gil([&] { sample_sums(a, b, n, mm, n_resamples, seed, o, n_threads); });
            return out;
        },
        py::arg("stay"), py::arg("swap"), py::arg("n_resamples"), py::arg("seed"), py::arg("n_threads") = 0);
    m.attr("tilted_threshold_one") = tilted_threshold_one;
    m.def(
        "tilted_sample_sums",
        [](const py::array_t<double, py::array::c_style | py::array::forcecast>& cols,
           const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& thresholds,
           std::size_t n_resamples, std::uint64_t seed, unsigned n_threads) {
            if (cols.ndim() != 2 || thresholds.ndim() != 1 || thresholds.shape(0) != cols.shape(0))
                throw std::invalid_argument("tilted_sample_sums: cols must have shape (N, c) and thresholds (N,)");
            const auto n = static_cast<std::size_t>(cols.shape(0));
            const auto c = static_cast<std::size_t>(cols.shape(1));
            const std::uint64_t* t = thresholds.data();
            py::array_t<double> out({static_cast<py::ssize_t>(n_resamples), static_cast<py::ssize_t>(c)});
            const double* a = cols.data();
            double* o = out.mutable_data();
            without_gil([&] { tilted_sample_sums(a, n, c, t, n_resamples, seed, o, n_threads); });
            return out;
        },
        py::arg("cols"), py::arg("thresholds"), py::arg("n_resamples"), py::arg("seed"), py::arg("n_threads") = 0,
        "(n_resamples, c) sums of the rows of cols, row n taken with probability thresholds[n] / tilted_threshold_one.");

}

}  // namespace pairperm::bindings
