"""Which cases of a parametrized test run in the quick set (plain ``pytest``) and which only in
the slow set (``pytest -m slow``, run once in CI): the quick set keeps a case of every route."""

import pytest


def quick_first(cases, quick=1):
    """The cases as pytest parameters: the first `quick` of them in every run, the rest marked slow."""
    out = []
    for i, case in enumerate(cases):
        args = case if isinstance(case, tuple) else (case,)
        out.append(pytest.param(*args) if i < quick else pytest.param(*args, marks=pytest.mark.slow))
    return out
