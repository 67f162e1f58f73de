// Bindings for the real-valued paired-permutation test.
#include "pybind.hpp"

#include "pairperm/real_valued.hpp"

namespace pairperm::bindings {

RealProblem real_problem_from(const real_array& stay, const real_array& swap, const std::string& alternative,
                              double rtol, const RealScores& scores) {
    if (stay.ndim() != 1 || swap.ndim() != 1) throw std::invalid_argument("expected 1-D arrays");
    if (stay.shape(0) != swap.shape(0))
        throw std::invalid_argument("length mismatch: " + std::to_string(stay.shape(0)) + " vs " +
                                    std::to_string(swap.shape(0)));
    if (scores.magnitude) {
        const real_array& mag = *scores.magnitude;
        if (mag.ndim() != 1 || mag.shape(0) != stay.shape(0))
            throw std::invalid_argument("score magnitudes must be 1-D with one value per entry");
    }
    const Alternative alt = parse_alternative(alternative);
    const double *a = stay.data(), *b = swap.data();
    const auto n = static_cast<std::size_t>(stay.shape(0));
    // Reads the arrays only, which the arguments keep alive.
    return without_gil([&] {
        if (!scores.magnitude) return real_problem(a, b, n, alt, rtol, nullptr);
        int grid = scores.grid.value_or(0);
        if (!scores.grid && scores.grid_scores) {
            const auto& [xs, ys] = *scores.grid_scores;
            grid = std::min(grid_exponent(xs.data(), static_cast<std::size_t>(xs.size()), no_score_grid),
                            grid_exponent(ys.data(), static_cast<std::size_t>(ys.size()), no_score_grid));
        }
        const ScoreMagnitudes sm{scores.magnitude->data(), scores.exponent, grid};
        return real_problem(a, b, n, alt, rtol, &sm);
    });
}

void bind_real(py::module_& m) {
    m.attr("real_max_exact_varying") = real_max_exact_varying;
    m.def(
        "real_n_varying",
        [](const real_array& stay, const real_array& swap) {
            return real_problem_from(stay, swap, "greater", 0.0).region.n_varying;
        },
        py::arg("stay"), py::arg("swap"));
    m.def(
        "real_exact",
        [](const real_array& stay, const real_array& swap, const std::string& alternative, double rtol,
           std::optional<real_array> magnitude, int exponent, std::optional<int> grid,
           std::optional<std::pair<real_array, real_array>> grid_scores) {
            RealProblem p = real_problem_from(stay, swap, alternative, rtol, RealScores{std::move(magnitude), exponent, grid, std::move(grid_scores)});
            const RealExactResult r = without_gil([&] { return real_exact(p); });
            return py::make_tuple(r.pvalue, r.log_pvalue, r.hits, p.region.n_varying);
        },
        py::arg("stay"), py::arg("swap"), py::arg("alternative"), py::arg("rtol"), py::arg("magnitude") = py::none(),
        py::arg("exponent") = 0, py::arg("grid") = py::none(), py::arg("grid_scores") = py::none(),
        "Exact p-value by meet in the middle: (pvalue, log_pvalue, hits, n_varying). magnitude (per entry, in "
        "units of 2^exponent) and grid describe the scores the effects were formed from, as ScoreMagnitudes.");
    m.def(
        "real_saddlepoint_is",
        [](const real_array& stay, const real_array& swap, const std::string& alternative, double rtol,
           std::size_t n_resamples, std::uint64_t seed, unsigned n_threads, std::size_t max_rounds,
           double target_relative_half_width, std::optional<real_array> magnitude, int exponent, std::optional<int> grid,
           std::optional<std::pair<real_array, real_array>> grid_scores) {
            RealProblem p = real_problem_from(stay, swap, alternative, rtol, RealScores{std::move(magnitude), exponent, grid, std::move(grid_scores)});
            const RealISResult r = without_gil([&] {
                return real_saddlepoint_is(p, n_resamples, seed, n_threads, max_rounds, target_relative_half_width);
            });
            py::dict d;
            d["pvalue"] = r.pvalue;
            d["log_pvalue"] = r.log_pvalue;
            d["ci"] = py::make_tuple(r.ci_low, r.ci_high);
            d["log_ci"] = py::make_tuple(r.log_ci_low, r.log_ci_high);
            d["saddlepoint"] = r.saddlepoint;
            d["log_saddlepoint"] = r.log_saddlepoint;
            d["theta"] = r.theta;
            d["n_resamples"] = r.n_resamples;
            d["hits"] = r.hits;
            d["is_bound"] = r.is_bound;
            return d;
        },
        py::arg("stay"), py::arg("swap"), py::arg("alternative"), py::arg("rtol"), py::arg("n_resamples"),
        py::arg("seed"), py::arg("n_threads") = 0, py::arg("max_rounds") = 1, py::arg("target_relative_half_width") = 0.0,
        py::arg("magnitude") = py::none(), py::arg("exponent") = 0, py::arg("grid") = py::none(), py::arg("grid_scores") = py::none(),
        "Tilted importance sampling in rounds of n_resamples; a dict of the estimate, its 95% interval "
        "(linear and log scale), the Lugannani-Rice value, the tilt, samples drawn, hits and is_bound.");
    m.def(
        "weighted_mean_interval",
        [](double s1, double s2, double s3, double s4, double n_samples) {
            if (!(n_samples >= 2)) throw std::invalid_argument("n_samples must be >= 2");
            const WeightedMeanInterval r = weighted_mean_interval(s1, s2, s3, s4, n_samples);
            return py::make_tuple(r.mean, r.relative_half_width);
        },
        py::arg("s1"), py::arg("s2"), py::arg("s3"), py::arg("s4"), py::arg("n_samples"),
        "(mean, relative half-width of its 95% interval) of importance weights scaled into [0, 1], "
        "from their power sums s_k = sum r^k over n_samples draws (Edgeworth-corrected critical value).");
    m.def(
        "real_monte_carlo",
        [](const real_array& stay, const real_array& swap, const std::string& alternative, double rtol,
           std::size_t n_resamples, std::uint64_t seed, unsigned n_threads, std::optional<real_array> magnitude,
           int exponent, std::optional<int> grid, std::optional<std::pair<real_array, real_array>> grid_scores) {
            RealProblem p = real_problem_from(stay, swap, alternative, rtol, RealScores{std::move(magnitude), exponent, grid, std::move(grid_scores)});
            const RealMCResult r = without_gil([&] { return real_monte_carlo(p, n_resamples, seed, n_threads); });
            return py::make_tuple(r.pvalue, r.hits);
        },
        py::arg("stay"), py::arg("swap"), py::arg("alternative"), py::arg("rtol"), py::arg("n_resamples"),
        py::arg("seed"), py::arg("n_threads") = 0, py::arg("magnitude") = py::none(), py::arg("exponent") = 0,
        py::arg("grid") = py::none(), py::arg("grid_scores") = py::none());
    m.attr("no_score_grid") = no_score_grid;
    m.def(
        "real_sums_exact_on_grid", &sums_exact_on_grid, py::arg("magnitude"), py::arg("grid"),
        "True when values that are integer multiples of 2^grid, with magnitudes summing to at most `magnitude`, "
        "have every sum and difference exact in binary64 (the real-valued test's rule for a zero tie slack).");
    m.def(
        "grid_exponent",
        [](const real_array& v, int none) { return grid_exponent(v.data(), static_cast<std::size_t>(v.size()), none); },
        py::arg("values"), py::arg("none"),
        "The largest e such that every value is an integer multiple of 2^e; `none` where every value is 0.");
    m.def(
        "real_sample_t",
        [](const real_array& k, double theta, std::size_t n_resamples, std::uint64_t seed, unsigned n_threads) {
            if (k.ndim() != 1) throw std::invalid_argument("expected a 1-D array");
            py::array_t<double> out(static_cast<py::ssize_t>(n_resamples));
            const double* kp = k.data();
            const auto n = static_cast<std::size_t>(k.shape(0));
            double* o = out.mutable_data();
            // `out` is ours alone until we return it.
            without_gil([&] { real_sample_t(kp, n, theta, n_resamples, seed, o, n_threads); });
            return out;
        },
        py::arg("k"), py::arg("theta"), py::arg("n_resamples"), py::arg("seed"), py::arg("n_threads") = 0,
        "Samples of T = sum k_n B_n, B_n ~ Bernoulli(1 / (1 + exp(-theta k_n))).");
}

}  // namespace pairperm::bindings
