// Bindings for m-dimensional local effects: summary, DP reference, grouped engine, and the
// exact ratio-statistic p-values behind f1_test / precision_test / recall_test.
#include "pybind.hpp"

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

MultiDistribution from_python(const py::sequence& offset, const py::array_t<double, py::array::c_style | py::array::forcecast>& pmf) {
    MultiDistribution d;
    if (static_cast<std::size_t>(pmf.ndim()) != py::len(offset))
        throw std::invalid_argument("offset has " + std::to_string(py::len(offset)) + " coordinates but pmf has " +
                                    std::to_string(pmf.ndim()) + " dimensions");
    for (py::ssize_t j = 0; j < pmf.ndim(); ++j) {
        d.shape.push_back(static_cast<std::size_t>(pmf.shape(j)));
        d.offset.push_back(offset[static_cast<std::size_t>(j)].cast<std::int64_t>());
    }
    d.pmf.assign(pmf.data(), pmf.data() + pmf.size());
    return d;
}

RatioDifference ratio_from(const std::array<std::int64_t, 3>& a_num, const std::array<std::int64_t, 3>& a_den,
                           const std::array<std::int64_t, 3>& b_num, const std::array<std::int64_t, 3>& b_den,
                           std::int64_t zero_num, std::int64_t zero_den, std::int64_t obs_num, std::int64_t obs_den) {
    RatioDifference h;
    h.a.num = a_num;
    h.a.den = a_den;
    h.b.num = b_num;
    h.b.den = b_den;
    h.zero_num = zero_num;
    h.zero_den = zero_den;
    h.obs_num = obs_num;
    h.obs_den = obs_den;
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
            py::gil_scoped_release release;  // reads the buffers only
            return summarize_multi(a, b, n, mm);
        },
        py::arg("stay"), py::arg("swap"));
    m.def(
        "convolve_dp_multi",
        [](const int_array& stay, const int_array& swap) {
            const auto [n, mm] = check_pair_2d(stay, swap);
            const std::int64_t *a = stay.data(), *b = swap.data();
            MultiDistribution d;
            {
                py::gil_scoped_release release;  // reads the buffers only; d is ours
                d = convolve_dp_multi(a, b, n, mm);
            }
            return multi_tuple(std::move(d));
        },
        py::arg("stay"), py::arg("swap"), "Alg. 3 over a dense m-D box; returns (offset, pmf, truncated_mass).");
    m.def(
        "grouped_distribution_multi",
        [](const MultiSummary& s) {
            MultiDistribution d;
            {
                py::gil_scoped_release release;  // the summary is immutable while we hold a reference
                d = grouped_distribution_multi(s);
            }
            return multi_tuple(std::move(d));
        },
        py::arg("summary"));
    m.attr("multidim_tail_bound") = multidim_tail_bound;
    m.def(
        "ratio_pvalue",
        [](const py::sequence& offset, const py::array_t<double, py::array::c_style | py::array::forcecast>& pmf,
           const std::array<std::int64_t, 3>& a_num, const std::array<std::int64_t, 3>& a_den,
           const std::array<std::int64_t, 3>& b_num, const std::array<std::int64_t, 3>& b_den, std::int64_t zero_num,
           std::int64_t zero_den, std::int64_t obs_num, std::int64_t obs_den, const std::string& alternative) {
            const MultiDistribution d = from_python(offset, pmf);
            const RatioDifference h = ratio_from(a_num, a_den, b_num, b_den, zero_num, zero_den, obs_num, obs_den);
            const Alternative alt = parse_alternative(alternative);
            PValue p;
            {
                py::gil_scoped_release release;  // works on its own copies
                p = ratio_pvalue(d, h, alt);
            }
            return py::make_tuple(p.pvalue, p.log_pvalue);
        },
        py::arg("offset"), py::arg("pmf"), py::arg("a_num"), py::arg("a_den"), py::arg("b_num"), py::arg("b_den"),
        py::arg("zero_num"), py::arg("zero_den"), py::arg("obs_num"), py::arg("obs_den"), py::arg("alternative"));
    m.def(
        "ratio_tail_pvalue",
        [](const MultiSummary& s, const std::array<std::int64_t, 3>& a_num, const std::array<std::int64_t, 3>& a_den,
           const std::array<std::int64_t, 3>& b_num, const std::array<std::int64_t, 3>& b_den, std::int64_t zero_num,
           std::int64_t zero_den, std::int64_t obs_num, std::int64_t obs_den, const std::string& alternative) {
            const RatioDifference h = ratio_from(a_num, a_den, b_num, b_den, zero_num, zero_den, obs_num, obs_den);
            const Alternative alt = parse_alternative(alternative);
            PValue p;
            bool certified = true;
            {
                py::gil_scoped_release release;  // the summary is immutable while we hold a reference
                p = ratio_tail_pvalue(s, h, alt, &certified);
            }
            return py::make_tuple(p.pvalue, p.log_pvalue, certified);
        },
        py::arg("summary"), py::arg("a_num"), py::arg("a_den"), py::arg("b_num"), py::arg("b_den"), py::arg("zero_num"),
        py::arg("zero_den"), py::arg("obs_num"), py::arg("obs_den"), py::arg("alternative"),
        "Exact-region p-value of a ratio difference with relative accuracy in the tails (exponential tilting); "
        "returns (pvalue, log_pvalue, certified).");
    m.def(
        "ratio_count",
        [](const int_array& points, const std::array<std::int64_t, 3>& a_num, const std::array<std::int64_t, 3>& a_den,
           const std::array<std::int64_t, 3>& b_num, const std::array<std::int64_t, 3>& b_den, std::int64_t zero_num,
           std::int64_t zero_den, std::int64_t obs_num, std::int64_t obs_den, const std::string& alternative) {
            if (points.ndim() != 2) throw std::invalid_argument("ratio_count: points must have shape (K, m)");
            const RatioDifference h = ratio_from(a_num, a_den, b_num, b_den, zero_num, zero_den, obs_num, obs_den);
            const Alternative alt = parse_alternative(alternative);
            const auto k = static_cast<std::size_t>(points.shape(0)), mm = static_cast<std::size_t>(points.shape(1));
            const std::int64_t* p = points.data();
            py::gil_scoped_release release;  // reads the buffer only
            return ratio_count(p, k, mm, h, alt);
        },
        py::arg("points"), py::arg("a_num"), py::arg("a_den"), py::arg("b_num"), py::arg("b_den"), py::arg("zero_num"),
        py::arg("zero_den"), py::arg("obs_num"), py::arg("obs_den"), py::arg("alternative"));
}

}  // namespace pairperm::bindings
