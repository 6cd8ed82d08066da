"""pytest-overdub: a benchmark for music-making agents, delivered as a pytest plugin.

Importing this package is cheap: it touches neither numpy nor scipy. The layers load when a task runs.
"""

__version__ = "0.1.0"

#: Carried by every result so scores from different dates are comparable, or visibly not.
BENCH_VERSION = "overdub-bench/1"
