"""The WAV files an audio task hands the agent: rendered from the bench's songs the first time they are
needed, deterministically, and kept in the cache (docs/audio-tasks.md).

The cache is ``$OVERDUB_CACHE_DIR/audio`` when that variable is set (and not empty), else
``$XDG_CACHE_HOME/pytest-overdub/audio`` (``~/.cache/pytest-overdub/audio``). A file's name is the sha256 of everything that decides its
samples: the song's JSON, the input's own fields, the sample rate and the source of the code that renders
and processes it (song, dsp, devices, render and this module). It is never committed; deleting the cache
only costs a render. Files are 24-bit PCM WAV, 48 kHz, stereo, written to a temporary name and renamed,
so a killed run never leaves half a file. Scoring a published task reads the inputs back from these files,
so the checks compare an answer with exactly what the agent was handed.

A variant's inputs (``<task>@<seed>``: thousands of them, 10-25 MB a file) are written only when handed to an
agent (:mod:`..handoff`); scoring makes them in memory (:func:`made_inputs`), quantised exactly as the WAV
holds them (:mod:`.pcm`), so an answer is still compared with what the agent was handed, bit for bit.
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


def input_path(inp: Any, song: Any) -> Path:
    """Where input ``inp`` of ``song`` is cached: named by :func:`input_key`."""
    return cache_root() / "inputs" / f"{input_key(inp, song)}.wav"


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
    """Every input of ``task`` as a cached file (rendered now if it is not there yet): name -> path. For
    handing the files to an agent, and for scoring a published task; a variant's scoring never writes them
    (:func:`load_inputs`)."""
    out, renders = {}, {}
    for inp in task.inputs:
        song = bench.song(inp.song)
        path = input_path(inp, song)
        if not path.exists():
            if inp.song not in renders:
                renders[inp.song] = _render_song(song)
            write_wav(path, _process(inp, song, renders[inp.song]))
        out[inp.name] = path
    return out


def load_inputs(task: Any, bench: Any) -> dict[str, Any]:
    """Every input of ``task`` as a float64 (2, n) array, exactly what its file holds or would hold. A
    published task's are read from their cached files; a variant's (``<task>@<seed>``) are made in memory
    (:func:`made_inputs`) and never written, or read from the file when one was written for an agent. In a
    scorer each is made or read once per process (:data:`INPUT_MEMO`)."""
    if "@" in task.id:
        return made_inputs(task, bench)
    return _remembered([(name, p.name, lambda p=p: read_wav(p)) for name, p in ensure_inputs(task, bench).items()])


def made_inputs(task: Any, bench: Any) -> dict[str, Any]:
    """Every input of ``task`` made in memory: rendered, processed and quantised as its 24-bit WAV would
    hold it (:func:`.pcm.wav24`), nothing written (a file already in the cache is read instead: the same
    samples, bit for bit). Read-only arrays, kept in :data:`INPUT_MEMO` by their file names in a scorer."""
    renders: dict[str, Any] = {}

    def make(inp: Any, song: Any, path: Path):
        from .pcm import wav24

        if path.exists():
            return read_wav(path)
        if inp.song not in renders:
            renders[inp.song] = _render_song(song)
        return wav24(_process(inp, song, renders[inp.song]))

    entries = []
    for inp in task.inputs:
        song = bench.song(inp.song)
        path = input_path(inp, song)
        entries.append((inp.name, path.name, lambda inp=inp, song=song, path=path: make(inp, song, path)))
    return _remembered(entries)


#: Inputs a scorer process has made or read, by file name: the sha256 of everything that decides the
#: samples, so a name never stands for other samples. An answer's maker and its scoring read the same
#: inputs, and each of a variant's rules reads them again; they are read from disk (or made) once.
#: Read-only arrays (a maker cannot change what the next one reads); at most :data:`INPUT_MEMO_BYTES`, the
#: oldest dropped first, but never an input of the task just loaded (a variant's four 50 MB stems would
#: otherwise be rendered again by each rule); kept only while the scorer runtime is active (a library call
#: keeps nothing), emptied with ``INPUT_MEMO.clear()``.
INPUT_MEMO: dict[str, Any] = {}
INPUT_MEMO_BYTES = 192 << 20


def _remembered(entries: list[tuple[str, str, Any]]) -> dict[str, Any]:
    """``{name: array}`` for ``(name, file name, make)`` entries: each array made by ``make()`` unless
    :data:`INPUT_MEMO` holds its file name, read-only."""
    from ... import runtime

    if not runtime.active():
        out = {}
        for name, _, make in entries:
            out[name] = make()
            out[name].setflags(write=False)
        return out
    for _, key, make in entries:
        x = INPUT_MEMO.pop(key, None)
        if x is None:
            x = make()
            x.setflags(write=False)
        INPUT_MEMO[key] = x  # the newest last
    keep = {key for _, key, _ in entries}
    for key in [k for k in INPUT_MEMO if k not in keep]:
        if sum(a.nbytes for a in INPUT_MEMO.values()) <= INPUT_MEMO_BYTES:
            break
        del INPUT_MEMO[key]
    return {name: INPUT_MEMO[key] for name, key, _ in entries}


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
