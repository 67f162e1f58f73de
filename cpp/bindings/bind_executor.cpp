// Bindings for the executor: one call per p-value, whatever route it takes.
#include "pybind.hpp"

#include <type_traits>

#include "pairperm/executor.hpp"

namespace pairperm::bindings {

namespace {

// The name results report for a route, made once per route (results on the hot path read it
// at every call). Kept for the life of the process: never released at interpreter exit.
py::str route_str(Route route) {
    static PyObject* names[static_cast<int>(Route::saddlepoint_is) + 1] = {};
    PyObject*& name = names[static_cast<int>(route)];
    if (name == nullptr) {
        name = PyUnicode_InternFromString(route_name(route));
        if (name == nullptr) throw py::error_already_set();
    }
    return py::reinterpret_borrow<py::str>(name);
}

// A caller's statistic known only through its null law (a Python object with
// pvalue(offset, pmf, truncated_mass) and count(states)): the core hands it each distribution
// and the listed states, taking the GIL back for the call. Borrowed: the caller's arguments
// keep it alive.
class PythonStatistic final : public NullStatistic {
public:
    explicit PythonStatistic(py::handle callbacks) : callbacks_(callbacks) {}
    StatisticKind kind() const override { return StatisticKind::distribution; }

    double from_distribution(const Distribution& d, Alternative) const override {
        return with_gil([&] {
            py::array_t<double> pmf(static_cast<py::ssize_t>(d.pmf.size()), d.pmf.data());
            return callbacks_.attr("pvalue")(py::make_tuple(d.offset), pmf, d.truncated_mass).cast<double>();
        });
    }

    double from_distribution(const MultiDistribution& d, Alternative) const override {
        return with_gil([&] {
            const std::vector<py::ssize_t> shape(d.shape.begin(), d.shape.end());
            py::array_t<double> pmf(shape);
            std::copy(d.pmf.begin(), d.pmf.end(), pmf.mutable_data());
            py::tuple offset(d.offset.size());
            for (std::size_t j = 0; j < d.offset.size(); ++j) offset[j] = py::int_(d.offset[j]);
            return callbacks_.attr("pvalue")(offset, pmf, d.truncated_mass).cast<double>();
        });
    }

