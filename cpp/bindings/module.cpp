// The private extension module pairperm._core: one binding file per public header.
#include "pybind.hpp"

PYBIND11_MODULE(_core, m, py::mod_gil_not_used()) {
    m.doc() = "pairperm's compiled core (private; use the pairperm package)";
    pairperm::bindings::bind_runtime(m);
    pairperm::bindings::bind_local_effects(m);
    pairperm::bindings::bind_engines(m);
    pairperm::bindings::bind_pvalue(m);
    pairperm::bindings::bind_band_tail(m);
    pairperm::bindings::bind_monte_carlo(m);
    pairperm::bindings::bind_multidim(m);
    pairperm::bindings::bind_bootstrap(m);
    pairperm::bindings::bind_real(m);
    pairperm::bindings::bind_intervals(m);
    pairperm::bindings::bind_plan(m);  // before bind_batch, whose defaults are PlanLimits
    pairperm::bindings::bind_batch(m);
    pairperm::bindings::bind_executor(m);
    pairperm::bindings::bind_mt(m);
}
