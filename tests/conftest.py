import os

import numpy as np
import pytest
from hypothesis import settings

# Hypothesis profiles. "ci" is deterministic (derandomize: the same examples on every run, no
# example database) and bounded so the property tests stay fast; "quick", the default of a plain
# `pytest`, draws fewer random examples so that the README's test command stays within minutes;
# "dev" explores more. Select with HYPOTHESIS_PROFILE=ci|quick|dev; CI=true selects "ci".
settings.register_profile("ci", derandomize=True, database=None, max_examples=40, deadline=None,
                          print_blob=True)
settings.register_profile("quick", max_examples=25, deadline=None)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "quick"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
