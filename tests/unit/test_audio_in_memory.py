"""A variant's audio inputs and made answers never touch the disk: what their files would hold is computed in
memory (``bench/audio/pcm.py``) and read by the folder's rules (``files.read_made``). Held here against real
soundfile round trips (so a libsndfile that quantises otherwise fails here, not in a score), the reader's
errors, and scoring with and without the files."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from pytest_overdub.bench.audio import inputs as inputs_mod
from pytest_overdub.bench.audio.answers import as_held, make_answer, write_answer
from pytest_overdub.bench.audio.files import read_answer, read_made
from pytest_overdub.bench.audio.pcm import flac24, pcm16, wav24
from pytest_overdub.bench.model import Task
from pytest_overdub.errors import SubmissionError

from audiotasks import audio_task

SR = 48000
LSB = 2.0 ** -23
# full scale and over it, -1 and under, exact halves of a 24-bit and of a 32-bit step (the WAV path's),
# denormals, both zeros, infinities
EDGES = np.array([1.0, 1 - LSB, 1 - LSB / 2, 1 + 1e-9, 1.5, 2.0, 1e300, np.inf, -1.0, -1 - 1e-9, -1.5, -1e300,
                  -np.inf, 0.5 * LSB, 1.5 * LSB, 2.5 * LSB, -0.5 * LSB, -1.5 * LSB, -2.5 * LSB, 0.5 * 2.0 ** -31,
                  128.5 * 2.0 ** -31, 384.5 * 2.0 ** -31, -128.5 * 2.0 ** -31, 5e-324, -5e-324, 1e-310, -0.0, 0.0,
                  0.1, -0.1])


def _round_trip(tmp_path: Path, x: np.ndarray, fmt: str, subtype: str) -> np.ndarray:
    path = tmp_path / f"x.{fmt.lower()}"
    sf.write(str(path), x.T, SR, subtype=subtype, format=fmt)
    data, _ = sf.read(str(path), dtype="float64", always_2d=True)
    return np.ascontiguousarray(data.T)


@pytest.mark.parametrize("fn, fmt", [(flac24, "FLAC"), (wav24, "WAV")])
def test_the_24_bit_forms_are_a_real_round_trip_bit_for_bit(tmp_path, fn, fmt):
    rng = np.random.default_rng(26)
    music = rng.standard_normal((2, 200_000)) * 0.4  # about 1 in 800 samples over full scale
    steps = rng.integers(-2 ** 31, 2 ** 31, (2, 50_000)) / 2.0 ** 31 + rng.choice([0.0, 2.0 ** -32], (2, 50_000))
    for x in (music, steps, np.stack([EDGES, EDGES[::-1]])):
        assert fn(x).tobytes() == _round_trip(tmp_path, x, fmt, "PCM_24").tobytes()
    nan = np.array([[0.25, np.nan], [np.nan, -0.25]])
    if fmt == "WAV":  # a FLAC file cannot be written with a NaN in it
        assert wav24(nan).tobytes() == _round_trip(tmp_path, nan, fmt, "PCM_24").tobytes()


def test_16_bit_pcm_is_a_real_round_trip_for_every_int16(tmp_path):
    x = np.arange(-32768, 32768, dtype=np.int16).reshape(2, -1)
    for fmt in ("FLAC", "WAV"):
        assert pcm16(x).tobytes() == _round_trip(tmp_path, x, fmt, "PCM_16").tobytes()


def test_a_wav_takes_the_top_bits_a_flac_rounds_half_to_even():
    x = np.array([1.5 * LSB, 2.5 * LSB, -0.5 * LSB, -1.5 * LSB, 1.0, -1.0, -0.0])
    assert list(wav24(x) / LSB) == [1, 2, -1, -2, 2 ** 23 - 1, -2 ** 23, 0]
    assert list(flac24(x) / LSB) == [2, 2, 0, -2, 2 ** 23 - 1, -2 ** 23, 0]
    assert not np.signbit(flac24(x)[[2, 6]]).any() and not np.signbit(wav24(x)[6])  # +0.0, as the files read
    assert wav24(np.array([np.nan]))[0] == -1.0 and np.isnan(flac24(np.array([np.nan]))[0])


def _task(**over) -> Task:
    return audio_task("master-t@1", **over)


N = SR // 2


def _made(n: int = N, **over) -> dict:
    t = np.arange(n) / SR
    x = np.stack([1.3 * np.sin(2 * np.pi * 440 * t), 0.3 * np.sin(2 * np.pi * 661 * t)])  # clipped at full scale
    files = {"master.wav": x, "master-16.wav": np.round(x * 20000).astype(np.int16)}
    files.update(over)
    return files


def _disk(tmp_path: Path, files: dict) -> dict:
    folder = tmp_path / "answer"
    shutil.rmtree(folder, ignore_errors=True)
    return read_answer(_task(), write_answer(files, folder), {"mix.wav": N}, sr=SR)


def _memory(files: dict) -> dict:
    return read_made(_task(), as_held(files), {"mix.wav": N}, sr=SR, source="<made>")


@pytest.mark.parametrize("n", [N, N - 300, N + 300])  # exact, padded, cut
def test_a_made_answer_reads_as_its_files_do_bit_for_bit(tmp_path, n):
    files = _made(n)
    disk, memory = _disk(tmp_path, files), _memory(files)
    assert list(memory) == list(disk) == ["master.wav", "master-16.wav"]
    for name in disk:
        assert memory[name].shape == (2, N) and memory[name].tobytes() == disk[name].tobytes()


@pytest.mark.parametrize("files, rule", [
    (_made(**{"master-16.wav": _made()["master.wav"]}), "24-bit PCM; want 16-bit PCM"),
    (_made(**{"master.wav": _made()["master.wav"][0]}), "1 channel(s); want 2 (stereo)"),
    (_made(**{"master.wav": _made(N + 960)["master.wav"]}), f"{N + 960} frames (0.520 s); want {N} (0.500 s) "
                                                            "within 480 frames"),
    ({"master-16.wav": _made()["master-16.wav"]}, "missing; want a WAV or FLAC file of that name in "),
])
def test_a_made_answer_breaks_the_folders_rules_with_the_same_error(tmp_path, files, rule):
    with pytest.raises(SubmissionError) as on_disk:
        _disk(tmp_path, files)
    with pytest.raises(SubmissionError) as in_memory:
        _memory(files)
    assert str(on_disk.value).split("): ", 1)[1].startswith(rule)
    assert str(in_memory.value).split("): ", 1)[1].startswith(rule)
    assert str(in_memory.value).startswith("<made>/master")


def test_a_made_answer_with_nan_is_the_finite_samples_error():
    x = _made()["master.wav"].copy()
    x[1, 100] = np.nan
    with pytest.raises(SubmissionError, match=r"^<made>/master.wav \(the master\): holds NaN or infinite samples"):
        _memory(_made(**{"master.wav": x}))


def _variant_like() -> Task:
    """A variant's id; inputs that go over full scale (+14 dB) and through a house effect, padded."""
    return _task(inputs=[{"name": "mix.wav", "song": "tiny", "gain_db": 14, "pad_s": 0.25},
                         {"name": "stems/bass.wav", "song": "tiny", "tracks": ["Bass"],
                          "chain": [{"device": "core.eq", "params": {"hp": 120}}]}],
                 answer=[{"name": "mix.wav", "what": "the mix", "from": ["mix.wav"]}],
                 checks=[{"id": "l", "label": "l", "kind": "loudness", "file": "mix.wav", "target": [-30, 0]},
                         {"id": "down", "label": "d", "kind": "loudnessChange", "file": "mix.wav",
                          "against": "input:mix.wav", "target": [-30, -0.1]}])


