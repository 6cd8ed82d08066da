"""Audio tasks: the answer reader's errors and accepted forms, the input cache, the task model's rules,
scoring a folder (``overdub score``) and the bench's answers made by code."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from pytest_overdub.bench.audio import inputs as inputs_mod
from pytest_overdub.bench.audio.files import answer_folder, read_answer
from pytest_overdub.bench.model import Task
from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.errors import SubmissionError

from audiotasks import audio_task as _task

SR = 48000
N = SR // 2


def _signal(n=N):
    t = np.arange(n) / SR
    return np.stack([0.5 * np.sin(2 * np.pi * 440 * t), 0.25 * np.sin(2 * np.pi * 660 * t)])


def _write(folder: Path, name: str, x, *, sr=SR, subtype="PCM_24", fmt=None):
    folder.mkdir(parents=True, exist_ok=True)
    sf.write(str(folder / name), np.asarray(x).T, sr, subtype=subtype, format=fmt)


def _good(folder: Path, **kw):
    _write(folder, "master.wav", _signal(), **kw)
    _write(folder, "master-16.wav", _signal(), subtype="PCM_16")


@pytest.mark.parametrize("subtype, fmt, name, tol", [
    ("PCM_16", "WAV", "master.wav", 2 ** -15), ("PCM_24", "WAV", "master.wav", 2 ** -23),
    ("FLOAT", "WAV", "master.wav", 1e-7), ("PCM_32", "WAV", "master.wav", 2 ** -31),
    ("PCM_24", "FLAC", "master.flac", 2 ** -23), ("PCM_24", "WAVEX", "master.wav", 2 ** -23),
])
def test_common_depths_and_flac_are_read_as_the_same_samples(tmp_path, subtype, fmt, name, tol):
    _write(tmp_path, name, _signal(), subtype=subtype, fmt=fmt)
    _write(tmp_path, "master-16.wav", _signal(), subtype="PCM_16")
    got = read_answer(_task(), tmp_path, {"mix.wav": N}, sr=SR)
    assert got["master.wav"].shape == (2, N)
    assert np.abs(got["master.wav"] - _signal()).max() <= tol


@pytest.mark.parametrize("make, words", [
    (lambda d: _write(d, "master.wav", _signal(), sr=44100), ["master.wav (the master)", "44100 Hz", "want 48000 Hz"]),
    (lambda d: _write(d, "master.wav", _signal()[:1]), ["master.wav (the master)", "1 channel(s)", "want 2"]),
    (lambda d: _write(d, "master.wav", _signal(N + 1000)), ["master.wav (the master)", f"{N + 1000} frames",
                                                          f"want {N}"]),
    (lambda d: None, ["master.wav (the master)", "missing", "WAV or FLAC"]),
    (lambda d: (d / "master.wav").write_text("not audio"), ["master.wav (the master)", "not a WAV or FLAC"]),
    (lambda d: _write(d, "master.wav", _signal(), fmt="AIFF"), ["master.wav (the master)", "format AIFF",
                                                             "want WAV (plain, extensible or RF64) or FLAC"]),
    (lambda d: _write(d, "master.wav", _signal(), subtype="ULAW"), ["master.wav", "sample format ULAW",
                                                                 "16-bit PCM, 24-bit PCM"]),
    (lambda d: _write(d, "master.wav", _signal() * np.nan, subtype="FLOAT"), ["master.wav", "NaN"]),
])
def test_a_bad_file_is_one_error_naming_it_what_it_is_and_what_is_allowed(tmp_path, make, words):
    tmp_path.mkdir(exist_ok=True)
    make(tmp_path)
    _write(tmp_path, "master-16.wav", _signal(), subtype="PCM_16")
    with pytest.raises(SubmissionError) as err:
        read_answer(_task(), tmp_path, {"mix.wav": N}, sr=SR)
    assert "\n" not in str(err.value)
    for w in words:
        assert w in str(err.value)


def test_a_file_whose_depth_is_named_must_have_it(tmp_path):
    _write(tmp_path, "master.wav", _signal())
    _write(tmp_path, "master-16.wav", _signal(), subtype="PCM_24")
    with pytest.raises(SubmissionError, match=r"master-16.wav \(the 16-bit master\): 24-bit PCM; want 16-bit PCM"):
        read_answer(_task(), tmp_path, {"mix.wav": N}, sr=SR)


def test_a_slightly_short_file_is_padded_and_dir_task_id_is_found(tmp_path):
    sub = tmp_path / "master-t"
    _write(sub, "master.wav", _signal(N - 100))
    _write(sub, "master-16.wav", _signal(), subtype="PCM_16")
    folder = answer_folder(tmp_path, "master-t")
    assert folder == sub
    got = read_answer(_task(), folder, {"mix.wav": N}, sr=SR)
    assert got["master.wav"].shape == (2, N) and not got["master.wav"][:, -100:].any()
    assert answer_folder(sub, "master-t") == sub  # no master-t/ inside: the folder itself


def test_the_task_model_refuses_mixed_or_dangling_audio_tasks():
    with pytest.raises(ValueError, match="not one of the task's files"):
        _task(checks=[{"id": "l", "label": "l", "kind": "loudness", "file": "nope.wav", "target": [0, 1]}])
    with pytest.raises(ValueError, match="is not an input"):
        _task(answer=[{"name": "m.wav", "what": "m", "from": ["other.wav"]}])
    with pytest.raises(ValueError, match="audio task has inputs, answer and audio checks only"):
        _task(checks=[{"id": "c", "label": "c", "kind": "count", "target": [0, 1]}])
    with pytest.raises(ValueError, match="answer and audio checks"):
        Task.model_validate({"id": "x", "family": "mix", "title": "t", "instruction": "x" * 40, "song": "s",
                             "scope": {}, "checks": [{"id": "l", "label": "l", "kind": "loudness",
                                                      "file": "a.wav", "target": [0, 1]}]})


def test_inputs_are_rendered_once_then_read_from_the_cache(tiny_audio_bench, monkeypatch, tmp_path):
    calls = []
    real = inputs_mod._render_song
    monkeypatch.setattr(inputs_mod, "_render_song", lambda song: calls.append(song) or real(song))
    task = _task(inputs=[{"name": "mix.wav", "song": "tiny"}, {"name": "stems/bass.wav", "song": "tiny",
                                                               "tracks": ["Bass"], "gain_db": -3}],
                 answer=[{"name": "master.wav", "what": "m", "from": ["mix.wav"]}])
    first = inputs_mod.ensure_inputs(task, tiny_audio_bench)
    assert len(calls) == 1  # one render of the song serves both inputs
    stamps = {p: p.stat().st_mtime_ns for p in first.values()}
    second = inputs_mod.ensure_inputs(task, tiny_audio_bench)
    assert len(calls) == 1 and second == first
    assert {p: p.stat().st_mtime_ns for p in second.values()} == stamps
    assert all(p.parent == tmp_path / "cache" / "audio" / "inputs" for p in first.values())
    info = sf.info(str(first["mix.wav"]))
    assert (info.samplerate, info.channels, info.subtype) == (SR, 2, "PCM_24")
    louder = _task(inputs=[{"name": "mix.wav", "song": "tiny", "gain_db": 1}],
                   answer=[{"name": "master.wav", "what": "m", "from": ["mix.wav"]}])
    assert inputs_mod.ensure_inputs(louder, tiny_audio_bench)["mix.wav"] != first["mix.wav"]  # another key
    assert len(calls) == 2


def test_an_unknown_track_in_an_input_names_the_song_s_tracks(tiny_audio_bench):
    from pytest_overdub.errors import TaskError

    task = _task(inputs=[{"name": "mix.wav", "song": "tiny", "tracks": ["Piano"]}],
                 answer=[{"name": "master.wav", "what": "m", "from": ["mix.wav"]}])
    with pytest.raises(TaskError, match=r"\['Piano'\] are not in song 'tiny' \(tracks: Drums, Bass\)"):
        inputs_mod.ensure_inputs(task, tiny_audio_bench)


def test_every_audio_answer_file_names_a_registered_maker():
    from pytest_overdub.bench.audio.answers import MAKERS

    bench = bundled_bench()
    for tid in bench.task_ids():
        if not bench.task(tid).is_audio:
            continue
        for p in [bench.oracle_path(tid), *bench.alternative_paths(tid), *bench.cheat_paths(tid)]:
            assert json.loads(p.read_text())["make"] in MAKERS, p


def test_overdub_score_scores_an_answer_folder_and_start_writes_the_inputs(tiny_audio_bench, tmp_path, capsys):
    from pytest_overdub.bench import commands

    task = {"id": "master-t", "family": "mastering", "title": "t", "instruction": "Turn it down by six dB." * 2,
            "song": "tiny", "inputs": [{"name": "mix.wav", "song": "tiny"}],
            "answer": [{"name": "out.wav", "what": "the quieter mix", "from": ["mix.wav"]}],
            "checks": [{"id": "down", "label": "down", "kind": "loudnessChange", "file": "out.wav",
                        "against": "input:mix.wav", "target": [-6.5, -5.5], "soft": 1}]}
    (tiny_audio_bench.root / "tasks").mkdir()
    (tiny_audio_bench.root / "tasks" / "master-t.json").write_text(json.dumps(task))
    work = tmp_path / "work"
    assert commands.start_main(["master-t", "--out", str(work), "--bench", str(tiny_audio_bench.root)]) == 0
    assert (work / "INSTRUCTION.md").read_text().count("out.wav") == 1
    mix, _ = sf.read(str(work / "mix.wav"), always_2d=True)
    answer = tmp_path / "answers" / "master-t"
    answer.mkdir(parents=True)
    sf.write(str(answer / "out.wav"), mix * 0.5, SR, subtype="FLOAT")
    capsys.readouterr()
    code = commands.score_main(["master-t", str(tmp_path / "answers"), "--bench", str(tiny_audio_bench.root)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1.000" in out
    sf.write(str(answer / "out.wav"), mix, 44100)
    assert commands.score_main(["master-t", str(answer), "--bench", str(tiny_audio_bench.root)]) == 1
    assert "44100 Hz; want 48000 Hz" in capsys.readouterr().out


def test_a_cache_that_cannot_be_written_is_one_task_error(tiny_audio_bench, tmp_path, monkeypatch):
    from pytest_overdub.errors import TaskError

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("OVERDUB_CACHE_DIR", str(blocker))
    task = _task(answer=[{"name": "master.wav", "what": "m", "from": ["mix.wav"]}])
    with pytest.raises(TaskError, match="cannot write .*the audio cache must be a writable folder"):
        inputs_mod.ensure_inputs(task, tiny_audio_bench)
