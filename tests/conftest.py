"""Configuration for the project's own tests.

Hypothesis runs with a bounded, derandomized profile, so the suite takes the same time and finds the
same examples on every machine and every day. It lives here, not in the repo-root conftest, so that a
bench run (``pytest --overdub-submission=…``) does not pay for importing hypothesis.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "overdub", max_examples=50, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("overdub")
