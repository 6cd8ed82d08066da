"""Repo-root pytest configuration for the project's own run.

The bench plugin itself loads through its pytest11 entry point (``overdub``) and finds ``tasks/`` at the
rootdir, so a plain ``pytest`` here runs ``tests/`` and the bench's self-check. Configuration for the
tests lives in ``tests/conftest.py``. Scripts that are not tests are never collected, even when a path
that contains them is named on the command line.
"""

collect_ignore = ["bench", "tools", "build", "docs"]
