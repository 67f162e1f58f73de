"""pairperm: exact significance tests between two systems evaluated on the same data.

The heart is the exact paired-permutation test for additively decomposable statistics
(Zmigrod, Vieira & Cotterell, NAACL 2022), made fast by grouping equal local effects.
"""

from ._bootstrap import bootstrap_test
from ._classic import mcnemar_test, sign_test, wilcoxon_test
from ._compare import compare
from ._comparison import SystemsComparison
from ._distribution import Distribution, MultiDistribution
from ._errors import PrecisionWarning, SupportTooLargeError
from ._f1 import f1_test, precision_test, recall_test
from ._fields import read_jsonl_logs
from ._files import read_scores
from ._harness import read_logs
from ._helm import read_helm
from ._inspect_logs import read_inspect
from ._intervals import ConfidenceInterval, ShiftInterval, shift_interval
from ._lighteval import read_lighteval
from ._lm_eval import read_lm_eval
from ._metrics import BLEU_COLUMNS, CHRF_COLUMNS
from ._montecarlo import monte_carlo_test
from ._mt import mt_statistics, read_mt
from ._multipletests import multipletests
from ._multitask import MultiTaskComparison, TaskPair, TaskSummary
from ._openai_evals import read_openai_evals
from ._permutation import convolve_dp, convolve_fft, null_distribution, permutation_test
from ._plot import plot_distribution, plot_result
from ._plot_ranks import plot_rank_intervals
from ._plot_systems import plot_differences, plot_pvalue_matrix
from ._power import (
    PairedBinaryPower,
    discordance_bounds,
    discordance_from_accuracies,
    minimum_detectable_effect_paired_binary,
    power_bounds_from_accuracies,
    power_paired_binary,
    sample_size_paired_binary,
)
from ._ranking import RankIntervals
from ._ranks import rank_intervals, rank_intervals_from_estimates
from ._records import Evaluation
from ._replicability import Replicability, replicability
from ._report import TaskReport
from ._resampling import BootstrapIntervals, bootstrap_intervals
from ._results import (
    BootstrapTestResult,
    CompareResult,
    McNemarResult,
    MonteCarloTestResult,
    PermutationTestResult,
    SignTestResult,
    WilcoxonResult,
)
from ._sequential import SequentialPairedBinary, SequentialPairedBounded, e_bh, e_bonferroni
from ._simulated_power import SimulatedPower, normal_power, simulated_minimum_detectable_effect, simulated_power
from ._structured import structured_test
from ._systems import compare_systems
from ._trec import read_trec, read_trec_eval_q
from ._version import __version__

__all__ = [
    "BLEU_COLUMNS",
    "CHRF_COLUMNS",
    "BootstrapIntervals",
    "BootstrapTestResult",
    "ConfidenceInterval",
    "CompareResult",
    "Distribution",
    "Evaluation",
    "McNemarResult",
    "PairedBinaryPower",
    "SequentialPairedBinary",
    "SequentialPairedBounded",
    "SimulatedPower",
    "MonteCarloTestResult",
    "MultiDistribution",
    "PermutationTestResult",
    "PrecisionWarning",
    "RankIntervals",
    "Replicability",
    "ShiftInterval",
    "SignTestResult",
    "SupportTooLargeError",
    "WilcoxonResult",
    "__version__",
    "bootstrap_intervals",
    "bootstrap_test",
    "compare",
    "convolve_dp",
    "convolve_fft",
    "f1_test",
    "mcnemar_test",
    "monte_carlo_test",
    "null_distribution",
    "permutation_test",
    "plot_differences",
    "plot_distribution",
    "plot_pvalue_matrix",
    "plot_rank_intervals",
    "plot_result",
    "precision_test",
    "rank_intervals",
    "rank_intervals_from_estimates",
    "read_helm",
    "read_inspect",
    "read_jsonl_logs",
    "read_lighteval",
    "read_lm_eval",
    "read_logs",
    "read_openai_evals",
    "read_scores",
    "read_trec",
    "read_trec_eval_q",
    "recall_test",
    "replicability",
    "shift_interval",
    "sign_test",
    "structured_test",
    "wilcoxon_test",
    "SystemsComparison",
    "compare_systems",
    "multipletests",
    "discordance_bounds",
    "e_bh",
    "e_bonferroni",
    "normal_power",
    "simulated_minimum_detectable_effect",
    "simulated_power",
    "discordance_from_accuracies",
    "minimum_detectable_effect_paired_binary",
    "power_bounds_from_accuracies",
    "power_paired_binary",
    "sample_size_paired_binary",
    "mt_statistics",
    "read_mt",
    "MultiTaskComparison",
    "TaskPair",
    "TaskReport",
    "TaskSummary",
]