def test_a_variants_inputs_are_made_in_memory_as_the_handed_files_hold_them(tiny_audio_bench, tmp_path):
    from pytest_overdub.bench.handoff import write_inputs

    task = _variant_like()
    made = inputs_mod.load_inputs(task, tiny_audio_bench)
    assert not (tmp_path / "cache").exists()  # nothing written
    assert np.abs(made["mix.wav"]).max() == 1.0  # held at full scale, as the WAV holds it
    handed = write_inputs(task, tiny_audio_bench, tmp_path / "work")
    for name, x in made.items():
        assert inputs_mod.read_wav(handed[name]).tobytes() == x.tobytes(), name


def test_scoring_a_variants_made_answer_writes_nothing_and_reads_as_the_files(tiny_audio_bench, tmp_path, monkeypatch):
    from pytest_overdub.bench.audio.score import score_audio_task
    from pytest_overdub.bench.audio.validity import score_made

    task = _variant_like()

    def refuse(*args, **kwargs):
        raise AssertionError("a variant's scoring wrote a sound file")

    with monkeypatch.context() as m:
        m.setattr(sf, "write", refuse)
        results = [score_made(task, make, tiny_audio_bench, fresh=fresh)
                   for make, fresh in (("mud.oracle", False), ("do-nothing", False), ("mud.oracle", True))]
    assert not (tmp_path / "cache").exists()
    oracle, nothing, again = results
    assert [c.id for c in oracle.checks] == ["l", "down", "files"] and oracle.error is None
    assert oracle.checks[1].value < -0.1 and nothing.checks[1].value == 0.0  # handed back: not a bit changed
    assert [c.value for c in again.checks] == [c.value for c in oracle.checks]
    # the same answer through the files (the inputs handed over, the answer written as FLAC): the same values
    inputs_mod.ensure_inputs(task, tiny_audio_bench)
    on_disk = score_audio_task(task, make_answer(task, "mud.oracle", tiny_audio_bench, fresh=tmp_path / "a"),
                               bench=tiny_audio_bench)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [".done", "mix.flac"]
    assert [np.float64(c.value).tobytes() for c in on_disk.checks] == \
        [np.float64(c.value).tobytes() for c in oracle.checks]
