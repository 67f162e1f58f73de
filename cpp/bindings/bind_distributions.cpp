// Bindings for the engines that compute the distribution of S.
#include "pybind.hpp"

#include "pairperm/engines.hpp"
#include "pairperm/executor.hpp"
#include "pairperm/local_effects.hpp"

namespace pairperm::bindings {

namespace {

using engine_fn = Distribution (*)(const std::int64_t*, const std::int64_t*, std::size_t);

// A distribution never holds more than all the probability: the FFT routes' pmfs are capped
// as the executor caps them (the DP's, whose halvings are exact, need nothing).
template <engine_fn engine>
py::tuple run_engine(const int_array& stay, const int_array& swap) {
    const std::size_t n = check_pair(stay, swap);
    const std::int64_t* a = stay.data();
    const std::int64_t* b = swap.data();
    // Safe: the core reads only the two buffers, which the arguments keep alive.
    return distribution_tuple(without_gil([&] {
        Distribution d = engine(a, b, n);
        if (engine != &convolve_dp) cap_total_mass(d.pmf);
        return d;
    }));
}

}  // namespace

void bind_distributions(py::module_& m) {
    py::class_<EffectSummary>(m, "EffectSummary",
                              "One O(N) pass over the local effects (shift, observed value, groups of k).")
        .def_readonly("lo_sum", &EffectSummary::lo_sum)
        .def_readonly("observed", &EffectSummary::observed)
        .def_readonly("twice_mean", &EffectSummary::twice_mean)
        .def_readonly("k_sum", &EffectSummary::k_sum)
        .def_readonly("k2_sum", &EffectSummary::k2_sum)
        .def_readonly("n_varying", &EffectSummary::n_varying)
        .def_readonly("k_gcd", &EffectSummary::k_gcd)
        .def_property_readonly("groups", [](const EffectSummary& s) {
            std::vector<std::pair<std::int64_t, std::int64_t>> out;
            for (const Group& g : s.groups) out.emplace_back(g.k, g.count);
            return out;
        });

    m.def(
        "summarize",
        [](const int_array& stay, const int_array& swap) {
            const std::size_t n = check_pair(stay, swap);
            const std::int64_t *a = stay.data(), *b = swap.data();
            return without_gil([&] { return summarize(a, b, n); });  // reads the buffers only
        },
        py::arg("stay"), py::arg("swap"));
    m.def(
        "summarize_paired",
        [](const int_array& x, const int_array& y) {
            const std::size_t n = check_pair(x, y);
            const std::int64_t *a = x.data(), *b = y.data();
            return without_gil([&] { return summarize_paired(a, b, n); });  // reads the buffers only
        },
        py::arg("x"), py::arg("y"));

    m.def("convolve_dp", &run_engine<convolve_dp>, py::arg("stay"), py::arg("swap"),
          "The papers' Alg. 3; returns (offset, pmf, truncated_mass).");
    m.def("convolve_fft", &run_engine<convolve_fft>, py::arg("stay"), py::arg("swap"),
          "The papers' Alg. 4; returns (offset, pmf, truncated_mass).");
    m.def(
        "grouped_distribution",
        [](const EffectSummary& s) {
            // The summary is immutable while we hold a reference.
            return distribution_tuple(without_gil([&] {
                Distribution d = grouped_distribution(s);
                cap_total_mass(d.pmf);
                return d;
            }));
        },
        py::arg("summary"));
}

}  // namespace pairperm::bindings
