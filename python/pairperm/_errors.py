"""Exceptions and warnings of pairperm, and where warnings point."""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType
from typing import Optional

from . import _core

__all__ = ["PrecisionWarning", "SupportTooLargeError", "warn_caller"]

#: Raised when an exact engine would need a dense support beyond the library's memory
#: limit; a ValueError, so ``except ValueError`` keeps working.
SupportTooLargeError = _core.SupportTooLargeError


class PrecisionWarning(RuntimeWarning):
    """A p-value is reported as an upper bound because the exact value was out of reach."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def warn_caller(message: str, category: type[Warning] = PrecisionWarning) -> None:
    """Warn at the first stack frame outside this package: the user's own line.

    Keep `message` free of per-call numbers: Python's default filter shows a warning once
    per (message, line), so a constant text is shown once per calling line.
    """
    frame: Optional[FrameType] = sys._getframe(1)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