    std::uint64_t count(const std::int64_t* states, std::size_t k, std::size_t m, Alternative) const override {
        return with_gil([&] {
            py::array_t<std::int64_t> a({static_cast<py::ssize_t>(k), static_cast<py::ssize_t>(m)});
            std::copy(states, states + k * m, a.mutable_data());
            return callbacks_.attr("count")(a).cast<std::uint64_t>();
        });
    }

private:
    py::handle callbacks_;
};

// The seed of the sampled routes: given, or drawn by the caller's function (with the GIL) when
// one runs.
Sampling sampling_of(std::size_t n_resamples, unsigned n_threads, std::optional<std::uint64_t> seed,
                     const py::object& draw_seed) {
    Sampling s;
    s.n_resamples = n_resamples;
    s.n_threads = n_threads;
    s.seed = seed;
    if (!draw_seed.is_none()) {
        const py::handle f = draw_seed;  // the caller's argument keeps it alive
        s.draw_seed = [f] { return with_gil([&] { return f().cast<std::uint64_t>(); }); };
    }
    return s;
}

// The kind a statistic is planned as: a sum's "sum" or "signed_rank_sum"; a ratio's "tail" or
// "distribution"; a caller's statistic only ever "distribution".
StatisticKind kind_of(py::handle statistic, const std::string& s) {
    if (statistic.is_none()) {
        if (s == "sum") return StatisticKind::sum;
        if (s == "signed_rank_sum") return StatisticKind::signed_rank_sum;
    } else if (s == "distribution") {
        return StatisticKind::distribution;
    } else if (s == "tail" && py::isinstance<RatioDifference>(statistic)) {
        return StatisticKind::tail;
    }
    throw std::invalid_argument("execute: kind '" + s + "' does not fit the statistic");
}

// Runs the executor on the statistic a Python caller passed: None (S itself), a RatioStatistic,
// or an object with pvalue(offset, pmf, truncated_mass) and count(states).
template <class Summary>
Outcome execute_statistic(const IntegerEffects& e, const Summary& summary, py::handle statistic, StatisticKind kind,
                          Alternative alt, Method how, const PlanLimits& limits, const Sampling& sampling) {
    // The arrays, summary, statistic and limits stay alive and unchanged while referenced.
    if constexpr (std::is_same_v<Summary, EffectSummary>) {
        if (statistic.is_none()) {
            const SumStatistic stat(summary, kind);
            return without_gil([&] { return execute(e, stat, alt, how, limits, sampling); });
        }
    }
    if (py::isinstance<RatioDifference>(statistic)) {
        const RatioStatistic stat(statistic.cast<const RatioDifference&>(), summary, kind);
        return without_gil([&] { return execute(e, stat, alt, how, limits, sampling); });
    }
    const PythonStatistic stat(statistic);
    return without_gil([&] { return execute(e, stat, alt, how, limits, sampling); });
}

// A NumPy array of native int64, C-contiguous, read in place (no conversion, no copy).
using int64_in_place = py::array_t<std::int64_t, py::array::c_style>;

// The array behind h where it is a 1-D int64_in_place whose entries are aligned (a view
// at an odd byte offset is not: reading it as int64 is undefined), else nullptr.
const std::int64_t* int64_vector(py::handle h, std::size_t& n) {
    if (!int64_in_place::check_(h)) return nullptr;
    const auto a = py::reinterpret_borrow<int64_in_place>(h);
    if (a.ndim() != 1 || (a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) == 0) return nullptr;
    n = static_cast<std::size_t>(a.shape(0));
    return a.data();
}

void bind_outcome(py::module_& m) {
    py::class_<Outcome>(m, "Outcome", "What the executor computed: the p-value and the route, or why not.")
        .def_readonly("pvalue", &Outcome::pvalue)
        .def_readonly("log_pvalue", &Outcome::log_pvalue)
        .def_property_readonly("route", [](const Outcome& o) { return route_str(o.route); })
        .def_property_readonly("shortfall", [](const Outcome& o) { return shortfall_name(o.shortfall); })
        .def_readonly("is_bound", &Outcome::is_bound)
        .def_readonly("dp_within_limit", &Outcome::dp_within_limit)
        .def_readonly("cost", &Outcome::cost)
        .def_readonly("detail", &Outcome::detail)
        .def_readonly("error", &Outcome::error)
        .def_readonly("n_resamples", &Outcome::n_resamples)
        .def_readonly("hits", &Outcome::hits)
        .def_readonly("saddlepoint", &Outcome::saddlepoint)
        .def_property_readonly("ci", [](const Outcome& o) { return py::make_tuple(o.ci_low, o.ci_high); })
        .def_property_readonly("log_ci", [](const Outcome& o) { return py::make_tuple(o.log_ci_low, o.log_ci_high); })
        .def(py::pickle(
            [](const Outcome& o) {
                return py::make_tuple(o.pvalue, o.log_pvalue, static_cast<int>(o.route), static_cast<int>(o.shortfall),
                                      o.is_bound, o.dp_within_limit, o.cost, o.detail, o.error, o.n_resamples,
                                      o.hits, py::make_tuple(o.ci_low, o.ci_high, o.log_ci_low, o.log_ci_high, o.saddlepoint));
            },
            [](const py::tuple& t) {
                if (t.size() != 12) throw std::invalid_argument("Outcome: a pickled state has 12 fields");
                Outcome o;
                o.pvalue = t[0].cast<double>();
                o.log_pvalue = t[1].cast<double>();
                o.route = static_cast<Route>(t[2].cast<int>());
                o.shortfall = static_cast<Shortfall>(t[3].cast<int>());
                o.is_bound = t[4].cast<bool>();
                o.dp_within_limit = t[5].cast<bool>();
                o.cost = t[6].cast<double>();
                o.detail = t[7].cast<std::string>();
                o.error = t[8].cast<double>();
                o.n_resamples = t[9].cast<std::size_t>();
                o.hits = t[10].cast<std::uint64_t>();
                const auto ci = t[11].cast<py::tuple>();
                o.ci_low = ci[0].cast<double>();
                o.ci_high = ci[1].cast<double>();
                o.log_ci_low = ci[2].cast<double>();
                o.log_ci_high = ci[3].cast<double>();
                o.saddlepoint = ci[4].cast<double>();
                return o;
            }));
}

// execute on 1-D and m-D integer effects, and the cap of an FFT route's total mass.
void bind_integer_execute(py::module_& m) {
    m.def(
        "execute",
        [](py::object summary, const int_array& a, const int_array& b, bool paired,
           py::handle statistic, const std::string& kind, const std::string& alternative, const std::string& method,
           const PlanLimits& limits, std::size_t n_resamples, unsigned n_threads, std::optional<std::uint64_t> seed,
           const py::object& draw_seed) {
            const std::size_t n = check_pair(a, b);
            const Alternative alt = parse_alternative(alternative);
            const Method how = parse_method(method);
            const StatisticKind k = kind_of(statistic, kind);
            const Sampling sampling = sampling_of(n_resamples, n_threads, seed, draw_seed);
            const std::int64_t *pa = a.data(), *pb = b.data();
            if (summary.is_none()) {
                // Refuses sums that could overflow (std::invalid_argument) before anything runs.
                summary = py::cast(
                    without_gil([&] { return paired ? summarize_paired(pa, pb, n) : summarize(pa, pb, n); }));
            }
            // Read in place: the summary object stays alive and unchanged while referenced.
            const EffectSummary& s = summary.cast<const EffectSummary&>();
            const IntegerEffects e{pa, pb, n, 1, paired, &s, nullptr};
            Outcome outcome = execute_statistic(e, s, statistic, k, alt, how, limits, sampling);
            return py::make_tuple(summary, std::move(outcome));
        },
        py::arg("summary"), py::arg("a"), py::arg("b"), py::arg("paired"), py::arg("statistic"), py::arg("kind"),
        py::arg("alternative"), py::arg("method"), py::arg("limits"), py::arg("n_resamples"), py::arg("n_threads"),
        py::arg("seed"), py::arg("draw_seed"),
        "(summary, outcome): the p-value of a statistic of 1-D integer local effects by the planner's engine and its "
        "fallbacks, and their summary (made here when None is passed; ValueError where the sums could overflow). "
        "a, b: stay and swap, or paired scores x and y (stay = x - y). statistic: None (S itself, kind 'sum' or "
        "'signed_rank_sum'), a RatioStatistic (recall, increasing in S; kind 'tail' or 'distribution'), or an "
        "object with pvalue(offset, pmf, truncated_mass) and count(states) (kind 'distribution'). seed, or "
        "draw_seed() called when a sampled route runs.");
    m.def(
        "cap_total_mass",
        [](const double_array& pmf) {
            std::vector<double> v(pmf.data(), pmf.data() + pmf.size());
            cap_total_mass(v);
            return to_numpy(std::move(v));
        },
        py::arg("pmf"), "A copy of a 1-D pmf, scaled down as an FFT route's pmf is where its total exceeds 1.");
    m.def(
        "execute",
        [](py::object summary, const int_array& stay, const int_array& swap, py::handle statistic,
           const std::string& kind, const std::string& alternative, const std::string& method,
           const PlanLimits& limits, std::size_t n_resamples, unsigned n_threads, std::optional<std::uint64_t> seed,
           const py::object& draw_seed) {
            if (stay.ndim() != 2 || swap.ndim() != 2 || stay.shape(0) != swap.shape(0) ||
                stay.shape(1) != swap.shape(1))
                throw std::invalid_argument("execute: stay and swap must both have shape (N, m)");
            const auto n = static_cast<std::size_t>(stay.shape(0)), mm = static_cast<std::size_t>(stay.shape(1));
            const Alternative alt = parse_alternative(alternative);
            const Method how = parse_method(method);
            const StatisticKind k = kind_of(statistic, kind);
            const Sampling sampling = sampling_of(n_resamples, n_threads, seed, draw_seed);
            const std::int64_t *pa = stay.data(), *pb = swap.data();
            if (summary.is_none()) summary = py::cast(without_gil([&] { return summarize_multi(pa, pb, n, mm); }));
            const MultiSummary& s = summary.cast<const MultiSummary&>();
            if (s.m != mm) throw std::invalid_argument("execute: the summary is of other effects");
            const IntegerEffects e{pa, pb, n, mm, false, nullptr, &s};
            Outcome outcome = execute_statistic(e, s, statistic, k, alt, how, limits, sampling);
            return py::make_tuple(summary, std::move(outcome));
        },
        py::arg("summary"), py::arg("stay"), py::arg("swap"), py::arg("statistic"), py::arg("kind"), py::arg("alternative"),
        py::arg("method"), py::arg("limits"), py::arg("n_resamples"), py::arg("n_threads"), py::arg("seed"),
        py::arg("draw_seed"), "The same for m-D local effects (stay, swap of shape (N, m)).");
}

}  // namespace

void bind_executor(py::module_& m) {
    bind_outcome(m);
    m.attr("real_is_max_rounds") = real_is_max_rounds;
    m.attr("real_is_target_half_width") = real_is_target_half_width;

    bind_integer_execute(m);
    m.def(
        "execute_real",
        [](const real_array& stay, const real_array& swap, const std::string& alternative, const std::string& method,
           double rtol, std::size_t n_resamples, unsigned n_threads, std::optional<std::uint64_t> seed,
           const py::object& draw_seed, std::optional<real_array> magnitude, int exponent, std::optional<int> grid,
           std::optional<std::pair<real_array, real_array>> grid_scores) {
            const RealProblem p = real_problem_from(
                stay, swap, alternative, rtol, RealScores{std::move(magnitude), exponent, grid, std::move(grid_scores)});
            const Method how = parse_method(method);
            const Sampling sampling = sampling_of(n_resamples, n_threads, seed, draw_seed);
            return without_gil([&] { return execute_real(p, how, sampling); });
        },
        py::arg("stay"), py::arg("swap"), py::arg("alternative"), py::arg("method"), py::arg("rtol"),
        py::arg("n_resamples"), py::arg("n_threads"), py::arg("seed"), py::arg("draw_seed"),
        py::arg("magnitude") = py::none(), py::arg("exponent") = 0, py::arg("grid") = py::none(),
        py::arg("grid_scores") = py::none(),
        "The p-value of the sum of real-valued effects ('auto' or 'exact'); magnitude, exponent and grid (or the "
        "scores whose grid it is, grid_scores) describe the scores the effects were formed from, as "
        "ScoreMagnitudes.");
    m.def(
        "paired_sum_pvalue",
        [](py::handle x, py::handle y, const std::string& alternative, const std::string& method,
           const PlanLimits& limits, std::size_t n_resamples, unsigned n_threads,
           const py::object& draw_seed) -> py::object {
            std::size_t n = 0, n_y = 0;
            const std::int64_t *a = int64_vector(x, n), *b = int64_vector(y, n_y);
            if (a == nullptr || b == nullptr || n != n_y) return py::none();
            const Alternative alt = parse_alternative(alternative);
            const Method how = parse_method(method);
            const Sampling sampling = sampling_of(n_resamples, n_threads, std::nullopt, draw_seed);
            // A bytes object (cheaper to make than an array) that nobody else sees yet: the C API
            // lets its maker fill it before handing it out.
            auto differences =
                py::reinterpret_steal<py::bytes>(PyBytes_FromStringAndSize(nullptr, static_cast<py::ssize_t>(n)));
            if (!differences) throw py::error_already_set();
            auto* d = reinterpret_cast<std::int8_t*>(PyBytes_AS_STRING(differences.ptr()));
            // Reads the two buffers and writes `differences`; the summary is ours until returned.
            EffectSummary summary;
            auto [outcome, fit] = without_gil([&] {
                const bool bytes = summarize_paired(a, b, n, summary, d);
                const IntegerEffects e{a, b, n, 1, true, &summary, nullptr};
                return std::make_pair(execute(e, SumStatistic(summary), alt, how, limits, sampling), bytes);
            });
            // The common outcome, an exact engine's p-value with nothing to say about it, as plain
            // values; any other as the Outcome.
            const bool plain = outcome.shortfall == Shortfall::none && outcome.route != Route::meet_in_the_middle &&
                               outcome.route != Route::saddlepoint_is;
            const double p = outcome.pvalue, log_p = outcome.log_pvalue;
            const py::str route = route_str(outcome.route);
            return py::make_tuple(std::move(summary), fit ? py::object(std::move(differences)) : py::none(), p, log_p,
                                  route, plain ? py::object(py::none()) : py::cast(std::move(outcome)));
        },
        py::arg("x"), py::arg("y"), py::arg("alternative"), py::arg("method"), py::arg("limits"),
        py::arg("n_resamples"), py::arg("n_threads"), py::arg("draw_seed"),
        "(summary, differences, pvalue, log_pvalue, route, outcome) of the paired-permutation test of sum(x) - "
        "sum(y), the summary made in the same call; None unless x and y are 1-D C-contiguous aligned native int64 "
        "arrays of one length, read in place. differences: x - y as int8 in a bytes object, written in the "
        "summary's pass, or None where some |x - y| >= 128. outcome: None for an exact engine's p-value with no "
        "shortfall, else the executor's Outcome. Raises ValueError where the sums could overflow.");
}

}  // namespace pairperm::bindings
