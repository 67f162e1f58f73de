"""Sampling options and seeds: what every sampling route (Monte Carlo, importance sampling, the
bootstrap) is given, checked once, and how each draws its independent, reproducible streams."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Optional

import numpy as np

from ._results import instance_maker
from ._validation import (
    MAX_RESAMPLES,
    check_n_jobs,
    check_n_resamples,
    check_probability,
    check_rng,
)

__all__ = ["MonteCarloOptions", "block_seed", "check_sampling", "child_seed", "core_sampling", "monte_carlo_options",
           "seed_from_rng", "seed_root"]

# Resamples per sampler call. Fixed (not tuned to the data) so that one seed draws the same
# resamples whichever test asks; smaller only when m is so large that a block of sums
# would not fit in ~32 MiB.
MC_BLOCK = 4096
MC_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class MonteCarloOptions:
    """Validated sampling arguments; the seed is drawn from `rng` on first use only, since
    that costs more than most exact tests."""

    n_resamples: int
    rng: Any
    alpha: Optional[float] = None
    confidence_level: float = 0.95
    n_jobs: int = 0
    func: str = ""

    @cached_property
    def seed(self) -> int:
        return seed_from_rng(self.rng, self.func)


_default_options = instance_maker(MonteCarloOptions, "n_resamples", "rng", "func")


def _default_sampling(n_resamples: Any, n_jobs: Any, alpha: Any = None, confidence_level: Any = 0.95) -> bool:
    """The default sampling arguments (or any number of resamples in range), valid without
    the checks that word their errors."""
    return (type(n_resamples) is int and n_jobs is None and alpha is None and type(confidence_level) is float
            and confidence_level == 0.95 and 1 <= n_resamples <= MAX_RESAMPLES)


def check_sampling(n_resamples: Any, rng: Any, n_jobs: Any, func: str) -> None:
    """Validate the sampling arguments without making the options: for a route that cannot sample."""
    if not (rng is None and _default_sampling(n_resamples, n_jobs)):
        monte_carlo_options(n_resamples, rng, n_jobs, func)


def monte_carlo_options(n_resamples: Any, rng: Any, n_jobs: Any, func: str, *, alpha: Any = None,
                        confidence_level: Any = 0.95) -> MonteCarloOptions:
    """Validate the sampling arguments, whatever the method (a sampling route may be taken
    by "auto" too: real-valued effects, or integer ones beyond the exact engines' reach)."""
    check_rng(rng, func)
    if _default_sampling(n_resamples, n_jobs, alpha, confidence_level):
        return _default_options(n_resamples, rng, func)
    k = check_n_resamples(n_resamples, func)
    jobs = check_n_jobs(n_jobs, func)
    a = check_probability(alpha, "alpha", func, optional=True)
    conf = check_probability(confidence_level, "confidence_level", func)
    return MonteCarloOptions(k, rng, a, conf, jobs, func)


def core_sampling(n_resamples: Any, rng: Any, n_jobs: Any, func: str) -> tuple[int, int, Callable[[], int]]:
    """The sampling arguments as the core's executor takes them: resamples, threads (0: all
    cores) and the function that draws the seed when a sampled route runs. Checked as
    `monte_carlo_options` checks them (the defaults without making the options)."""
    if rng is None and _default_sampling(n_resamples, n_jobs):
        return n_resamples, 0, _random_seed
    mc = monte_carlo_options(n_resamples, rng, n_jobs, func)
    return mc.n_resamples, mc.n_jobs, lambda: mc.seed


def _random_seed() -> int:
    """A seed from fresh entropy, as `seed_from_rng` draws it for rng=None."""
    return seed_from_rng(None)


def seed_from_rng(rng: Any, func: str = "") -> int:
    """A 64-bit seed for the C++ sampler from None, an int or a numpy Generator."""
    check_rng(rng, func)
    if rng is None:
        return int(np.random.default_rng().integers(0, 2**63, dtype=np.uint64))
    if isinstance(rng, numbers.Integral):
        # Mix the user's seed so that nearby seeds give unrelated streams.
        return int(np.random.default_rng(int(rng)).integers(0, 2**63, dtype=np.uint64))
    return int(rng.integers(0, 2**63, dtype=np.uint64))


def block_seed(seed: int, block: int) -> int:
    """Independent, reproducible stream per block, so results do not depend on where we stop."""
    return int(np.random.SeedSequence(seed, spawn_key=(block,)).generate_state(1, np.uint64)[0] >> np.uint64(1))


def seed_root(rng: Any, func: str) -> Optional[int]:
    """One entropy value from the user's rng from which the seeds of many draws (every pair of
    compare_systems) are derived: None without a seed."""
    check_rng(rng, func)
    if rng is None:
        return None
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63, dtype=np.uint64))
    return int(rng)


def child_seed(root: Optional[int], key: int) -> Optional[int]:
    """The key-th child of the root seed (None without one): independent of how the draws are scheduled."""
    return None if root is None else block_seed(root, key)
