"""For the audio tests: a small mastering task on the ``tiny`` fixture song (one mix in, a 24-bit and a
16-bit master out, one loudness check); ``tiny_audio_bench``, a bench of that song, is in ``conftest.py``."""

from __future__ import annotations

from pytest_overdub.bench.model import Task


def audio_task(tid: str = "master-t", **over) -> Task:
    """The task; ``over`` replaces its fields."""
    data = {"id": tid, "family": "mastering", "title": "t", "instruction": "x" * 40, "song": "tiny",
            "inputs": [{"name": "mix.wav", "song": "tiny"}],
            "answer": [{"name": "master.wav", "what": "the master", "from": ["mix.wav"]},
                       {"name": "master-16.wav", "what": "the 16-bit master", "from": ["mix.wav"], "bits": 16}],
            "checks": [{"id": "lufs", "label": "l", "kind": "loudness", "file": "master.wav", "target": [-20, -10]}]}
    data.update(over)
    return Task.model_validate(data)
