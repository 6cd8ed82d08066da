"""Evaluating an agent: running it on the tasks (``overdub eval``) and reading the run (``overdub report``,
``overdub compare``). The run directory's layout is described in README.md, "Evaluating an agent"."""
