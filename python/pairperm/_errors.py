"""Exceptions and warnings of pairperm, and where warnings point."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from types import FrameType
from typing import Iterator, Optional

import pairperm._core as _core

__all__ = ["PrecisionWarning", "SupportTooLargeError", "warn_caller"]

#: Raised when an exact engine would need a dense support beyond the library's memory
#: limit; a ValueError, so ``except ValueError`` keeps working.
SupportTooLargeError = _core.SupportTooLargeError
# The class is defined by the compiled core; its documentation lives here, with the examples.
SupportTooLargeError.__doc__ = """An exact engine would need a dense distribution or FFT grid beyond the library's memory limit.

    Raised before anything is allocated. A ValueError, so ``except ValueError`` keeps working.

    Attributes
    ----------
    entries : int
        The float64 entries that were needed.
    limit : int
        The module's limit.

    Examples
    --------
    >>> import pairperm
    >>> try:
    ...     pairperm.null_distribution([0, 2**40], [2**40, 0], method="dp")
    ... except pairperm.SupportTooLargeError as e:
    ...     print(e.entries > e.limit, isinstance(e, ValueError))
    True True

    A permutation test whose exact support would not fit can run by sampling instead:

    >>> r = pairperm.permutation_test([0, 2**40, 3], [2**40, 0, 1], method="monte_carlo", rng=0)
    >>> r.engine
    'monte_carlo'
    """


class PrecisionWarning(RuntimeWarning):
    """A p-value is reported as an upper bound because the exact value was out of reach.

    Examples
    --------
    >>> import warnings, pairperm
    >>> issubclass(pairperm.PrecisionWarning, RuntimeWarning)
    True
    >>> with warnings.catch_warnings():       # make a bounded p-value an error
    ...     warnings.simplefilter("error", pairperm.PrecisionWarning)
    ...     pairperm.permutation_test([3, 1, 2], [0, 1, 0]).pvalue_is_bound
    False
    """


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def warn_caller(message: str, category: type[Warning] = PrecisionWarning) -> None:
    """Warn at the first stack frame outside this package: the user's own line.

    Keep `message` free of per-call numbers: Python's default filter shows a warning once
    per (message, line), so a constant text is shown once per calling line.
    """
    # stacklevel 2 is warn_caller's caller, the frame walked from.
    frame: Optional[FrameType] = sys._getframe(1)
    level = 2
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


# Exceptions whose arguments are their message alone: the library's own and those of arithmetic.
_MESSAGE_ONLY = (ValueError, TypeError, ZeroDivisionError, OverflowError, FloatingPointError, ArithmeticError,
                 _core.SupportTooLargeError)


@contextlib.contextmanager
def errors_naming(context: str) -> Iterator[None]:
    """An error raised inside says where: "task 'ner': ...", "compare_systems: pair 'A' - 'B': ...".
    The exception itself is raised on (its type, attributes and cause kept), its message
    prefixed where it is the message alone; others (a metric's own exception class) get a note
    where Python has them (3.11+)."""
    try:
        yield
    except Exception as exc:
        if type(exc) in _MESSAGE_ONLY and len(exc.args) == 1 and isinstance(exc.args[0], str):
            exc.args = (f"{context}: {exc.args[0]}",)
        elif hasattr(exc, "add_note"):
            exc.add_note(f"raised in {context}")
        raise
