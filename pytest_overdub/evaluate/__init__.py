"""Evaluating an agent: ``overdub eval`` runs it on the tasks, trial after trial, into a run folder;
``overdub report`` and ``overdub compare`` read that folder (README.md, "Evaluating an agent")."""
