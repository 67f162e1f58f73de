"""Every route's outcome on the recorded corpus (tests/corpus.py), bit for bit: a change of
module, of engine plumbing or of the core's call structure must not change any result. Computed
in another environment than the recording's (another CPU's vector math, a build without glibc's,
another NumPy), values agree within the routes' documented accuracy instead."""

import json
import math
import warnings

import pytest

from corpus import RECORD, cases, environment, plain

RECORDING = json.loads(RECORD.read_text(encoding="utf-8"))
RECORDED = RECORDING["outcomes"]
SAME_ENVIRONMENT = RECORDING["environment"] == environment()
CASES = cases()


def test_the_corpus_and_the_record_name_the_same_cases():
    assert sorted(CASES) == sorted(RECORDED)


def close(got, want):
    """Equal, but for floats (hex strings) within 1e-12 relative, or 1e-9 absolute for logs."""
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(close(g, w) for g, w in zip(got, want))
    if isinstance(want, str) and isinstance(got, str) and want != got:
        try:
            g, w = float.fromhex(got), float.fromhex(want)
        except ValueError:
            return False
        return g == w or (math.isfinite(w) and abs(g - w) <= max(1e-12 * abs(w), 1e-9 if abs(w) > 1 else 0.0))
    return got == want


@pytest.mark.parametrize("name", sorted(CASES))
def test_outcome_is_the_recorded_one(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sampled floors warn; their values are what is checked
        got = plain(CASES[name]())
    if SAME_ENVIRONMENT:
        assert got == RECORDED[name]
    else:
        assert close(got, RECORDED[name]), (got, RECORDED[name])
