// Bindings for the band-limited Fourier inversion of the grouped tail.
#include "pybind.hpp"

#include "pairperm/band_tail.hpp"

namespace pairperm::bindings {

void bind_band_tail(py::module_& m) {
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
}

}  // namespace pairperm::bindings
