// Bindings for binomial confidence intervals (Monte Carlo p-values of every sampling test) and the
// lattice and saddlepoint ends of the paired-permutation inversion interval (pairperm.shift_interval).
#include "pybind.hpp"

#include "pairperm/intervals.hpp"

namespace pairperm::bindings {

namespace {

// The binomial confidence intervals of every sampling test.
void bind_binomial_intervals(py::module_& m) {
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

}  // namespace

void bind_intervals(py::module_& m) {
    bind_binomial_intervals(m);
    m.attr("lattice_budget") = lattice_budget;
    m.attr("lattice_counted_items") = lattice_counted_items;
    m.def(
        "lattice_affordable",
        [](const double_array& values, const double_array& counts, double tail) {
            if (values.ndim() != 1 || counts.ndim() != 1 || values.shape(0) != counts.shape(0))
                throw std::invalid_argument("values and counts must be 1-D arrays of the same length");
            return lattice_affordable(values.data(), counts.data(), static_cast<std::size_t>(values.shape(0)), tail);
        },
        py::arg("values"), py::arg("counts"), py::arg("tail"),
        "Whether the lattice route finds the permutation-inversion ends of d (its distinct values and counts) at "
        "the level `tail`.");
    m.def(
        "shift_lower_end",
        [](const double_array& values, const double_array& counts, double tail, double z, std::int64_t reject_exponent,
           std::uint64_t count_threshold, bool lattice) {
            if (values.ndim() != 1 || counts.ndim() != 1 || values.shape(0) != counts.shape(0) || values.shape(0) == 0)
                throw std::invalid_argument("values and counts must be non-empty 1-D arrays of the same length");
            const double *v = values.data(), *c = counts.data();
            const auto m = static_cast<std::size_t>(values.shape(0));
            const ShiftLevel level{tail, z, reject_exponent, count_threshold};
            return without_gil([&] { return shift_lower_end(v, c, m, level, lattice); });
        },
        py::arg("values"), py::arg("counts"), py::arg("tail"), py::arg("z"), py::arg("reject_exponent"),
        py::arg("count_threshold"), py::arg("lattice"),
        "Lower end of the permutation-inversion interval from d's distinct values (ascending) and counts: by "
        "the lattice route (NaN where it is not affordable) or the saddlepoint.");
    m.def(
        "weighted_shift_lower_end",
        [](const double_array& values, const double_array& counts, const double_array& weights, double tail, double z,
           std::int64_t reject_exponent) {
            if (values.ndim() != 1 || counts.ndim() != 1 || weights.ndim() != 1 || values.shape(0) == 0 ||
                values.shape(0) != counts.shape(0) || values.shape(0) != weights.shape(0))
                throw std::invalid_argument("values, counts and weights must be non-empty 1-D arrays of one length");
            const double *v = values.data(), *c = counts.data(), *w = weights.data();
            const auto m = static_cast<std::size_t>(values.shape(0));
            const ShiftLevel level{tail, z, reject_exponent, 0};
            return without_gil([&] { return weighted_shift_lower_end(v, c, w, m, level); });
        },
        py::arg("values"), py::arg("counts"), py::arg("weights"), py::arg("tail"), py::arg("z"),
        py::arg("reject_exponent"),
        "Lower end of the permutation-inversion interval of a shift of every item, from the units' summed "
        "differences and item counts (distinct pairs in ascending order of their mean, and their counts), by the "
        "saddlepoint.");
    m.def(
        "batch_shift_bounds",
        [](const int_array& scores, const int_array& pairs, double tail, double z, std::int64_t reject_exponent,
           std::uint64_t count_threshold, bool want_low, bool want_high, unsigned n_threads) {
            if (scores.ndim() != 2 || scores.shape(1) == 0)
                throw std::invalid_argument("batch_shift_bounds: scores must be 2-D (n_systems, N) with N >= 1");
            if (pairs.ndim() != 2 || pairs.shape(1) != 2)
                throw std::invalid_argument("batch_shift_bounds: pairs must have shape (n_pairs, 2)");
            const auto n_systems = static_cast<std::size_t>(scores.shape(0));
            const auto n = static_cast<std::size_t>(scores.shape(1));
            const auto n_pairs = static_cast<std::size_t>(pairs.shape(0));
            py::array_t<double> out({static_cast<py::ssize_t>(n_pairs), py::ssize_t{2}});
            const std::int64_t *s = scores.data(), *pr = pairs.data();
            double* o = out.mutable_data();
            const ShiftLevel level{tail, z, reject_exponent, count_threshold};
            without_gil([&] {
                batch_shift_bounds(s, n_systems, n, pr, n_pairs, level, want_low, want_high, n_threads, o);
            });
            return out;
        },
        py::arg("scores"), py::arg("pairs"), py::arg("tail"), py::arg("z"), py::arg("reject_exponent"),
        py::arg("count_threshold"), py::arg("want_low") = true, py::arg("want_high") = true,
        py::arg("n_threads") = 0,
        "Mean-difference ends (low, high) of the permutation-inversion interval of every row pair of an "
        "(n_systems, N) int64 matrix by the single-pair route; NaN where the differences reach 2^53.");
    m.def(
        "walsh_order_statistic",
        [](const double_array& sorted_d, std::int64_t k, std::size_t listed) {
            if (sorted_d.ndim() != 1) throw std::invalid_argument("walsh_order_statistic: d must be 1-D");
            const double* d = sorted_d.data();
            const auto n = static_cast<std::size_t>(sorted_d.shape(0));
            return without_gil([&] { return walsh_order_statistic(d, n, k, listed); });
        },
        py::arg("sorted_d"), py::arg("k"), py::arg("listed"),
        "The k-th smallest (1-based) Walsh average (d_i + d_j) / 2, i <= j, of ascending d.");
    m.def(
        "bootstrap_sum_quantiles",
        [](const double_array& values, const double_array& counts, const int_array& offsets,
           const double_array& lattices, double q_low, double q_high) {
            const auto k = lattices.size();
            if (values.ndim() != 1 || counts.ndim() != 1 || values.shape(0) != counts.shape(0) ||
                offsets.ndim() != 1 || static_cast<std::size_t>(offsets.size()) != static_cast<std::size_t>(k) + 1)
                throw std::invalid_argument("bootstrap_sum_quantiles: values and counts of equal length, "
                                            "offsets one longer than lattices");
            const std::int64_t* off = offsets.data();
            for (py::ssize_t i = 0; i < k; ++i)
                if (off[i] < 0 || off[i + 1] <= off[i] || off[i + 1] > values.shape(0))
                    throw std::invalid_argument("bootstrap_sum_quantiles: offsets must increase within the values");
            py::array_t<double> out({static_cast<py::ssize_t>(k), py::ssize_t{2}});
            const double *v = values.data(), *c = counts.data(), *h = lattices.data();
            double* o = out.mutable_data();
            without_gil([&] {
                for (py::ssize_t i = 0; i < k; ++i) {
                    const auto [lo, hi] = bootstrap_sum_quantiles(v + off[i], c + off[i],
                                                                  static_cast<std::size_t>(off[i + 1] - off[i]),
                                                                  h[i], q_low, q_high);
                    o[2 * i] = lo;
                    o[2 * i + 1] = hi;
                }
            });
            return out;
        },
        py::arg("values"), py::arg("counts"), py::arg("offsets"), py::arg("lattices"), py::arg("q_low"),
        py::arg("q_high"),
        "Quantiles q_low and q_high of the infinite-resample bootstrap distribution of each sum: sample i "
        "has the distinct values values[offsets[i]:offsets[i+1]] with their counts, on a lattice of span "
        "lattices[i] (0: continuous); returns shape (len(lattices), 2).");
}

}  // namespace pairperm::bindings
