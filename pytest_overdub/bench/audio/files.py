"""Reading an audio answer: a directory holding the files the task's ``answer`` names (docs/audio-tasks.md).

Where the files are: ``DIR/<task-id>/`` when that folder exists, else ``DIR`` itself. A file named
``x.wav`` may also be delivered as ``x.flac`` (and the other way round). Accepted: WAV (plain,
WAVE_FORMAT_EXTENSIBLE or RF64) or FLAC, 16-, 24- or 32-bit PCM, 32- or 64-bit float, read with soundfile; the sample rate, channel count (2) and length
(within 10 ms; shorter is padded with silence, longer is cut, before measuring) must be the inputs'. A file
whose ``bits`` are named must be that PCM depth. Any of these wrong is one
:class:`~pytest_overdub.errors.SubmissionError` naming the file, what it is, what it has and what is
allowed; nothing is resampled, remixed or guessed. A variant's made answer is read by the same rules from
memory (:func:`read_made`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import SubmissionError

SUBTYPES = {"PCM_16": "16-bit PCM", "PCM_24": "24-bit PCM", "PCM_32": "32-bit PCM", "FLOAT": "32-bit float",
            "DOUBLE": "64-bit float"}
FORMATS = ("WAV", "WAVEX", "RF64", "FLAC")  # WAVEX: WAVE_FORMAT_EXTENSIBLE, what ffmpeg writes for 24-bit
CHANNELS = 2
LENGTH_TOLERANCE_S = 0.01


def answer_folder(path: Path, task_id: str) -> Path:
    """``path/<task-id>/`` when it is a folder, else ``path``."""
    sub = Path(path) / task_id
    return sub if sub.is_dir() else Path(path)


def expected_frames(answer: Any, input_frames: dict[str, int], *, sr: int) -> int:
    """The length of an answer file: its source's, or its sources' end to end with the gaps between."""
    return sum(input_frames[n] for n in answer.from_) + int(round(answer.gap_s * sr)) * (len(answer.from_) - 1)


def _find(folder: Path, name: str) -> Path | None:
    p = folder / name
    if p.is_file():
        return p
    other = p.with_suffix(".flac" if p.suffix == ".wav" else ".wav")
    return other if other.is_file() else None


def read_answer(task: Any, folder: Path, input_frames: dict[str, int], *, sr: int) -> dict[str, Any]:
    """Every answer file of ``task`` in ``folder`` as a float64 (2, n) array of the expected length."""
    if not Path(folder).is_dir():
        raise SubmissionError(f"{folder}: not a folder; the answer to {task.id} is a folder holding "
                              f"{', '.join(a.name for a in task.answer)}")
    return {a.name: read_one(a, folder, expected_frames(a, input_frames, sr=sr), sr=sr) for a in task.answer}


def read_one(answer: Any, folder: Path, frames: int, *, sr: int):
    import numpy as np
    import soundfile as sf

    path = _find(Path(folder), answer.name)
    where = f"{Path(folder) / answer.name} ({answer.what})"
    if path is None:
        raise SubmissionError(f"{where}: missing; want a WAV or FLAC file of that name in {folder}")
    where = f"{path} ({answer.what})"
    try:
        info = sf.info(str(path))
    except Exception as exc:  # soundfile raises its own error types for a file it cannot parse
        raise SubmissionError(f"{where}: not a WAV or FLAC file soundfile can read ({exc})") from None
    if info.format not in FORMATS:
        raise SubmissionError(f"{where}: format {info.format}; want WAV (plain, extensible or RF64) or FLAC")
    if info.subtype not in SUBTYPES:
        raise SubmissionError(f"{where}: sample format {info.subtype}; want one of {', '.join(SUBTYPES.values())}")
    check_form(where, answer, subtype=info.subtype, samplerate=info.samplerate, channels=info.channels,
               frames=info.frames, want_frames=frames, sr=sr)
    data, _ = sf.read(str(path), dtype="float64", always_2d=True)
    return fitted(where, np.ascontiguousarray(data.T), frames)


def check_form(where: str, answer: Any, *, subtype: str, samplerate: int, channels: int, frames: int,
               want_frames: int, sr: int) -> None:
    """The rules on what a file holds (its depth when ``bits`` are named, rate, channels, length within
    :data:`LENGTH_TOLERANCE_S`): a file's and a made answer's (:func:`read_made`) alike."""
    if answer.bits is not None and subtype != f"PCM_{answer.bits}":
        raise SubmissionError(f"{where}: {SUBTYPES[subtype]}; want {answer.bits}-bit PCM")
    if samplerate != sr:
        raise SubmissionError(f"{where}: sample rate {samplerate} Hz; want {sr} Hz, the inputs' (no resampling)")
    if channels != CHANNELS:
        raise SubmissionError(f"{where}: {channels} channel(s); want {CHANNELS} (stereo)")
    tol = int(round(LENGTH_TOLERANCE_S * sr))
    if abs(frames - want_frames) > tol:
        raise SubmissionError(f"{where}: {frames} frames ({frames / sr:.3f} s); want {want_frames} "
                              f"({want_frames / sr:.3f} s) within {tol} frames")


def fitted(where: str, x: Any, frames: int):
    """``x`` (2, n) with finite samples, padded with silence or cut to ``frames``."""
    import numpy as np

    if not np.isfinite(x).all():
        raise SubmissionError(f"{where}: holds NaN or infinite samples; want finite samples")
    if x.shape[1] < frames:
        x = np.concatenate([x, np.zeros((CHANNELS, frames - x.shape[1]))], axis=1)
    return x[:, :frames]


def read_made(task: Any, held: dict[str, tuple[str, Any]], input_frames: dict[str, int], *, sr: int,
              source: str) -> dict[str, Any]:
    """A made answer read as :func:`read_answer` reads a folder, without the files: ``held`` is what each file
    would hold, ``{name: (subtype, float64 array)}`` (:func:`.answers.as_held`), under the same rules with the
    same errors, ``source`` standing for the folder. A made array with NaN fails the finite-samples rule
    (its FLAC file could not be written)."""
    out = {}
    for a in task.answer:
        name = a.name if a.name in held else _other_name(a.name)
        if name not in held:
            raise SubmissionError(f"{source}/{a.name} ({a.what}): missing; want a WAV or FLAC file of that name "
                                  f"in {source}")
        where, (subtype, x) = f"{source}/{name} ({a.what})", held[name]
        frames = expected_frames(a, input_frames, sr=sr)
        check_form(where, a, subtype=subtype, samplerate=sr, channels=x.shape[0] if x.ndim == 2 else 1,
                   frames=x.shape[-1], want_frames=frames, sr=sr)
        out[a.name] = fitted(where, x, frames)
    return out


def _other_name(name: str) -> str:
    """``x.flac`` for ``x.wav`` and the other way round (the names :func:`_find` tries)."""
    p = Path(name)
    return p.with_suffix(".flac" if p.suffix == ".wav" else ".wav").as_posix()
