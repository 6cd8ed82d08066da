"""Repo-root pytest configuration for the project's own run.

The bench plugin itself is loaded through its pytest11 entry point (``overdub``); nothing here changes
how it behaves for other projects. Hypothesis runs with a bounded, deterministic profile so the suite
takes the same time and finds the same examples on every machine.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "overdub", max_examples=50, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("overdub")
