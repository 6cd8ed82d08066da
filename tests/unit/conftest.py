"""Fixtures shared by the unit tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_overdub.bench.tasks import Bench

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def tiny_audio_bench(tmp_path, monkeypatch):
    """A bench of the one ``tiny`` fixture song, with its own input cache (the audio tests')."""
    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "bench" / "songs").mkdir(parents=True)
    shutil.copy(FIXTURES / "tiny.json", tmp_path / "bench" / "songs" / "tiny.json")
    return Bench(tmp_path / "bench")
