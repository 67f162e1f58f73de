// Bindings for the local effects' summary: one O(N) pass over stay and swap (or x and y).
#include "pybind.hpp"

#include "pairperm/local_effects.hpp"

namespace pairperm::bindings {

void bind_local_effects(py::module_& m) {
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
}

}  // namespace pairperm::bindings
