"""The mix a transcription task hands the agent: a WAV rendered from the task's song, once, then cached.

The file is 48 kHz, stereo, 24-bit PCM: the excerpt ``[from, to)`` of the heard tracks' mix (the whole
song with its tail when ``to`` is the song's end), samples clipped to ±1. It is rendered the first time it
is asked for and kept in the cache folder (``$OVERDUB_CACHE`` or ``~/.cache/pytest-overdub``), under
``inputs/<task>-<key>.wav`` where ``key`` hashes the song, the excerpt, the heard tracks and the renderer's
source, so a changed song or renderer renders anew. The cache is never committed; writes are atomic.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from ..song.model import Song, dumps_song
from ..song.timing import seconds_to_frames, song_end_beats
from .task import TranscriptionTask
from .truth import excerpt_beats, heard_ids

SR = 48000


def cache_dir() -> Path:
    root = os.environ.get("OVERDUB_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "pytest-overdub"


@lru_cache(maxsize=1)
def _renderer_hash() -> str:
    pkg = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for folder in ("render", "devices", "dsp", "song"):
        for path in sorted((pkg / folder).rglob("*.py")):
            h.update(path.relative_to(pkg).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def input_key(task: TranscriptionTask, song: Song) -> str:
    h = hashlib.sha256(_renderer_hash().encode())
    h.update(dumps_song(song).encode())
    h.update(repr((excerpt_beats(task, song), heard_ids(task, song), SR)).encode())
    return h.hexdigest()[:16]


def render_mix(task: TranscriptionTask, song: Song):
    """The excerpt's mix as a float array ``(2, n)`` at :data:`SR`."""
    import numpy as np

    from ..render.engine import render

    lo, hi = excerpt_beats(task, song)
    out = render(song, sr=SR, tracks=heard_ids(task, song))
    sec = 60.0 / song.tempo
    start = seconds_to_frames(lo * sec, sr=SR)
    stop = out.mix.shape[1] if hi >= song_end_beats(song) else seconds_to_frames(hi * sec, sr=SR)
    return np.clip(out.mix[:, start:stop], -1.0, 1.0)


def mix_wav(task: TranscriptionTask, song: Song, *, folder: Path | None = None) -> Path:
    """The path of the task's mix WAV, rendered into the cache first if it is not there."""
    import soundfile as sf

    where = (folder or cache_dir()) / "inputs"
    path = where / f"{task.id}-{input_key(task, song)}.wav"
    if path.exists():
        return path
    where.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    sf.write(str(tmp), render_mix(task, song).T, SR, subtype="PCM_24", format="WAV")
    os.replace(tmp, path)
    return path
