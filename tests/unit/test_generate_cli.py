"""``overdub generate``: writes the generator's song (and truth) byte for byte; mistakes are one line, exit 2."""

from __future__ import annotations

import json

from pytest_overdub.cli import main
from pytest_overdub.generate import generate
from pytest_overdub.generate.truth import GroundTruth
from pytest_overdub.song.model import dumps_song, load_song


def test_generate_writes_the_song_and_its_truth(tmp_path, capsys):
    song, truth = tmp_path / "song.json", tmp_path / "truth.json"
    assert main(["generate", "--seed", "17", "--tier", "3", "--out", str(song), "--truth", str(truth)]) == 0
    made = generate(17, 3)
    assert song.read_text(encoding="utf-8") == dumps_song(made.song)
    assert load_song(song) == made.song
    assert GroundTruth.model_validate(json.loads(truth.read_text(encoding="utf-8"))) == made.truth
    out = capsys.readouterr().out
    assert f"{made.truth.tempo_bpm:g} bpm" in out and made.truth.key.name in out


def test_the_tier_defaults_to_1(tmp_path):
    song = tmp_path / "song.json"
    assert main(["generate", "--seed", "4", "-o", str(song)]) == 0
    assert song.read_text(encoding="utf-8") == dumps_song(generate(4, 1).song)


def _one_line(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("overdub generate: ")
    return err[0]


def test_bad_arguments_are_one_line(tmp_path, capsys):
    out = str(tmp_path / "s.json")
    assert "want a tier in 1..6" in _one_line(capsys, ["generate", "--seed", "1", "--tier", "7", "--out", out])
    assert "want a seed" in _one_line(capsys, ["generate", "--seed", "x", "--out", out])
    assert "ending in .json" in _one_line(capsys, ["generate", "--seed", "1", "--out", str(tmp_path / "s.wav")])
    line = _one_line(capsys, ["generate", "--seed", "1", "--out", out, "--truth", out])
    assert "a file of its own" in line
    assert "--out" in _one_line(capsys, ["generate", "--seed", "1"])
