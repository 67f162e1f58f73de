// Bindings for the many-pairs batch of paired-permutation p-values.
#include "pybind.hpp"

#include "pairperm/batch.hpp"

namespace pairperm::bindings {

void bind_batch(py::module_& m) {
    m.def(
        "batch_pvalues",
        [](const int_array& scores, const int_array& pairs, const std::string& alternative, const std::string& method,
           const PlanLimits& limits, std::size_t n_resamples,
           const std::optional<py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>>& seeds,
           unsigned n_threads) {
            if (scores.ndim() != 2) throw std::invalid_argument("batch_pvalues: scores must be 2-D (n_systems, N)");
            if (pairs.ndim() != 2 || pairs.shape(1) != 2)
                throw std::invalid_argument("batch_pvalues: pairs must have shape (n_pairs, 2)");
            const Alternative alt = parse_alternative(alternative);
            const Method how = parse_method(method);
            const auto n_systems = static_cast<std::size_t>(scores.shape(0));
            const auto n = static_cast<std::size_t>(scores.shape(1));
            const auto n_pairs = static_cast<std::size_t>(pairs.shape(0));
            if (seeds && (seeds->ndim() != 1 || static_cast<std::size_t>(seeds->shape(0)) != n_pairs))
                throw std::invalid_argument("batch_pvalues: seeds must hold one value per pair");
            std::vector<PairOutcome> res(n_pairs);
            const std::int64_t *s = scores.data(), *pr = pairs.data();
            const std::uint64_t* sd = seeds ? seeds->data() : nullptr;
            // Reads the buffers, writes `res` only; returns once no helper touches `res`.
            without_gil([&] {
                batch_pvalues(s, n_systems, n, pr, n_pairs, alt, how, limits, n_resamples, sd, n_threads, res.data());
            });
            std::vector<std::int64_t> observed(n_pairs), n_varying(n_pairs);
            std::vector<double> pvalue(n_pairs), log_pvalue(n_pairs);
            py::list route(n_pairs), notes;
            for (std::size_t p = 0; p < n_pairs; ++p) {
                const PairOutcome& r = res[p];
                observed[p] = r.observed;
                n_varying[p] = r.n_varying;
                pvalue[p] = r.outcome.pvalue;
                log_pvalue[p] = r.outcome.log_pvalue;
                route[p] = py::str(route_name(r.outcome.route));
                if (r.failed) {
                    notes.append(py::make_tuple(p, py::none()));
                } else if (r.outcome.shortfall != Shortfall::none) {
                    notes.append(py::make_tuple(p, r.outcome));
                }
            }
            return py::make_tuple(to_numpy(std::move(observed)), to_numpy(std::move(n_varying)),
                                  to_numpy(std::move(pvalue)), to_numpy(std::move(log_pvalue)), route, notes);
        },
        py::arg("scores"), py::arg("pairs"), py::arg("alternative"), py::arg("method"), py::arg("limits"),
        py::arg("n_resamples"), py::arg("seeds"), py::arg("n_threads") = 0,
        "Paired-permutation p-values of row pairs of an (n_systems, N) int64 matrix by the executor; returns "
        "(observed, n_varying, pvalue, log_pvalue, route, notes): route '' where no p-value came out; notes "
        "lists (pair, Outcome) for each outcome with a shortfall (a bound, an out-of-reach error, 'needs_seed' "
        "without seeds where importance sampling is next) and (pair, None) where the pair failed (an error the "
        "single-pair path words, such as sums that would overflow).");
}

}  // namespace pairperm::bindings
