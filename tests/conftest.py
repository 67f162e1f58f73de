import os

import numpy as np
import pytest
from hypothesis import settings

# Hypothesis profiles. "ci" is deterministic (derandomize: the same examples on every run, no
# example database) and bounded so the property tests stay fast; "dev" is the local default
# and explores more. Select with HYPOTHESIS_PROFILE=ci|dev; CI=true selects "ci".
settings.register_profile("ci", derandomize=True, database=None, max_examples=40, deadline=None,
                          print_blob=True)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
