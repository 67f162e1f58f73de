"""When a p-value summed from an FFT-computed pmf is below the FFT's own round-off."""

from __future__ import annotations

import math
import warnings
from typing import Callable

# The FFT routes have absolute error ~1e-16 of the pmf's peak per entry (measured: 2-D F1
# auto vs dp agree to 3.4e-15 at N <= 300); below this floor a summed p-value is noise.
FFT_NOISE_FLOOR = 1e-12
# Multiply-adds of the exact DP that we spend, unasked, to resolve such a p-value (~2 s).
DP_BUDGET = 4e9


class PrecisionWarning(RuntimeWarning):
    """A p-value is reported as an upper bound because the exact value was out of reach."""


def resolve_small_pvalue(p: float, dp_cost: float, exact: Callable[[], tuple], func: str):
    """Return (p, log_p, is_bound, exact_result_or_None) for an FFT-summed p-value.

    Above the noise floor the FFT value stands. Below it, the DP (relative accuracy per
    entry) recomputes it when that costs at most DP_BUDGET multiply-adds; otherwise the floor
    itself is returned as a conservative upper bound, flagged and warned about.
    """
    if p >= FFT_NOISE_FLOOR:
        return p, (math.log(p) if p > 0 else -math.inf), False, None
    if dp_cost <= DP_BUDGET:
        out = exact()
        return out[0], out[1], False, out
    warnings.warn(
        f"{func}: the p-value is below the FFT engine's accuracy ({FFT_NOISE_FLOOR:g}) and the exact DP "
        f"would need ~{dp_cost:.2g} multiply-adds; reporting p <= {FFT_NOISE_FLOOR:g} (pvalue_is_bound=True). "
        "Pass method='dp' for the exact value.",
        PrecisionWarning,
        stacklevel=3,
    )
    return FFT_NOISE_FLOOR, math.log(FFT_NOISE_FLOOR), True, None
