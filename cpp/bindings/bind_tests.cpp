// Bindings for p-values, the band-limited tail and Monte Carlo sampling.
#include "pybind.hpp"

#include "pairperm/band_tail.hpp"
#include "pairperm/monte_carlo.hpp"
#include "pairperm/pvalue.hpp"

namespace pairperm::bindings {

void bind_tests(py::module_& m) {
    m.def(
        "pvalue_from_distribution",
        [](std::int64_t offset, const double_array& pmf, std::int64_t observed, std::int64_t twice_mean,
           const std::string& alternative) {
            if (pmf.ndim() != 1) throw std::invalid_argument("pvalue_from_distribution: pmf must be 1-D");
            const Alternative alt = parse_alternative(alternative);
            const double* data = pmf.data();  // read in place: the argument keeps it alive
            const auto size = static_cast<std::size_t>(pmf.size());
            const PValue p = without_gil(
                [&] { return pvalue_from_distribution(data, size, offset, observed, twice_mean, alt); });
            return py::make_tuple(p.pvalue, p.log_pvalue);
        },
        py::arg("offset"), py::arg("pmf"), py::arg("observed"), py::arg("twice_mean"), py::arg("alternative"));
    m.def(
        "grouped_pvalue",
        [](const EffectSummary& s, const std::string& alternative) {
            const Alternative alt = parse_alternative(alternative);
            // The summary is immutable while we hold a reference.
            const PValue p = without_gil([&] { return grouped_pvalue(s, alt); });
            return py::make_tuple(p.pvalue, p.log_pvalue);
        },
        py::arg("summary"), py::arg("alternative"));
    m.attr("grouped_max_window") = grouped_max_window;
    m.attr("grouped_max_work") = grouped_max_work;
    m.def(
        "band_pvalue",
        [](const EffectSummary& s, const std::string& alternative, double max_work) {
            const Alternative alt = parse_alternative(alternative);
            // The summary is immutable while we hold a reference.
            const BandPValue p = without_gil([&] { return band_pvalue(s, alt, max_work); });
            return py::make_tuple(p.done, p.pvalue, p.log_pvalue, p.error, p.work);
        },
        py::arg("summary"), py::arg("alternative"), py::arg("max_work"),
        "(done, p, log p, absolute error bound, work) by band-limited Fourier inversion; done is False "
        "(nothing evaluated) when the work would exceed max_work.");
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
