// Bindings for the engines that compute the distribution of S.
#include "pybind.hpp"

#include "pairperm/engines.hpp"
#include "pairperm/executor.hpp"

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

void bind_engines(py::module_& m) {
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
