// Bindings for the engine planner: which engine runs, and the limits it decides by.
#include "pybind.hpp"

#include "pairperm/plan.hpp"

namespace pairperm::bindings {

namespace {

StatisticKind parse_kind(const std::string& s) {
    if (s == "sum") return StatisticKind::sum;
    if (s == "signed_rank_sum") return StatisticKind::signed_rank_sum;
    if (s == "tail") return StatisticKind::tail;
    if (s == "distribution") return StatisticKind::distribution;
    throw std::invalid_argument("statistic kind must be one of 'sum', 'signed_rank_sum', 'tail', 'distribution', got '" +
                                s + "'");
}

}  // namespace

void bind_plan(py::module_& m) {
    py::class_<PlanLimits>(m, "PlanLimits", "The limits the engine planner decides by (the library's defaults).")
        .def(py::init<>())
        .def_readwrite("dp_budget", &PlanLimits::dp_budget)
        .def_readwrite("dp_limit", &PlanLimits::dp_limit)
        .def_readwrite("max_listed_entries", &PlanLimits::max_listed_entries)
        .def_readwrite("small_dp_cost", &PlanLimits::small_dp_cost)
        .def_readwrite("small_dp_entries", &PlanLimits::small_dp_entries)
        .def_readwrite("exact_dp_cost", &PlanLimits::exact_dp_cost)
        .def_readwrite("exact_auto_work", &PlanLimits::exact_auto_work)
        .def_readwrite("band_max_work", &PlanLimits::band_max_work);
    py::class_<Plan>(m, "Plan", "The engine to run, what runs if it declines, and the DP's cost.")
        .def_property_readonly("engine", [](const Plan& p) { return engine_name(p.engine); })
        .def_property_readonly("fallback", [](const Plan& p) { return engine_name(p.fallback); })
        .def_property_readonly("below_noise_floor", [](const Plan& p) { return engine_name(p.below_noise_floor); })
        .def_readonly("dp_within_limit", &Plan::dp_within_limit)
        .def_property_readonly("reason", [](const Plan& p) { return out_of_reach_name(p.reason); })
        .def_readonly("dp_cost", &Plan::dp_cost);
    // The summaries and limits are immutable while we hold references to them.
    m.def(
        "plan_engine",
        [](const EffectSummary& s, const std::string& kind, const std::string& method, const PlanLimits& limits) {
            const StatisticKind k = parse_kind(kind);
            const Method how = parse_method(method);
            return without_gil([&] { return plan_engine(s, k, how, limits); });
        },
        py::arg("summary"), py::arg("kind"), py::arg("method"), py::arg("limits"));
    m.def(
        "plan_engine",
        [](const MultiSummary& s, const std::string& kind, const std::string& method, const PlanLimits& limits) {
            const StatisticKind k = parse_kind(kind);
            const Method how = parse_method(method);
            return without_gil([&] { return plan_engine(s, k, how, limits); });
        },
        py::arg("summary"), py::arg("kind"), py::arg("method"), py::arg("limits"));
    m.def(
        "grouped_tail_work", [](const EffectSummary& s) { return without_gil([&] { return grouped_tail_work(s); }); },
        py::arg("summary"),
          "Estimated (frequency, group) evaluations of grouped_pvalue, the Wilcoxon test's cost model.");
    m.attr("fft_noise_floor") = fft_noise_floor;
}

}  // namespace pairperm::bindings
