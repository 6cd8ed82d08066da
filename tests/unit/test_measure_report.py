"""`overdub measure FILE [--json]` through report.main."""

import json

import numpy as np
import pytest
import soundfile

from pytest_overdub.measure.report import main

SR = 48000


@pytest.fixture
def wav(tmp_path):
    t = np.arange(2 * SR) / SR
    tone = 10 ** (-23 / 20) * np.sin(2 * np.pi * 1000 * t)
    path = tmp_path / "tone.wav"
    soundfile.write(path, np.stack([tone, tone]).T, SR, subtype="FLOAT")
    return path


def test_table(wav, capsys):
    assert main([str(wav)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("lufs "))
    assert float(line.split()[1]) == pytest.approx(-23.0, abs=0.1)
    assert "truePeak" in out and "bandRel.air" in out and "key" in out


def test_json_and_flac(tmp_path, wav, capsys):
    data, sr = soundfile.read(wav)
    flac = tmp_path / "tone.flac"
    soundfile.write(flac, data, sr)
    assert main([str(flac), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["lufs"] == pytest.approx(-23.0, abs=0.1)
    assert figures["sideDb"] == -120.0 and figures["channels"] == 2


def test_missing_and_unreadable_files_return_2(tmp_path, capsys):
    assert main([str(tmp_path / "nope.wav")]) == 2
    junk = tmp_path / "junk.wav"
    junk.write_text("not audio")
    assert main([str(junk)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("overdub measure: cannot read") for line in err)


def test_a_file_too_short_for_some_figures_says_so_per_figure(tmp_path, capsys):
    t = np.arange(int(0.05 * SR)) / SR
    tone = 0.5 * np.sin(2 * np.pi * 1000 * t)
    path = tmp_path / "blip.wav"
    soundfile.write(path, np.stack([tone, tone]).T, SR, subtype="FLOAT")
    assert main([str(path), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["lufs"] is None
    assert figures["refused"]["lufs"] == "too short for integrated loudness: 50 ms, needs 400 ms"
    assert figures["truePeak"] == pytest.approx(-6.02, abs=0.01) and "truePeak" not in figures["refused"]
    assert {k for k, v in figures.items() if v is None} == set(figures["refused"])
    assert main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    lufs = next(line for line in lines if line.startswith("lufs "))
    assert lufs.split(None, 2)[1:] == ["refused", "too short for integrated loudness: 50 ms, needs 400 ms"]
    assert not any(line.startswith("refused") for line in lines)
