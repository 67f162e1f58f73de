"""pairperm: exact significance tests between two systems evaluated on the same data.

The heart is the exact paired-permutation test for additively decomposable statistics
(Zmigrod, Vieira & Cotterell, NAACL 2022), made fast by grouping equal local effects.
"""

from ._distribution import Distribution
from ._permutation import convolve_dp, convolve_fft, null_distribution, permutation_test
from ._results import PermutationTestResult
from ._f1 import f1_test, precision_test, recall_test
from ._structured import structured_test
from ._bootstrap import BLEU_COLUMNS, BootstrapTestResult, bootstrap_test
from ._classic import McNemarResult, SignTestResult, WilcoxonResult, mcnemar_test, sign_test, wilcoxon_test
from ._compare import CompareResult, compare
from ._montecarlo import MonteCarloTestResult, monte_carlo_test
from ._systems import SystemsComparison, compare_systems

__version__ = "0.1.0"

__all__ = [
    "Distribution",
    "PermutationTestResult",
    "convolve_dp",
    "convolve_fft",
    "f1_test",
    "null_distribution",
    "permutation_test",
    "precision_test",
    "recall_test",
    "structured_test",
    # issue 5: the rest of the toolbox
    "BLEU_COLUMNS",
    "BootstrapTestResult",
    "CompareResult",
    "McNemarResult",
    "MonteCarloTestResult",
    "SignTestResult",
    "WilcoxonResult",
    "bootstrap_test",
    "compare",
    "mcnemar_test",
    "monte_carlo_test",
    "sign_test",
    "wilcoxon_test",
    "SystemsComparison",
    "compare_systems",
]
