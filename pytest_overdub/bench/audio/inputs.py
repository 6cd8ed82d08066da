"""The WAV files an audio task hands the agent: rendered from the bench's songs the first time they are
needed, deterministically, and kept in the cache (docs/audio-tasks.md).

The cache is ``$OVERDUB_CACHE_DIR/audio`` when that variable is set (and not empty), else
``$XDG_CACHE_HOME/pytest-overdub/audio`` (``~/.cache/pytest-overdub/audio``). A file's name is the sha256 of everything that decides its
samples: the song's JSON, the input's own fields, the sample rate and the source of the code that renders
and processes it (song, dsp, devices, render and this module). It is never committed; deleting the cache
only costs a render. Files are 24-bit PCM WAV, 48 kHz, stereo, written to a temporary name and renamed,
so a killed run never leaves half a file. Scoring reads the inputs back from these files, so the checks
compare an answer with exactly what the agent was handed.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

SR = 48000
SUBTYPE = "PCM_24"
_CODE_DIRS = ("song", "dsp", "devices", "render")


def cache_root() -> Path:
    """The audio cache folder (created on first use)."""
    base = os.environ.get("OVERDUB_CACHE_DIR")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "pytest-overdub"
    return root / "audio"


@lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 of the source that decides an input's samples."""
    pkg = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    paths = [p for d in _CODE_DIRS for p in sorted((pkg / d).rglob("*.py"))] + [Path(__file__).resolve()]
    for p in paths:
        h.update(p.relative_to(pkg).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def input_key(inp: Any, song: Any) -> str:
    data = {"song": song.model_dump(mode="json", by_alias=True), "input": inp.model_dump(mode="json", by_alias=True),
            "sr": SR, "code": code_hash()}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def write_wav(path: Path, x: Any, *, subtype: str = SUBTYPE, sr: int = SR) -> None:
    """``x`` (channels, n) to ``path`` atomically; a folder that cannot be written is a TaskError."""
    import soundfile as sf

    from ...errors import TaskError

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fmt = "FLAC" if path.suffix == ".flac" else "WAV"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(tmp), x.T, sr, subtype=subtype, format=fmt)
        os.replace(tmp, path)
    except (OSError, RuntimeError) as exc:  # soundfile's LibsndfileError is a RuntimeError
        raise TaskError(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}; the audio cache must be "
                        "a writable folder (set OVERDUB_CACHE_DIR)") from None


def read_wav(path: Path):
    import numpy as np
    import soundfile as sf

    data, _ = sf.read(str(path), dtype="float64", always_2d=True)
    return np.ascontiguousarray(data.T)


def ensure_inputs(task: Any, bench: Any) -> dict[str, Path]:
    """Every input of ``task`` as a cached file (rendered now if it is not there yet): name -> path."""
    out, renders = {}, {}
    for inp in task.inputs:
        song = bench.song(inp.song)
        path = cache_root() / "inputs" / f"{input_key(inp, song)}.wav"
        if not path.exists():
            if inp.song not in renders:
                renders[inp.song] = _render_song(song)
            write_wav(path, _process(inp, song, renders[inp.song]))
        out[inp.name] = path
    return out


def load_inputs(task: Any, bench: Any) -> dict[str, Any]:
    """Every input of ``task`` as a float64 (2, n) array, read from its cached file (in a scorer, read once
    per process: :data:`INPUT_MEMO`)."""
    return {name: _read_input(p) for name, p in ensure_inputs(task, bench).items()}


#: Inputs a scorer process has read, by file name: the sha256 of everything that decides the samples, so a
#: name never stands for other samples. An answer's maker and its scoring read the same inputs, and each of
#: a variant's rules reads them again; they are read from disk once. Read-only arrays (a maker cannot change
#: what the next one reads); at most :data:`INPUT_MEMO_BYTES`, the oldest dropped first; kept only while the
#: scorer runtime is active (a library call keeps nothing), emptied with ``INPUT_MEMO.clear()``.
INPUT_MEMO: dict[str, Any] = {}
INPUT_MEMO_BYTES = 192 << 20


def _read_input(path: Path):
    from ... import runtime

    if not runtime.active():
        return read_wav(path)
    key = path.name
    x = INPUT_MEMO.pop(key, None)
    if x is None:
        x = read_wav(path)
        x.setflags(write=False)
    INPUT_MEMO[key] = x  # the newest last
    while sum(a.nbytes for a in INPUT_MEMO.values()) > INPUT_MEMO_BYTES and len(INPUT_MEMO) > 1:
        del INPUT_MEMO[next(iter(INPUT_MEMO))]
    return x


def _render_song(song: Any) -> Any:
    from ...render import render

    return render(song, sr=SR, trust_kernels=True)


def _process(inp: Any, song: Any, r: Any):
    import numpy as np

    from ...dsp.levels import db_to_gain
    from ...errors import TaskError

    if inp.tracks is None:
        x = np.array(r.mix, dtype=np.float64)
    else:
        by_name = {t.name: t.id for t in song.tracks} | {t.id: t.id for t in song.tracks}
        unknown = [t for t in inp.tracks if t not in by_name]
        if unknown:
            raise TaskError(f"input {inp.name}: tracks {unknown} are not in song {inp.song!r} "
                            f"(tracks: {', '.join(t.name for t in song.tracks)})")
        x = sum(np.asarray(r.stems[by_name[t]], dtype=np.float64) for t in inp.tracks)
    for ins in inp.chain:
        x = run_effect(x, ins.device, ins.params, tempo_bpm=song.tempo)
    x = x * db_to_gain(inp.gain_db)
    if inp.pad_s:
        x = np.concatenate([x, np.zeros((2, int(round(inp.pad_s * SR))))], axis=1)
    return x


def run_effect(x: Any, device: str, params: dict[str, float], *, tempo_bpm: float = 120.0, sr: int = SR):
    """``x`` through one house effect (params resolved like an insert's), its latency taken out, same length."""
    import numpy as np

    from ...devices import house_class, house_spec
    from ...errors import TaskError

    spec, cls = house_spec(device), house_class(device)
    if spec is None or cls is None or spec.kind != "effect":
        raise TaskError(f"{device!r} is not a house effect")
    resolved = spec.resolve(params)
    fx = cls(sr=sr, tempo_bpm=tempo_bpm, seed=0, params=resolved)
    lat = int(fx.latency_frames)
    src = np.concatenate([x, np.zeros((x.shape[0], lat))], axis=1) if lat else x
    y = np.asarray(fx.process(np.ascontiguousarray(src), resolved), dtype=np.float64)
    return np.ascontiguousarray(y[:, lat:])
