// Bindings for the many-pairs batch of exact paired-permutation p-values.
#include "pybind.hpp"

#include "pairperm/batch.hpp"

namespace pairperm::bindings {

namespace {

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

}  // namespace

void bind_batch(py::module_& m) {
    m.def(
        "paired_sum_pvalue",
        [](py::handle x, py::handle y, const std::string& alternative, const std::string& method,
           const PlanLimits& limits) -> py::object {
            std::size_t n = 0, n_y = 0;
            const std::int64_t *a = int64_vector(x, n), *b = int64_vector(y, n_y);
            if (a == nullptr || b == nullptr || n != n_y) return py::none();
            const Alternative alt = parse_alternative(alternative);
            const Method how = parse_method(method);
            // A bytes object (cheaper to make than an array) that nobody else sees yet: the C API
            // lets its maker fill it before handing it out.
            auto differences =
                py::reinterpret_steal<py::bytes>(PyBytes_FromStringAndSize(nullptr, static_cast<py::ssize_t>(n)));
            if (!differences) throw py::error_already_set();
            auto* d = reinterpret_cast<std::int8_t*>(PyBytes_AS_STRING(differences.ptr()));
            // Reads the two buffers and writes `differences`; the summary is ours until returned.
            EffectSummary summary;
            auto [r, bytes] = without_gil([&] {
                const bool fit = summarize_paired(a, b, n, summary, d);
                return std::make_pair(paired_sum_pvalue(a, b, n, summary, alt, how, limits), fit);
            });
            return py::make_tuple(std::move(summary), r.observed,
                                  r.status == 0 ? py::object(py::float_(r.pvalue)) : py::none(), r.log_pvalue,
                                  engine_name(r.engine),
                                  bytes ? py::object(std::move(differences)) : py::none());
        },
        py::arg("x"), py::arg("y"), py::arg("alternative"), py::arg("method"), py::arg("limits"),
        "(summary, observed, pvalue, log_pvalue, engine, differences) of the paired-permutation test of "
        "sum(x) - sum(y), the summary made in the same call and observed = sum(x) - sum(y); None unless x and y "
        "are 1-D C-contiguous aligned native int64 arrays of one length, read in place. pvalue is None where "
        "the planner's engine is not the trivial p = 1, the DP or the grouped tail, or declined (the caller's "
        "general route then runs it). differences: x - y as int8 in a bytes object, written in the summary's "
        "pass, or None where some |x - y| >= 128.");
    m.def(
        "batch_grouped_pvalues",
        [](const int_array& scores, const int_array& pairs, const std::string& alternative, unsigned n_threads,
           const std::string& method, const PlanLimits& limits) {
            if (scores.ndim() != 2) throw std::invalid_argument("batch_grouped_pvalues: scores must be 2-D (n_systems, N)");
            if (pairs.ndim() != 2 || pairs.shape(1) != 2)
                throw std::invalid_argument("batch_grouped_pvalues: pairs must have shape (n_pairs, 2)");
            const Alternative alt = parse_alternative(alternative);
            const Method how = parse_method(method);
            const auto n_systems = static_cast<std::size_t>(scores.shape(0));
            const auto n = static_cast<std::size_t>(scores.shape(1));
            const auto n_pairs = static_cast<std::size_t>(pairs.shape(0));
            std::vector<PairPValue> res(n_pairs);
            const std::int64_t *s = scores.data(), *pr = pairs.data();
            // Reads the two buffers, writes `res` only; returns once no helper touches `res`.
            without_gil(
                [&] { batch_grouped_pvalues(s, n_systems, n, pr, n_pairs, alt, how, n_threads, res.data(), limits); });
            std::vector<std::int64_t> observed(n_pairs), n_varying(n_pairs), status(n_pairs);
            std::vector<double> pvalue(n_pairs), log_pvalue(n_pairs);
            py::list engine(n_pairs);
            for (std::size_t p = 0; p < n_pairs; ++p) {
                engine[p] = py::str(engine_name(res[p].engine));
                observed[p] = res[p].observed;
                n_varying[p] = res[p].n_varying;
                status[p] = res[p].status;
                pvalue[p] = res[p].pvalue;
                log_pvalue[p] = res[p].log_pvalue;
            }
            return py::make_tuple(to_numpy(std::move(observed)), to_numpy(std::move(n_varying)),
                                  to_numpy(std::move(pvalue)), to_numpy(std::move(log_pvalue)),
                                  to_numpy(std::move(status)), engine);
        },
        py::arg("scores"), py::arg("pairs"), py::arg("alternative"), py::arg("n_threads") = 0,
        py::arg("method") = "auto", py::arg("limits") = PlanLimits{},
        "Paired-permutation p-values of row pairs of an (n_systems, N) int64 matrix by the planner's engine for "
        "`method`; returns (observed, n_varying, pvalue, log_pvalue, status, engine), status 1 where the pair "
        "must be rerun singly, engine the planner's name of what ran (or would run).");
}

}  // namespace pairperm::bindings
