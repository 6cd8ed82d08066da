"""One set of dB helpers (pytest_overdub.dsp.levels), used by every layer, with analytic values."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import pytest_overdub
from pytest_overdub.dsp import dynamics, levels, signals
from pytest_overdub.dsp.stdlib import stdlib
from pytest_overdub.measure import _input
from pytest_overdub.render import engine

PKG = Path(pytest_overdub.__file__).resolve().parent
HELPERS = {"db_to_gain", "gain_to_db", "power_db", "amplitude_db"}


def test_analytic_values_floor_and_ceiling():
    assert levels.db_to_gain(0.0) == 1.0
    assert levels.db_to_gain(20.0) == pytest.approx(10.0, rel=1e-15)
    assert levels.db_to_gain(np.array([-20.0, -40.0])) == pytest.approx([0.1, 0.01], rel=1e-15)
    assert float(levels.gain_to_db(0.5)) == pytest.approx(-6.020599913279624, rel=1e-15)
    assert float(levels.gain_to_db(0.0)) == float(levels.gain_to_db(-1e-9)) == -120.0
    assert levels.power_db(0.0) == levels.power_db(1e-20) == -120.0 and levels.power_db(1e20) == 120.0
    assert levels.amplitude_db(0.1) == pytest.approx(-20.0, abs=1e-12)


def test_every_layer_takes_the_same_helpers():
    assert signals.db_to_gain is dynamics.db_to_gain is levels.db_to_gain
    assert signals.gain_to_db is dynamics.gain_to_db is levels.gain_to_db
    assert _input.power_db is levels.power_db and _input.amplitude_db is levels.amplitude_db
    dsp = stdlib()
    assert dsp.db is levels.db_to_gain and dsp.to_db is levels.gain_to_db


@pytest.mark.parametrize("gain_db", [-119.9, -60.0, -6.0, -0.1, 0.0, 3.5, 12.0])
def test_the_engines_gains_are_the_same_conversion(gain_db):
    assert engine.db_to_gain(gain_db) == levels.db_to_gain(gain_db)


def test_the_engine_silences_at_the_floor():
    assert engine.db_to_gain(engine.SILENCE_DB) == engine.db_to_gain(-500.0) == 0.0


def test_no_other_module_defines_its_own_db_helper():
    """Only levels defines them; the engine's ``db_to_gain`` adds its silence rule around levels'."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(PKG)}:{n.name}" for n in ast.walk(tree)
                  if isinstance(n, ast.FunctionDef) and n.name in HELPERS]
    assert sorted(found) == sorted([f"dsp/levels.py:{h}" for h in HELPERS] + ["render/engine.py:db_to_gain"])
