"""The pytest plugin on an audio task (``mixdown-sidechain-bass``): a folder submission, in either layout
(``DIR`` holding the files, or ``DIR/<task-id>/``), a bad file as one line naming it, and a song submission
refused for an audio task. Expected scores come from ``score_audio_task``, the scorer ``overdub score``
prints."""

from __future__ import annotations

import shutil
from importlib.metadata import entry_points
from pathlib import Path
from typing import Iterator

import pytest
import soundfile as sf

from pytest_overdub.bench.audio.answers import make_answer
from pytest_overdub.bench.audio.score import score_audio_task
from pytest_overdub.bench.tasks import Bench, bundled_bench

pytest_plugins = ["pytester"]

TASK = "mixdown-sidechain-bass"
PLUGIN = () if any(ep.name == "overdub" for ep in entry_points(group="pytest11")) else ("-p", "pytest_overdub.plugin")


@pytest.fixture(scope="module")
def oracle_files(tmp_path_factory) -> Iterator[tuple[Path, float]]:
    """The oracle's files (in a cache of this module's own) and the score the scorer gives them.

    Module-scoped, so its imports happen before any test's ``pytester`` snapshots ``sys.modules`` (a
    snapshot restored after the test would drop numba's modules, which cannot be imported twice); the
    plugin itself runs in a subprocess for the same reason."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OVERDUB_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        src = bundled_bench()
        folder = make_answer(src.task(TASK), "sidechain.oracle", src)
        yield folder, score_audio_task(src.task(TASK), folder, bench=src).score


@pytest.fixture
def bench(pytester: pytest.Pytester) -> Bench:
    src = bundled_bench()
    for name in ("tasks", "songs", "oracles", "near_misses"):
        (pytester.path / name).mkdir()
    shutil.copy(src.tasks_dir / f"{TASK}.json", pytester.path / "tasks")
    shutil.copy(src.root / "songs" / "night-shift.json", pytester.path / "songs")
    return Bench(pytester.path)


def _answer(dest: Path, files: Path) -> Path:
    """The oracle's bass (cached as FLAC) delivered as the WAV the task names."""
    dest.mkdir(parents=True)
    x, sr = sf.read(str(files / "bass.flac"), dtype="int32")
    sf.write(str(dest / "bass.wav"), x, sr, subtype="PCM_24")
    return dest


@pytest.mark.parametrize("layout", ["flat", "per-task"])
def test_a_folder_scores_like_overdub_score(pytester, bench, oracle_files, layout):
    folder, score = oracle_files
    sub = pytester.path / "answers"
    _answer(sub / TASK if layout == "per-task" else sub, folder)
    res = pytester.runpytest_subprocess(*PLUGIN, f"--overdub-submission={sub}", "-p", "no:cacheprovider",
                                        "--overdub-variants=0")  # the task alone, not its template's sample
    res.assert_outcomes(passed=7)  # depth, hold, recovery, between, polarity, files, score
    res.stdout.fnmatch_lines([f"{TASK}*{score:.3f}  pass", f"answers from the folder {sub} *"])


def test_a_wrong_rate_is_one_line_naming_the_file(pytester, bench, oracle_files):
    folder, _ = oracle_files
    sub = _answer(pytester.path / "answers", folder)
    x, sr = sf.read(str(sub / "bass.wav"))
    sf.write(str(sub / "bass.wav"), x, 44100)
    res = pytester.runpytest_subprocess(*PLUGIN, f"--overdub-submission={sub}", "-p", "no:cacheprovider")
    res.stdout.fnmatch_lines([f"*{sub / 'bass.wav'} (the ducked bass): sample rate 44100 Hz; want 48000 Hz*"])
    assert res.ret == pytest.ExitCode.TESTS_FAILED


def test_a_song_submission_for_an_audio_task_says_it_wants_a_folder(pytester, bench, oracle_files):
    sub = pytester.path / "ops.json"
    sub.write_text("[]")
    res = pytester.runpytest_subprocess(*PLUGIN, f"--overdub-submission={sub}", "-p", "no:cacheprovider")
    res.stdout.fnmatch_lines([f"*{TASK} is an audio task; its answer is a folder holding bass.wav*"])
