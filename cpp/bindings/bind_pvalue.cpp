// Bindings for p-values from a distribution and the grouped engine's tilted tail.
#include "pybind.hpp"

#include "pairperm/pvalue.hpp"

namespace pairperm::bindings {

void bind_pvalue(py::module_& m) {
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
}

}  // namespace pairperm::bindings
