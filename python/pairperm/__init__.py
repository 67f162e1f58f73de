"""pairperm: exact significance tests between two systems evaluated on the same data.

The heart is the exact paired-permutation test for additively decomposable statistics
(Zmigrod, Vieira & Cotterell, NAACL 2022), made fast by grouping equal local effects.
"""

from ._distribution import Distribution
from ._permutation import convolve_dp, convolve_fft, null_distribution, permutation_test
from ._results import PermutationTestResult

__version__ = "0.1.0"

__all__ = [
    "Distribution",
    "PermutationTestResult",
    "convolve_dp",
    "convolve_fft",
    "null_distribution",
    "permutation_test",
]
