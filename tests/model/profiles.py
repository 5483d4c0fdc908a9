"""Hypothesis profiles of the reference-model test (tests/integration/test_reference_model.py).

`model` (the default, in `make test` and CI): a fixed, small number of examples, derandomized and without
an example database, so every run tries the same sequences and a failure is the same failure again. `deep`
(`make test-deep`, or ARCA_MODEL_PROFILE=deep): many more and longer sequences, random each run; a failure
prints the shrunk steps and the seed to replay it. ARCA_MODEL_EXAMPLES and ARCA_MODEL_STEPS override the
profile's numbers; ARCA_MODEL_SHRINK=0 reports the first failure unshrunk.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]

settings.register_profile(
    "model",
    max_examples=16,
    stateful_step_count=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=_QUIET,
    print_blob=False,
)
settings.register_profile(
    "deep",
    max_examples=200,
    stateful_step_count=50,
    derandomize=False,
    database=None,
    deadline=None,
    suppress_health_check=_QUIET,
    print_blob=True,
)


def chosen() -> settings:
    """The profile ARCA_MODEL_PROFILE names (default `model`), with the environment's overrides."""
    found = settings.get_profile(os.environ.get("ARCA_MODEL_PROFILE", "model"))
    overrides = {}
    if os.environ.get("ARCA_MODEL_EXAMPLES"):
        overrides["max_examples"] = int(os.environ["ARCA_MODEL_EXAMPLES"])
    if os.environ.get("ARCA_MODEL_STEPS"):
        overrides["stateful_step_count"] = int(os.environ["ARCA_MODEL_STEPS"])
    if os.environ.get("ARCA_MODEL_SHRINK") == "0":  # find a failure fast, then shrink it by hand
        overrides["phases"] = [Phase.explicit, Phase.reuse, Phase.generate]
    return settings(found, **overrides) if overrides else found
