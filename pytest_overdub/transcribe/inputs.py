"""The mix a transcription task hands the agent: a WAV rendered from the task's song, once, then cached.

The file is 48 kHz, stereo, 24-bit PCM: the excerpt ``[from, to)`` of the heard tracks' mix (through the
song's master; the whole song with its tail when ``to`` is the song's end), samples clipped to ±1. It is
rendered the first time it is asked for and kept in the audio tasks' cache (:mod:`pytest_overdub.bench.audio.
inputs`: ``$OVERDUB_CACHE_DIR/audio``, else ``~/.cache/pytest-overdub/audio``) as ``inputs/<task>-<key>.wav``;
``key`` hashes the song, the excerpt, the heard tracks and the source of the code that renders it, so a
changed song or renderer renders anew. The cache is never committed; writes are atomic. An oracle run that
is given ``stems`` also gets each part's tracks alone over the same excerpt, ``inputs/<task>-<part>-<key>.wav``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..bench.audio.inputs import SR, cache_root, code_hash, write_wav
from ..song.model import Song, dumps_song
from ..song.timing import seconds_to_frames, song_end_beats
from .task import TranscriptionTask
from .truth import excerpt_beats, heard_ids, part_track_ids


def input_key(task: TranscriptionTask, song: Song, *, tracks: list[str] | None = None) -> str:
    """The cache key of the mix (``tracks`` None: the heard tracks) or of a stem (``tracks``: its ids)."""
    h = hashlib.sha256(code_hash().encode())
    h.update(dumps_song(song).encode())
    heard = heard_ids(task, song) if tracks is None else ["stem", *tracks]
    h.update(repr((excerpt_beats(task, song), heard, SR)).encode())
    return h.hexdigest()[:16]


def render_mix(task: TranscriptionTask, song: Song, *, tracks: list[str] | None = None):
    """The excerpt's mix as a float array ``(2, n)`` at :data:`SR` (``tracks``: those track ids alone)."""
    import numpy as np

    from ..render.engine import render

    lo, hi = excerpt_beats(task, song)
    out = render(song, sr=SR, tracks=heard_ids(task, song) if tracks is None else tracks)
    sec = 60.0 / song.tempo
    start = seconds_to_frames(lo * sec, sr=SR)
    stop = out.mix.shape[1] if hi >= song_end_beats(song) else seconds_to_frames(hi * sec, sr=SR)
    return np.clip(out.mix[:, start:stop], -1.0, 1.0)


def mix_wav(task: TranscriptionTask, song: Song) -> Path:
    """The path of the task's mix WAV, rendered into the cache first if it is not there."""
    path = cache_root() / "inputs" / f"{task.id}-{input_key(task, song)}.wav"
    if not path.exists():
        write_wav(path, render_mix(task, song))
    return path


def stem_wav(task: TranscriptionTask, song: Song, part: str) -> Path:
    """The path of one part's stem (an oracle run's ``stems``): the excerpt of that part's tracks alone,
    through the song's master, as the mix is; rendered into the cache first if it is not there."""
    tracks = part_track_ids(task, song, part)
    path = cache_root() / "inputs" / f"{task.id}-{part}-{input_key(task, song, tracks=tracks)}.wav"
    if not path.exists():
        write_wav(path, render_mix(task, song, tracks=tracks))
    return path
