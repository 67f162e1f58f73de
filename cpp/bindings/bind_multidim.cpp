// Bindings for m-dimensional local effects: summary, DP reference, grouped engine, and the
// exact ratio-statistic p-values behind f1_test / precision_test / recall_test.
#include "pybind.hpp"

#include "pairperm/executor.hpp"
#include "pairperm/multidim.hpp"

namespace pairperm::bindings {

namespace {

// stay and swap must be (N, m) arrays of the same shape.
std::pair<std::size_t, std::size_t> check_pair_2d(const int_array& a, const int_array& b) {
    if (a.ndim() != 2 || b.ndim() != 2) throw std::invalid_argument("expected 2-D arrays of shape (N, m)");
    if (a.shape(0) != b.shape(0) || a.shape(1) != b.shape(1))
        throw std::invalid_argument("shape mismatch: (" + std::to_string(a.shape(0)) + ", " +
                                    std::to_string(a.shape(1)) + ") vs (" + std::to_string(b.shape(0)) + ", " +
                                    std::to_string(b.shape(1)) + ")");
    return {static_cast<std::size_t>(a.shape(0)), static_cast<std::size_t>(a.shape(1))};
}

py::tuple multi_tuple(MultiDistribution&& d) {
    std::vector<py::ssize_t> shape(d.shape.begin(), d.shape.end());
    py::tuple offset(d.offset.size());
    for (std::size_t j = 0; j < d.offset.size(); ++j) offset[j] = py::int_(d.offset[j]);
    const double tm = d.truncated_mass;
    py::array_t<double> flat = to_numpy(std::move(d.pmf));
    return py::make_tuple(offset, flat.reshape(shape), tm);
}

using coefficients = std::array<std::int64_t, 3>;
using fraction = std::pair<std::int64_t, std::int64_t>;

RatioDifference make_ratio(const coefficients& a_num, const coefficients& a_den, const coefficients& b_num,
                           const coefficients& b_den, const fraction& zero, const fraction& observed) {
    if (zero.second <= 0 || observed.second <= 0)
        throw std::invalid_argument("RatioStatistic: the denominators of zero and observed must be positive");
    RatioDifference h;
    h.a.num = a_num;
    h.a.den = a_den;
    h.b.num = b_num;
    h.b.den = b_den;
    h.zero_num = zero.first;
    h.zero_den = zero.second;
    h.obs_num = observed.first;
    h.obs_den = observed.second;
    return h;
}

}  // namespace

void bind_multidim(py::module_& m) {
    py::class_<MultiSummary>(m, "MultiSummary", "Canonical delta-vector groups of m-D local effects.")
        .def_readonly("m", &MultiSummary::m)
        .def_readonly("lo_sum", &MultiSummary::lo_sum)
        .def_readonly("observed", &MultiSummary::observed)
        .def_property_readonly("groups", [](const MultiSummary& s) {
            std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>> out;
            for (const DeltaGroup& g : s.groups) out.emplace_back(g.delta, g.count);
            return out;
        });
    m.def(
        "summarize_multi",
        [](const int_array& stay, const int_array& swap) {
            const auto [n, mm] = check_pair_2d(stay, swap);
            const std::int64_t *a = stay.data(), *b = swap.data();
            return without_gil([&, n = n, mm = mm] { return summarize_multi(a, b, n, mm); });  // reads the buffers only
        },
        py::arg("stay"), py::arg("swap"));
    m.def(
        "convolve_dp_multi",
        [](const int_array& stay, const int_array& swap) {
            const auto [n, mm] = check_pair_2d(stay, swap);
            const std::int64_t *a = stay.data(), *b = swap.data();
            return multi_tuple(without_gil([&, n = n, mm = mm] { return convolve_dp_multi(a, b, n, mm); }));
        },
        py::arg("stay"), py::arg("swap"), "Alg. 3 over a dense m-D box; returns (offset, pmf, truncated_mass).");
    m.def(
        "grouped_distribution_multi",
        [](const MultiSummary& s) {
            // The summary is immutable while we hold a reference.
            return multi_tuple(without_gil([&] {
                MultiDistribution d = grouped_distribution_multi(s);
                cap_total_mass(d.pmf);  // as the executor does
                return d;
            }));
        },
        py::arg("summary"));

    py::class_<RatioDifference>(
        m, "RatioStatistic",
        "h(s) = A(s) - B(s) with A = (a_num . (1, s1, s2)) / (a_den . (1, s1, s2)), B likewise;\n"
        "a zero denominator gives zero = (num, den); observed = (num, den) is h at the observed sums.")
        .def(py::init(&make_ratio), py::arg("a_num"), py::arg("a_den"), py::arg("b_num"), py::arg("b_den"),
             py::arg("zero"), py::arg("observed"))
        .def_property_readonly("a_num", [](const RatioDifference& h) { return h.a.num; })
        .def_property_readonly("a_den", [](const RatioDifference& h) { return h.a.den; })
        .def_property_readonly("b_num", [](const RatioDifference& h) { return h.b.num; })
        .def_property_readonly("b_den", [](const RatioDifference& h) { return h.b.den; })
        .def_property_readonly("zero", [](const RatioDifference& h) { return fraction{h.zero_num, h.zero_den}; })
        .def_property_readonly("observed", [](const RatioDifference& h) { return fraction{h.obs_num, h.obs_den}; });
    m.def(
        "ratio_pvalue",
        [](const std::vector<std::int64_t>& offset, const double_array& pmf, const RatioDifference& statistic,
           const std::string& alternative) {
            if (static_cast<std::size_t>(pmf.ndim()) != offset.size())
                throw std::invalid_argument("offset has " + std::to_string(offset.size()) +
                                            " coordinates but pmf has " + std::to_string(pmf.ndim()) +
                                            " dimensions");
            std::vector<std::size_t> shape;
            for (py::ssize_t j = 0; j < pmf.ndim(); ++j) shape.push_back(static_cast<std::size_t>(pmf.shape(j)));
            const Alternative alt = parse_alternative(alternative);
            const double* data = pmf.data();  // read in place: the argument keeps it alive
            const PValue p = without_gil(
                [&] { return ratio_pvalue(data, offset.data(), shape.data(), shape.size(), statistic, alt); });
            return py::make_tuple(p.pvalue, p.log_pvalue);
        },
        py::arg("offset"), py::arg("pmf"), py::arg("statistic"), py::arg("alternative"));
    m.def(
        "ratio_tail_pvalue",
        [](const MultiSummary& s, const RatioDifference& statistic, const std::string& alternative) {
            const Alternative alt = parse_alternative(alternative);
            bool certified = true;
            // summary and statistic are immutable while referenced
            const PValue p = without_gil([&] { return ratio_tail_pvalue(s, statistic, alt, &certified); });
            return py::make_tuple(p.pvalue, p.log_pvalue, certified);
        },
        py::arg("summary"), py::arg("statistic"), py::arg("alternative"),
        "Exact-region p-value of a ratio difference with relative accuracy in the tails (exponential tilting); "
        "returns (pvalue, log_pvalue, certified).");
    m.def(
        "ratio_count",
        [](const int_array& points, const RatioDifference& statistic, const std::string& alternative) {
            if (points.ndim() != 2) throw std::invalid_argument("ratio_count: points must have shape (K, m)");
            const Alternative alt = parse_alternative(alternative);
            const auto k = static_cast<std::size_t>(points.shape(0)), mm = static_cast<std::size_t>(points.shape(1));
            const std::int64_t* p = points.data();
            return without_gil([&] { return ratio_count(p, k, mm, statistic, alt); });  // reads the buffer only
        },
        py::arg("points"), py::arg("statistic"), py::arg("alternative"));
}

}  // namespace pairperm::bindings
