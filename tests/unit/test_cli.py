"""Ordinary mistakes on the ``overdub`` command line: each ends in one line on stderr naming what was
wrong, where, and what is allowed, with exit code 2 and no traceback, before any work starts.

The CLI runs in-process through :func:`pytest_overdub.cli.main`; only the broken pipe needs a real one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.cli import main

SONG = str(bundled_bench().root / "songs" / "night-shift.json")
TASK = "edit-quantize-swing"


def _one_line_error(capsys, argv: list[str]) -> str:
    """Run ``overdub argv``; assert exit 2 and exactly one stderr line ``overdub <cmd>: ...``; return it."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"overdub {argv[0]}: ")
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


@pytest.fixture
def unwritable(tmp_path) -> Path:
    """A folder nothing can be written into (a read-only folder; for root, a read-only file system)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    for candidate in (folder, Path("/sys")):
        try:
            os.close(os.open(candidate / "probe.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        except OSError:
            yield candidate
            break
        (candidate / "probe.json").unlink()
    else:
        pytest.skip("no unwritable folder here (root on writable file systems)")
    folder.chmod(0o700)


# --- overdub render ----------------------------------------------------------------------------------


@pytest.mark.parametrize("out, message", [
    ("{tmp}", "argument -o/--out: {tmp} is a folder; want a file ending in .wav or .flac"),
    ("{tmp}/mix", "argument -o/--out: {tmp}/mix has no extension; want a file ending in .wav or .flac"),
    ("{tmp}/mix.mp3", "argument -o/--out: {tmp}/mix.mp3 has extension '.mp3'; want a file ending in .wav or .flac"),
    ("{tmp}/no/such/mix.wav", "argument -o/--out: {tmp}/no/such/mix.wav: the folder {tmp}/no/such does not exist"),
])
def test_render_out_that_cannot_hold_the_mix(tmp_path, capsys, out, message):
    line = _one_line_error(capsys, ["render", SONG, "-o", out.format(tmp=tmp_path)])
    assert message.format(tmp=tmp_path) in line
    assert "(see overdub render --help)" in line


def test_render_out_in_an_unwritable_folder(unwritable, capsys):
    line = _one_line_error(capsys, ["render", SONG, "-o", str(unwritable / "mix.wav")])
    assert f"argument -o/--out: {unwritable}/mix.wav: cannot write into {unwritable}" in line


def test_render_stems_onto_a_file_is_refused_before_the_mix_is_written(tmp_path, capsys):
    taken = tmp_path / "stems.wav"
    taken.write_bytes(b"")
    line = _one_line_error(capsys, ["render", SONG, "-o", str(tmp_path / "mix.wav"), "--stems", str(taken)])
    assert f"argument --stems: {taken} is a file; want a folder for the stems" in line
    assert not (tmp_path / "mix.wav").exists()


def test_render_stems_in_an_unwritable_folder(tmp_path, unwritable, capsys):
    line = _one_line_error(capsys, ["render", SONG, "-o", str(tmp_path / "mix.wav"),
                                    "--stems", str(unwritable / "stems")])
    assert f"argument --stems: {unwritable}/stems: cannot write into {unwritable}" in line


def test_render_stems_into_the_mix_file(tmp_path, capsys):
    mix = str(tmp_path / "mix.wav")
    line = _one_line_error(capsys, ["render", SONG, "-o", mix, "--stems", mix])
    assert f"--stems {mix} is the mix file -o {mix}; want a folder of its own" in line


@pytest.mark.parametrize("sr", ["1000000000", "0", "-48000", "7999", "384001", "44.1k"])
def test_render_sample_rate_out_of_range(tmp_path, capsys, sr):
    line = _one_line_error(capsys, ["render", SONG, "-o", str(tmp_path / "mix.wav"), "--sr", sr])
    assert f"argument --sr: {sr if sr != '44.1k' else repr(sr)}: want a sample rate in 8000..384000 Hz" in line


@pytest.mark.parametrize("song, message", [
    ("{tmp}/nope.json", "argument song: {tmp}/nope.json: no such file; want a song file (JSON)"),
    ("{tmp}", "argument song: {tmp} is a folder; want a song file (JSON)"),
])
def test_render_song_that_cannot_be_read(tmp_path, capsys, song, message):
    line = _one_line_error(capsys, ["render", song.format(tmp=tmp_path), "-o", str(tmp_path / "m.wav")])
    assert message.format(tmp=tmp_path) in line


# --- overdub start, list, run, score, check-changed ---------------------------------------------------


@pytest.mark.parametrize("out, message", [
    ("{tmp}/missing/dir/x.json", "argument --out: {tmp}/missing/dir/x.json: the folder {tmp}/missing/dir does not exist"),
    ("{tmp}", "argument --out: {tmp} is a folder; want a song file ending in .json"),
    ("{tmp}/start.wav", "argument --out: {tmp}/start.wav has extension '.wav'; want a song file ending in .json"),
])
def test_start_out_that_cannot_hold_the_song(tmp_path, capsys, out, message):
    line = _one_line_error(capsys, ["start", TASK, "--out", out.format(tmp=tmp_path)])
    assert message.format(tmp=tmp_path) in line


def test_start_out_in_an_unwritable_folder(unwritable, capsys):
    line = _one_line_error(capsys, ["start", TASK, "--out", str(unwritable / "start.json")])
    assert f"argument --out: {unwritable}/start.json: cannot write into {unwritable}" in line


def test_start_out_writes_a_plain_song_carrying_the_instruction(tmp_path, capsys):
    from pytest_overdub.bench.tasks import start_song
    from pytest_overdub.song.model import load_song

    bench = bundled_bench()
    raw = json.loads((bench.root / "tasks" / f"{TASK}.json").read_text(encoding="utf-8"))
    assert main(["start", TASK, "--out", str(tmp_path / "start.json")]) == 0
    song = load_song(tmp_path / "start.json")  # still a plain overdub/0 song
    assert song.meta["instruction"] == raw["instruction"] and song.meta["task"] == TASK
    handed = start_song(bench.task(TASK), bench=bench)
    assert song.model_copy(update={"meta": handed.meta}) == handed  # nothing but meta differs


def test_list_json_carries_each_instruction_verbatim(capsys):
    bench = bundled_bench()
    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    files = sorted((bench.root / "tasks").glob("*.json"))
    assert [t["id"] for t in listed] == [p.stem for p in files]
    assert [t["instruction"] for t in listed] == [json.loads(p.read_text(encoding="utf-8"))["instruction"]
                                                  for p in files]


@pytest.mark.parametrize("command", [["list"], ["run"], ["start", TASK], ["score", TASK, SONG]])
@pytest.mark.parametrize("bench, message", [
    ("/nonexistent", "argument --bench: /nonexistent: no such folder; want a bench folder holding tasks/"),
    ("{tmp}", "argument --bench: {tmp} has no task files in {tmp}/tasks; want a bench folder holding tasks/"),
    (SONG, f"argument --bench: {SONG} is a file; want a bench folder holding tasks/"),
])
def test_bench_that_is_not_a_bench(tmp_path, capsys, command, bench, message):
    line = _one_line_error(capsys, [*command, "--bench", bench.format(tmp=tmp_path)])
    assert message.format(tmp=tmp_path) in line


@pytest.mark.parametrize("argv, message", [
    (["score", TASK, "{tmp}/nope.json"], "argument submission: {tmp}/nope.json: no such file; want a submission file"),
    (["score", TASK, "{tmp}"], "argument submission: {tmp} is a folder; want a submission file"),
    (["score", TASK, SONG, "--pass", "1.5"], "argument --pass: '1.5': want a task score between 0 and 1"),
    (["score", TASK, SONG, "--pass", "nan"], "argument --pass: 'nan': want a task score between 0 and 1"),
    (["score", "no-such-task", SONG], "no task 'no-such-task' in"),
    (["run", "-j", "0"], "argument -j/--jobs: 0: want a number of worker processes, 1 or more"),
    (["run", "-j", "many"], "argument -j/--jobs: 'many': want a number of worker processes, 1 or more"),
    (["check-changed", "-j", "-2"], "argument -j/--jobs: -2: want a number of worker processes, 1 or more"),
    (["schema", "songs"], "argument kind: invalid choice: 'songs' (choose from 'ops', 'song', 'task')"),
    (["devices", "--bogus"], "unrecognized arguments: --bogus (see overdub devices --help)"),
    (["measure", "a.wav", "b.wav"], "unrecognized arguments: b.wav"),
])
def test_bad_argument_is_one_line(tmp_path, capsys, argv, message):
    line = _one_line_error(capsys, [a.format(tmp=tmp_path) for a in argv])
    assert message.format(tmp=tmp_path) in line


@pytest.mark.parametrize("path, message", [
    ("{tmp}/nope.wav", "cannot read '{tmp}/nope.wav': no such file; want a WAV or FLAC file"),
    ("{tmp}", "cannot read '{tmp}': it is a folder; want a WAV or FLAC file"),
    (SONG, "Format not recognised; want a WAV or FLAC file"),
])
def test_measure_a_file_that_is_not_audio(tmp_path, capsys, path, message):
    line = _one_line_error(capsys, ["measure", path.format(tmp=tmp_path)])
    assert message.format(tmp=tmp_path) in line
    assert "System error" not in line


def test_measure_json_writes_null_for_a_figure_that_is_not_finite(tmp_path, capsys, monkeypatch):
    import numpy as np
    import soundfile

    from pytest_overdub.measure import measurement

    class Figures:
        def as_dict(self):
            return {"lufs": float("nan"), "truePeak": float("-inf"), "peak": -6.0, "extra": {"lra": float("inf")}}

    monkeypatch.setattr(measurement, "measure", lambda x, sr: Figures())
    wav = tmp_path / "x.wav"
    soundfile.write(wav, np.zeros(480), 48000)
    assert main(["measure", str(wav), "--json"]) == 0
    data = _strict_json(capsys.readouterr().out)
    assert data == {"file": str(wav), "lufs": None, "truePeak": None, "peak": -6.0, "extra": {"lra": None}}


def test_unknown_command_is_one_line_with_the_closest(capsys):
    assert main(["scroe", "x"]) == 2
    err = capsys.readouterr().err
    assert err == ("overdub: unknown command 'scroe' (did you mean 'score'?); commands: run, list, start, score, "
                   "generate, render, measure, devices, schema, check-changed (see overdub --help)\n")


def test_help_exits_0(capsys):
    assert main(["render", "--help"]) == 0
    assert "--sr SR" in capsys.readouterr().out


# --- a refused submission: its error once, no NaN ----------------------------------------------------


def _strict_json(text: str):
    def refuse(name):
        raise AssertionError(f"{name} in the JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def refused(tmp_path) -> Path:
    path = tmp_path / "nobody.json"
    path.write_text(json.dumps([{"type": "track.set", "track": "Nobody", "patch": {"gain": -3}}]))
    return path


def test_score_says_a_refused_submissions_error_once(refused, capsys):
    assert main(["score", TASK, str(refused)]) == 1
    out = capsys.readouterr().out
    assert out.count('track = "Nobody"') == 1
    assert "submission refused: transaction 0, op 0 (track.set)" in out
    n_checks = len(bundled_bench().task(TASK).checks) + 2  # and clean and scope
    assert out.count(": not scored (want ") == n_checks
    assert re.search(r": (NaN|nan)\b", out) is None  # no "NaN LU" for a value


def test_score_json_writes_null_and_the_error(refused, capsys):
    assert main(["score", TASK, str(refused), "--json"]) == 1
    data = _strict_json(capsys.readouterr().out)
    assert data["score"] == 0.0 and data["error"].startswith("submission refused")
    assert [c["value"] for c in data["checks"]] == [None] * len(data["checks"])
    assert all(c["error"] == data["error"] for c in data["checks"])


# --- a reader that goes away --------------------------------------------------------------------------


def test_list_into_a_closed_pipe_exits_quietly():
    """``overdub list | head -1``: the reader is gone before the output is written."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest_overdub.cli", "list"], stdout=write,
                              stderr=subprocess.PIPE, env=env, timeout=120)
    finally:
        os.close(write)
    assert proc.stderr.decode() == ""
    assert proc.returncode == 141


def test_run_table_without_near_misses_has_no_nan():
    from pytest_overdub.bench.run import _table

    verdicts = [{"rule": "oracle", "ok": True, "message": "", "score": 1.0},
                {"rule": "baseline", "ok": True, "message": "", "score": 0.25}]
    text = _table([{"task": "mix-a", "family": "mix", "seconds": 0.1, "verdicts": verdicts}])
    assert text.splitlines()[-1].split() == ["mean", "1.000", "0.250"] + ["-", "over", "0"] * 3
    assert "nan" not in text.lower()
