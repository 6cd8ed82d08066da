"""The canonical offline renderer (docs/rendering.md): a song in, a stereo float64 mix and its stems out.

The chain, per heard track::

    notes -> instrument -> inserts in order -> track gain -> balance pan      (= the track's stem)

then ``sum of stems -> master inserts -> master gain -> master clip``.

Conventions, and the choices this module makes (docs/rendering.md states them for users):

* **Float64, stereo ``(2, n)``, 48 kHz canonical.** ``n`` = the song's end (rounded up to a bar) plus a
  1.5 s tail (:mod:`pytest_overdub.song.timing`). Frames are found by rounding half up.
* **Which tracks are heard.** ``tracks=None``: the whole mix, as :func:`.heard.heard_tracks` (the one rule
  the bench's checks share) says: if any track is soloed only soloed tracks play, and a muted track never
  plays (mute wins over solo). ``tracks=[ids or names]``: exactly those tracks, mute and solo ignored (an
  export; the bench narrows a scope to the heard tracks first). ``Render.stems`` holds the rendered tracks.
* **Notes.** A note at ``clip.start + note.t`` beats; a note with ``t >= clip.length`` is not heard; its
  heard duration is ``min(d, length - t)``; a muted clip is skipped. ``NoteEvent.index`` is the note's
  position among all the track's notes (every clip, in clip order, muted or not), so it is stable. Notes
  reach the instrument sorted by onset, then index.
* **Clip gain** scales the instrument's *output* for that clip's notes, never the velocity (velocity
  changes timbre). Notes are grouped by clip gain; with one group (the common case, all clips at 0 dB)
  the instrument renders once; with several, a fresh instrument (same seed) renders each group and the
  scaled groups are summed. The price, stated: a mono/legato instrument does not glide across clips of
  different gain.
* **Audio clips** play ``song.assets[clip.asset]`` (base64 WAV/FLAC, decoded with soundfile; mono is
  doubled, extra channels dropped; resampled to ``sr`` with ``scipy.signal.resample_poly``) from
  ``clip.start`` for ``clip.length`` beats, starting ``clip.offset`` seconds into the asset, scaled by
  the clip gain, then through the track's inserts.
* **Automation** (``auto``: ``{param: [{t, v}]}``, linear between points, held before the first and after
  the last). Instruments read their params at each note's onset (``NoteEvent.params``). Effects are
  called per *segment*: a device with automation has its track cut at every automation point and, inside
  a ramp, every :data:`SEGMENT_FRAMES` frames; each segment is processed with the param values at the
  segment's centre (a staircase approximation of the ramp, at most 8192 frames = 171 ms per step at
  48 kHz). A device without automation is called once with the whole track, except that a chain of
  house effects none of which is automated runs *streamed*: block by block (:data:`STREAM_BLOCK_FRAMES`,
  cut where the devices cut their own input), each block through the whole chain before the next, into
  one output array (cache-sized blocks, no whole-track temporary per device). Devices carry their state
  between calls, so cutting never changes an unautomated sound; a streamed chain that faults, or whose
  output holds a NaN or inf (checked once per block, as it is written out), is run again unstreamed with
  every device's output checked, so the fault rules below are the same.
* **Params** of house devices are the spec's defaults overlaid with the stored values, clamped and
  snapped (:meth:`DeviceSpec.resolve`); an unknown key or a non-number is an ``error`` warning and that
  key is dropped. Song-defined devices: declared params are clamped to their declared range, undeclared
  params are an ``error`` warning and dropped, as for house devices.
* **Seeds**: the first 8 bytes (big-endian) of ``sha256("device_id|track_id")``; master inserts use the
  track id ``"master"``. Never Python's ``hash()``.
* **Latency**: an effect's ``latency_frames`` (read once, after it is built) is compensated: its input is
  padded with that many zeros at the end and its output shifted earlier by that many frames.
* **Faults** never stop a render; they become :class:`RenderWarning`\\ s:
  ``bypass`` (unknown device id: an instrument bypassed is a silent track, an insert passes through),
  ``fault`` (the device raised while building or processing, or returned the wrong shape: the track goes on
  without it), ``error`` (NaN/inf output, replaced by the device's input / silence; a bad param).
* Devices get their input as a read-only view: a device must return a new array, not write in place.
"""

from __future__ import annotations

import base64
import contextlib
import io
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from ..devices import house_class
from ..devices.params import real_number
from ..devices.base import Effect, Instrument, NoteEvent
from ..dsp.compiled import all_finite, copy_scaled, over_indices
from ..dsp.dynamics import balance_gains
from ..dsp import levels
from ..dsp.signals import device_seed
from ..errors import DeviceError, RenderError
from ..song.limits import LIMITS, check_limits
from ..song.model import Clip, Insert, Song, Track, song_from_data
from ..song.timing import Timeline
from .heard import heard_tracks, named_tracks
from .stems import StemCache, StemWarning, default_cache, stem_key

#: Longest segment an automated effect is processed in while a param ramps.
SEGMENT_FRAMES = 8192
#: Block length of a streamed insert chain; the same as the house effects' own blocks
#: (:data:`~pytest_overdub.devices.dynamics.BLOCK_FRAMES`), so streaming cuts where they cut.
STREAM_BLOCK_FRAMES = 1 << 15
#: Track or master gain at or below this is silence.
SILENCE_DB = -120.0
#: Soft clip: exactly linear up to -3 dBFS, a tanh knee above that approaches -0.5 dBFS.
SOFT_CLIP_LINEAR = 10.0 ** (-3.0 / 20.0)
SOFT_CLIP_CEILING = 10.0 ** (-0.5 / 20.0)


@dataclass(frozen=True)
class RenderWarning:
    """``kind`` is "bypass" | "fault" | "error"; ``where`` names the device
    (``"tracks[2] Keys insert fx_ab12 core.verb"``); ``message`` says what happened."""

    kind: str
    where: str
    message: str


@dataclass(frozen=True, eq=False)
class Render:
    """The result of :func:`render`. ``mix`` is ``(2, n)`` after the master chain; ``stems`` maps each
    heard track's id to its ``(2, n)`` post-fader, post-pan, pre-master stem (read-only arrays)."""

    mix: np.ndarray
    stems: dict[str, np.ndarray]
    sr: int
    timeline: Timeline
    warnings: tuple[RenderWarning, ...]


# --- small pure helpers -------------------------------------------------------------------------

def db_to_gain(gain_db: float) -> float:
    """Linear gain of ``gain_db``; :data:`SILENCE_DB` or lower is exactly 0."""
    return 0.0 if gain_db <= SILENCE_DB else levels.db_to_gain(gain_db)


def soft_clip(x: np.ndarray) -> np.ndarray:
    """The master soft clip: ``y = x`` for ``|x| <= a`` (a = -3 dBFS), else
    ``sign(x) * (a + (c - a) * tanh((|x| - a) / (c - a)))`` with c = -0.5 dBFS. C1-continuous at ``a``
    (slope 1 on both sides); never above ``c`` (it reaches ``c`` only where tanh rounds to 1)."""
    return _soft_clip_in_place(np.array(x, dtype=np.float64, copy=True))


def _soft_clip_in_place(y: np.ndarray) -> np.ndarray:
    """:func:`soft_clip` of a float64 ``y`` (channels, n), written into ``y``. A compiled scan finds the
    samples above the knee (a mastered mix has none or few); only those go through numpy's ``tanh``,
    gathered, with the same arithmetic as the whole-array formula (each sample's value depends on it alone)."""
    if y.ndim > 2:
        for part in y:
            _soft_clip_in_place(part)
        return y
    a, c = SOFT_CLIP_LINEAR, SOFT_CLIP_CEILING
    for row in (y,) if y.ndim == 1 else y:
        over = over_indices(row, a)
        if over.size:
            v = row[over]
            row[over] = np.sign(v) * (a + (c - a) * np.tanh((np.abs(v) - a) / (c - a)))
    return y


# --- params -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Table:
    """How one device reads params: its defaults and a coercion that raises DeviceError."""

    defaults: Mapping[str, float]
    coerce: Callable[[str, Any], float]


def _house_table(cls: type) -> _Table:
    spec = getattr(cls, "spec", None)
    return _Table({}, _plain_number) if spec is None else _spec_table(spec)


def _spec_table(spec) -> _Table:
    """Defaults and :meth:`Param.coerce` (clamping): the one reading of a param value, for house and
    song-defined devices alike."""
    return _Table(spec.defaults(), lambda key, value: spec.param(key).coerce(value, clamp=True))


def _plain_number(key: str, value: Any) -> float:
    try:
        return real_number(value)
    except DeviceError as exc:
        raise DeviceError(f"{key}: {exc}") from None


@dataclass(frozen=True)
class _Params:
    """A device's resolved static params and its usable automation (beats, values per key)."""

    table: _Table
    base: Mapping[str, float]
    auto: Mapping[str, tuple[np.ndarray, np.ndarray]]

    def at_beats(self, beats: np.ndarray) -> dict[str, np.ndarray]:
        """Each automated param's raw (unclamped) value at the given beats."""
        return {k: np.interp(beats, ts, vs) for k, (ts, vs) in self.auto.items()}

    def resolved(self, raw: Mapping[str, float]) -> dict[str, float]:
        out = dict(self.base)
        for k, v in raw.items():
            out[k] = self.table.coerce(k, float(v))
        return out


def _resolve_params(table: _Table, params: Mapping[str, Any], auto, warn: Callable[[str, str], None]
                    ) -> _Params:
    base = dict(table.defaults)
    for key, value in params.items():
        try:
            base[key] = table.coerce(key, value)
        except DeviceError as exc:
            warn("error", f"param ignored: {exc}")
    usable: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for key, points in auto.items():
        if not points:
            continue
        pts = sorted(points, key=lambda p: p.t)
        try:
            table.coerce(key, float(pts[0].v))
        except DeviceError as exc:
            warn("error", f"automation ignored: {exc}")
            continue
        usable[key] = (np.array([p.t for p in pts], dtype=np.float64),
                       np.array([p.v for p in pts], dtype=np.float64))
    return _Params(table, MappingProxyType(base), MappingProxyType(usable))


# --- building devices ---------------------------------------------------------------------------

@dataclass
class _Ctx:
    """What every device build of one render shares."""

    song: Song
    tl: Timeline
    trusted: bool
    overrides: Mapping[str, type]


@dataclass(frozen=True)
class _Slot:
    """A device ready to build (again): ``build()`` returns a fresh instance with the same seed."""

    build: Callable[[], Any]
    params: _Params
    house: bool = False  # a house device (not a test override, not song-defined): may be streamed


def _lookup(dev_id: str, role: str, ctx: _Ctx, track_id: str, raw_params, auto,
            warn: Callable[[str, str], None]) -> _Slot | None:
    """Find ``dev_id`` (test overrides, house, song-defined); a bypass/error warning and None if unusable."""
    seed = device_seed(dev_id, track_id)
    common = dict(sr=ctx.tl.sr, tempo_bpm=ctx.tl.tempo_bpm, seed=seed)
    try:
        cls = ctx.overrides.get(dev_id) or house_class(dev_id)
    except Exception as exc:  # a house module that fails to import faults its devices, not the render
        warn("fault", f"failed to load {dev_id}: {type(exc).__name__}: {exc}")
        return None
    if cls is not None:
        base_cls = Instrument if role == "instrument" else Effect
        if not issubclass(cls, base_cls):
            warn("error", f"{dev_id} is not an {role}; bypassed")
            return None
        params = _resolve_params(_house_table(cls), raw_params, auto, warn)
        return _Slot(lambda: cls(params=dict(params.base), **common), params, dev_id not in ctx.overrides)
    defn = ctx.song.devices.get(dev_id)
    if defn is None:
        warn("bypass", f"unknown device {dev_id!r}; bypassed")
        return None
    if defn.kind != role:
        warn("error", f"song-defined device {dev_id!r} is an {defn.kind}, used as an {role}; bypassed")
        return None
    params = _resolve_params(_spec_table(defn.spec), raw_params, auto, warn)
    data = defn.model_dump(mode="json", by_alias=True)

    def build():
        from . import kernels  # lazy: the sandbox machinery loads only for songs that need it
        return kernels.build_kernel_device(data, trusted=ctx.trusted, params=dict(params.base), **common)

    return _Slot(build, params)


def _try_build(slot: _Slot, warn: Callable[[str, str], None]):
    try:
        return slot.build()
    except Exception as exc:  # any fault in a device is a warning, never a crashed render
        warn("fault", f"failed to build: {type(exc).__name__}: {exc}")
        return None


# --- effects ------------------------------------------------------------------------------------

def automation_segments(params: _Params, tl: Timeline, n_frames: int) -> list[tuple[int, int]]:
    """Cut ``[0, n_frames)`` at every automation point and every SEGMENT_FRAMES inside a ramp."""
    cuts = {0, n_frames}
    for ts, vs in params.auto.values():
        frames = [tl.beats_to_frames(t) for t in ts]
        cuts.update(f for f in frames if 0 < f < n_frames)
        for i in range(len(frames) - 1):
            if vs[i] != vs[i + 1]:
                cuts.update(f for f in range(frames[i] + SEGMENT_FRAMES, frames[i + 1], SEGMENT_FRAMES)
                            if 0 < f < n_frames)
    edges = sorted(cuts)
    return list(zip(edges[:-1], edges[1:]))


def _checked(out: Any, n: int, what: str) -> np.ndarray:
    """The device's output as float64 (2, n); RenderError (-> fault) on a wrong shape."""
    y = np.asarray(out, dtype=np.float64)
    if y.shape != (2, n):
        raise RenderError(f"{what} returned shape {getattr(out, 'shape', type(out).__name__)}, "
                          f"expected (2, {n})")
    return y


def run_effect(device, x: np.ndarray, params: _Params, tl: Timeline) -> np.ndarray:
    """Process ``x`` (2, n) through ``device`` with automation segments and latency compensation.
    Raises whatever the device raises, and RenderError for a wrong shape."""
    n = x.shape[1]
    latency = max(int(getattr(device, "latency_frames", 0) or 0), 0)
    src = np.concatenate([x, np.zeros((2, latency))], axis=1) if latency else x
    src = src.view()
    src.setflags(write=False)
    total = n + latency
    segments = automation_segments(params, tl, total) if params.auto else [(0, total)]
    if len(segments) == 1:
        y = _checked(device.process(src, params.base), total, "process")
    else:
        y = np.empty((2, total))
        centres = tl.frames_to_beats(1.0) * (np.array([a + b for a, b in segments]) / 2.0)
        raw = params.at_beats(centres)
        for i, (a, b) in enumerate(segments):
            seg_params = params.resolved({k: v[i] for k, v in raw.items()})
            y[:, a:b] = _checked(device.process(src[:, a:b], seg_params), b - a, "process")
    return y[:, latency:] if latency else y


def _effect_chain(x: np.ndarray, inserts: Iterable[Insert], ctx: _Ctx, track_id: str,
                  warnings: list[StemWarning], *, scale: np.ndarray | None = None,
                  again: Callable[[], np.ndarray] | None = None) -> np.ndarray:
    """``x`` through the enabled ``inserts`` in order, then times ``scale`` ((2, 1) gains, or None): a
    fresh array, or ``x`` itself when ``again`` is given. House devices without automation run streamed (:func:`_stream_chain`); any other chain,
    or a streamed one that faults, runs device by device over the whole track.

    ``again``: when given, ``x`` is the caller's to overwrite and ``again()`` makes it anew: the stream
    then writes its output over ``x`` (no second whole-track array; with no insert to run, ``x`` is scaled
    in place), and if a device faults midway the whole-track run starts from ``again()``."""
    active = [ins for ins in inserts if ins.on]
    x_in = x
    if active and max(x.shape[1], 0) > STREAM_BLOCK_FRAMES:
        local: list[StemWarning] = []
        in_place = again is not None and _disposable(x)
        try:
            y = _stream_chain(x, active, ctx, track_id, local, scale, out=x if in_place else None)
        except _StreamFault:
            y = None
            if in_place:  # the blocks before the fault were written over the input: make it again
                x = x_in = again()
        if y is not None:
            warnings.extend(local)
            return y
    for ins in active:
        where = f"insert {ins.id} {ins.device}"
        warn = _warner(warnings, where)
        slot = _lookup(ins.device, "effect", ctx, track_id, ins.params, ins.auto, warn)
        device = _try_build(slot, warn) if slot is not None else None
        if device is None:
            continue
        try:
            y = run_effect(device, x, slot.params, ctx.tl)
        except Exception as exc:
            warn("fault", f"failed while processing: {type(exc).__name__}: {exc}; passed through")
            continue
        finally:
            _close(device)
        if not all_finite(y):
            warn("error", "produced NaN or inf; passed through")
            continue
        x = y
    if scale is None:
        return x
    if (x is not x_in or again is not None) and _disposable(x):  # in place: no fresh array (page faults)
        return np.multiply(x, scale, out=x)
    return x * scale


def _disposable(y: np.ndarray) -> bool:
    """Whether a device's output may be overwritten: a writeable float64 (2, n) array that owns its
    memory (not a view of the device's input or of a read-only memo). The device that returned it is
    closed and never called again, so nothing reads the old samples."""
    return (y.base is None and y.flags.writeable and y.flags.c_contiguous and y.dtype == np.float64
            and y.ndim == 2 and y.shape[0] == 2)


class _StreamFault(Exception):
    """A streamed device raised or returned a wrong shape, or the chain's output held a NaN or inf: redo the
    chain unstreamed (fresh devices, each output checked, so the warning names the device)."""


class _Stage:
    """One device of a streamed chain. Its input is cut into blocks of :data:`STREAM_BLOCK_FRAMES` counted
    from the start of its own input (the cuts a whole-track call makes inside the device), with
    ``latency`` zeros appended at the end and the first ``latency`` output frames dropped (as
    :func:`run_effect` does), so the samples are those of one whole-track call."""

    def __init__(self, device, params: Mapping[str, float]):
        self.device = device
        self.params = params
        self.latency = max(int(getattr(device, "latency_frames", 0) or 0), 0)
        self.skip = self.latency
        self.pending: np.ndarray | None = None
        # a device that would return its input unchanged (a flat EQ) is not called: its input goes on
        through = getattr(device, "passes_through", None)
        self.through = self.latency == 0 and callable(through) and bool(through(params))

    def feed(self, x: np.ndarray, *, final: bool) -> list[np.ndarray]:
        if self.through:
            return [x] if x.shape[1] else []
        parts = [a for a in (self.pending, x) if a is not None and a.shape[1]]
        if final and self.latency:
            parts.append(np.zeros((x.shape[0], self.latency)))
        buf = parts[0] if len(parts) == 1 else (np.concatenate(parts, axis=1) if parts else x[:, :0])
        n, pos, out = buf.shape[1], 0, []
        while n - pos >= STREAM_BLOCK_FRAMES or (final and pos < n):
            e = min(n, pos + STREAM_BLOCK_FRAMES)
            block = buf[:, pos:e].view()
            block.setflags(write=False)
            try:
                y = _checked(self.device.process(block, self.params), e - pos, "process")
            except Exception as exc:
                raise _StreamFault from exc
            if self.skip:
                cut = min(self.skip, y.shape[1])
                y, self.skip = y[:, cut:], self.skip - cut
            out.append(y)
            pos = e
        self.pending = buf[:, pos:].copy() if pos < n else None  # a copy: not a view of a device's buffer
        return out


def _feed_all(stage: _Stage, blocks: list[np.ndarray], *, final: bool) -> list[np.ndarray]:
    """``blocks`` into ``stage`` in order (only the last one may end the stream); its output blocks."""
    out: list[np.ndarray] = []
    for i, b in enumerate(blocks):
        out.extend(stage.feed(b, final=final and i == len(blocks) - 1))
    return out


def _stream_chain(x: np.ndarray, inserts: list[Insert], ctx: _Ctx, track_id: str,
                  warnings: list[StemWarning], scale: np.ndarray | None, *,
                  out: np.ndarray | None = None) -> np.ndarray | None:
    """The chain run block by block, each block through every device before the next (state carried),
    written into one output array: the blocks stay in cache and no device allocates a whole track.
    Every house device gives the samples of one whole-track call this way (block-size invariance, and
    the blocks are cut where the device would cut them itself). None when the chain cannot be streamed
    (automation, a device that is not a house device); :class:`_StreamFault` when a device faulted.

    ``out`` may be ``x`` itself: output frame ``i`` is written only after input frames up to ``i`` were
    read (a chain's output never runs ahead of its input), and what a device keeps is its own copy."""
    stages: list[_Stage] = []
    try:
        for ins in inserts:
            warn = _warner(warnings, f"insert {ins.id} {ins.device}")
            slot = _lookup(ins.device, "effect", ctx, track_id, ins.params, ins.auto, warn)
            if slot is None:
                continue
            if not slot.house or slot.params.auto:
                return None
            device = _try_build(slot, warn)
            if device is None:
                return None
            stages.append(_Stage(device, slot.params.base))
        n = x.shape[1]
        out = np.empty((2, n)) if out is None else out
        gains = (1.0, 1.0) if scale is None else (float(scale[0, 0]), float(scale[1, 0]))
        done = 0
        for a in range(0, n, STREAM_BLOCK_FRAMES):
            final = a + STREAM_BLOCK_FRAMES >= n
            blocks = [x[:, a:a + STREAM_BLOCK_FRAMES]]
            for stage in stages:
                blocks = _feed_all(stage, blocks or [x[:, :0]], final=final)
            for y in blocks:  # written out scaled, and checked: a NaN or inf from any device reaches here
                if not copy_scaled(y, gains, out[:, done:done + y.shape[1]]):
                    raise _StreamFault
                done += y.shape[1]
        if done != n:
            raise _StreamFault
        return out
    finally:
        for stage in stages:
            _close(stage.device)


def _close(device) -> None:
    """Release what a device holds (a song-defined kernel's sandbox child); house devices have nothing."""
    close = getattr(device, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # releasing is best effort; the audio is already out
            pass


def _warner(warnings: list[StemWarning], where: str) -> Callable[[str, str], None]:
    return lambda kind, message: warnings.append(StemWarning(kind, where, message))


# --- sources: notes and audio clips -------------------------------------------------------------

def note_groups(track: Track, tl: Timeline) -> dict[float, list[tuple[float, float, int, float, int]]]:
    """Heard notes grouped by clip gain (dB): ``(start_s, dur_s, pitch, velocity, index)`` each."""
    groups: dict[float, list[tuple[float, float, int, float, int]]] = {}
    index = 0
    for clip in track.clips:
        for note in clip.notes:
            i, index = index, index + 1
            if clip.mute or clip.kind != "notes" or note.t >= clip.length:
                continue
            dur_beats = min(note.d, clip.length - note.t)
            start_s = tl.beats_to_seconds(clip.start + note.t)
            groups.setdefault(clip.gain, []).append(
                (start_s, tl.beats_to_seconds(dur_beats), note.p, note.v, i))
    return groups


def _events(raw: list[tuple[float, float, int, float, int]], params: _Params, tl: Timeline
            ) -> list[NoteEvent]:
    raw = sorted(raw, key=lambda r: (r[0], r[4]))
    if params.auto:
        onsets = np.array([tl.seconds_to_beats(r[0]) for r in raw])
        values = params.at_beats(onsets)
        per_note = [MappingProxyType(params.resolved({k: v[j] for k, v in values.items()}))
                    for j in range(len(raw))]
    else:
        per_note = [params.base] * len(raw)
    return [NoteEvent(start_s=s, dur_s=d, pitch=p, velocity=v, index=i, params=per_note[j])
            for j, (s, d, p, v, i) in enumerate(raw)]


def _instrument_source(track: Track, ctx: _Ctx, warnings: list[StemWarning]) -> np.ndarray:
    n = ctx.tl.n_frames
    inst = track.instrument
    if inst is None:
        return np.zeros((2, n))
    warn = _warner(warnings, f"instrument {inst.device}")
    slot = _lookup(inst.device, "instrument", ctx, track.id, inst.params, inst.auto, warn)
    if slot is None:
        return np.zeros((2, n))
    groups = note_groups(track, ctx.tl) or {0.0: []}
    out = None
    for gain_db, raw in sorted(groups.items()):
        device = _try_build(slot, warn)
        if device is None:
            return np.zeros((2, n))
        try:
            y = _checked(device.render(_events(raw, slot.params, ctx.tl), n_frames=n), n, "render")
        except Exception as exc:
            warn("fault", f"failed while rendering: {type(exc).__name__}: {exc}; track silent")
            return np.zeros((2, n))
        finally:
            _close(device)
        if not all_finite(y):
            warn("error", "produced NaN or inf; track silent")
            return np.zeros((2, n))
        y = y if gain_db == 0 else y * db_to_gain(gain_db)
        out = y if out is None else out + y
    return out


def decode_asset(data_b64: str, *, sr: int) -> np.ndarray:
    """An embedded WAV/FLAC as float64 (2, n) at ``sr``, at most the ``song_s`` limit long (a compressed
    asset cannot unpack into hours of audio). RenderError if it cannot be decoded."""
    import soundfile as sf
    from scipy.signal import resample_poly

    try:
        with sf.SoundFile(io.BytesIO(base64.b64decode(data_b64, validate=False))) as f:
            file_sr = f.samplerate
            audio = f.read(frames=int(LIMITS.song_s * file_sr), dtype="float64", always_2d=True)
    except Exception as exc:
        raise RenderError(f"cannot decode the asset as WAV/FLAC: {exc}") from None
    x = audio.T
    x = np.vstack([x[0], x[0]]) if x.shape[0] == 1 else x[:2]
    if file_sr != sr:
        g = math.gcd(int(file_sr), int(sr))
        x = resample_poly(x, int(sr) // g, int(file_sr) // g, axis=1)
    return np.ascontiguousarray(x, dtype=np.float64)


def _audio_source(track: Track, ctx: _Ctx, warnings: list[StemWarning]) -> np.ndarray | None:
    clips = [(j, c) for j, c in enumerate(track.clips) if c.kind == "audio" and not c.mute]
    if not clips:
        return None
    tl, n = ctx.tl, ctx.tl.n_frames
    out = np.zeros((2, n))
    decoded: dict[str, np.ndarray] = {}
    for j, clip in clips:
        warn = _warner(warnings, f"clips[{j}] {clip.id} asset {clip.asset}")
        asset = ctx.song.assets.get(clip.asset or "")
        if asset is None:
            warn("error", f"asset {clip.asset!r} is not in song.assets; clip silent")
            continue
        if clip.asset not in decoded:
            try:
                decoded[clip.asset] = decode_asset(asset.data, sr=tl.sr)
            except RenderError as exc:
                warn("error", f"{exc}; clip silent")
                continue
        _place(out, decoded[clip.asset], clip, tl)
    return out


def _place(out: np.ndarray, audio: np.ndarray, clip: Clip, tl: Timeline) -> None:
    a = tl.beats_to_frames(clip.start)
    b = min(tl.beats_to_frames(clip.start + clip.length), out.shape[1])
    skip = tl.seconds_to_frames(clip.offset)
    piece = audio[:, skip:skip + max(b - a, 0)]
    out[:, a:a + piece.shape[1]] += piece * db_to_gain(clip.gain)


# --- stems and the mix --------------------------------------------------------------------------

def render_stem(track: Track, ctx: _Ctx) -> tuple[np.ndarray, tuple[StemWarning, ...]]:
    """One track through its instrument, audio clips, inserts, gain and balance pan."""
    warnings: list[StemWarning] = []
    g = db_to_gain(track.gain)
    left, right = balance_gains(track.pan)
    scale = np.array([[g * left], [g * right]])
    x = _track_source(track, ctx, warnings)
    y = _effect_chain(x, track.inserts, ctx, track.id, warnings, scale=scale,
                      again=lambda: _track_source(track, ctx, []))  # its warnings are already counted
    return y, tuple(warnings)


def _stem_from_parts(track: Track, ctx: _Ctx, parts: StemCache, *, key_of: Callable[[Track], str]
                     ) -> tuple[np.ndarray, tuple[StemWarning, ...]]:
    """:func:`render_stem`'s samples and warnings, its two earlier stages kept in ``parts`` (see
    :class:`.stems.StemCache`): the source, then the source through the inserts, then times the gain
    and pan. The same products as :func:`render_stem`, which multiplies by the gains as it writes the
    chain's last output (``x·g`` either way; at 0 dB centred the chain's output is the stem)."""
    g = db_to_gain(track.gain)
    left, right = balance_gains(track.pan)
    level = track.model_copy(update={"gain": 0.0, "pan": 0.0})
    chain_key = "inserts:" + key_of(level)
    pre = parts.get(chain_key)
    if pre is None:
        source_key = "source:" + key_of(level.model_copy(update={"inserts": ()}))
        source = parts.get(source_key)
        if source is None:
            made: list[StemWarning] = []
            source = parts.put(source_key, _track_source(track, ctx, made), tuple(made))
        warnings = list(source.warnings)
        y = _effect_chain(source.audio, track.inserts, ctx, track.id, warnings)
        same = y is source.audio and len(warnings) == len(source.warnings)  # no insert ran, none warned
        pre = source if same else parts.put(chain_key, y, tuple(warnings))
    if g == 1.0 and left == 1.0 and right == 1.0:
        return pre.audio, pre.warnings
    return np.multiply(pre.audio, np.array([[g * left], [g * right]])), pre.warnings


def _track_source(track: Track, ctx: _Ctx, warnings: list[StemWarning]) -> np.ndarray:
    """The track's instrument plus its audio clips, before the inserts (deterministic: made again, it
    gives the same samples)."""
    x = _instrument_source(track, ctx, warnings)
    audio = _audio_source(track, ctx, warnings)
    return x if audio is None else x + audio


def _master(mix: np.ndarray, ctx: _Ctx, warnings: list[RenderWarning], *,
            again: Callable[[], np.ndarray]) -> np.ndarray:
    """``mix`` (ours: a sum nobody else holds, made anew by ``again()``) through the master inserts, times
    the master gain, clipped. The chain streams over ``mix`` itself and multiplies by the gain as it writes
    each block (``x·g``, the product a separate pass makes), and the clip works in place: no whole-track
    array beyond the mix (each costs its page faults, some 20-40 ms for a minute of stereo here)."""
    master = ctx.song.master
    local: list[StemWarning] = []
    g = db_to_gain(master.gain)
    y = _effect_chain(mix, master.inserts, ctx, "master", local, scale=np.array([[g], [g]]), again=again)
    warnings.extend(RenderWarning(w.kind, f"master {w.where}", w.message) for w in local)
    if master.clip == "clean":
        return np.clip(y, -1.0, 1.0, out=y)  # :func:`hard_clip`'s values, in place
    return _soft_clip_in_place(y)


def _trust_default(song: Song) -> bool:
    if not song.devices:
        return False
    try:
        from . import kernels
    except ImportError:
        return False
    return bool(kernels.trust_kernels_default())


def kernel_scope(song: Song, *, trusted: bool):
    """The sandbox's kernel session (the time budget, fault latch and determinism check of a render, or
    of a whole scoring around it: :func:`.sandbox.kernel_session`) when ``song`` defines devices and they
    are sandboxed; otherwise nothing, and nothing of the sandbox is imported. It yields the session (its
    ``confinement()`` says what confined the kernels), or None."""
    if trusted or not song.devices:
        return contextlib.nullcontext()
    from .sandbox import kernel_session

    return kernel_session()


def render(song: Song, *, sr: int = 48000, tracks: Iterable[str] | None = None,
           cache: StemCache | None = None, trust_kernels: bool | None = None,
           devices: Mapping[str, type] | None = None) -> Render:
    """Render ``song`` to a stereo mix and per-track stems.

    ``tracks``: None = the whole mix honouring mute/solo; a list of track ids (or names) = exactly those
    tracks, mute and solo ignored. ``cache``: a :class:`StemCache`, or None for
    :func:`~pytest_overdub.render.stems.default_cache` (the process cache in a scorer, none in a library). ``trust_kernels``: run song-defined kernels
    in-process (None = ``kernels.trust_kernels_default()``). ``devices``: extra device classes by id
    (``Effect``/``Instrument`` subclasses) that take precedence over house devices; for tests and tools.
    """
    if not isinstance(song, Song):
        song = song_from_data(song)
    else:
        check_limits(song, source=f"song {song.id!r}")  # a Song built in Python: bounded all the same
    if int(sr) <= 0:
        raise RenderError(f"sr = {sr!r}: the sample rate must be a positive number of Hz (48000 canonical)")
    cache = default_cache() if cache is None else cache
    trusted = _trust_default(song) if trust_kernels is None else bool(trust_kernels)
    overrides = dict(devices or {})
    tl = Timeline.of(song, sr=int(sr))
    ctx = _Ctx(song, tl, trusted, overrides)
    override_names = [f"{k}={v.__module__}.{v.__qualname__}" for k, v in overrides.items()]
    stems: dict[str, np.ndarray] = {}
    warnings: list[RenderWarning] = []
    with kernel_scope(song, trusted=trusted):
        for pos, track in heard_tracks(song) if tracks is None else named_tracks(song, tracks):
            key = stem_key(song, track, sr=tl.sr, n_frames=tl.n_frames, trusted=trusted,
                           overrides=override_names)
            stem = cache.get(key)
            if stem is None:
                parts = cache.parts if cache.parts is not None and cache.parts.max_bytes > 0 else None
                made = render_stem(track, ctx) if parts is None else _stem_from_parts(
                    track, ctx, parts, key_of=lambda t: stem_key(song, t, sr=tl.sr, n_frames=tl.n_frames,
                                                                 trusted=trusted, overrides=override_names))
                stem = cache.put(key, *made)
            prefix = f"tracks[{pos}] {track.name or track.id}"
            warnings.extend(RenderWarning(w.kind, f"{prefix} {w.where}", w.message) for w in stem.warnings)
            stems[track.id] = stem.audio
        heard = list(stems.values())
        out = _master(_sum_stems(heard, tl.n_frames), ctx, warnings,
                      again=lambda: _sum_stems(heard, tl.n_frames))
    return Render(mix=out, stems=stems, sr=tl.sr, timeline=tl, warnings=tuple(warnings))


def _sum_stems(stems: list[np.ndarray], n_frames: int) -> np.ndarray:
    """``0 + stems[0] + stems[1] + ...`` in that order, a block of frames at a time: each stem is read once
    and the sum stays in cache (adding whole stems one after another reads and writes the whole mix once
    per stem). The first stem is written as ``stems[0] + 0`` (the values of adding it into zeros, without
    a pass that zeroes the block first). A fresh (2, n_frames) array."""
    mix = np.empty((2, n_frames))
    for s in range(0, n_frames, STREAM_BLOCK_FRAMES):
        blk = mix[:, s:s + STREAM_BLOCK_FRAMES]
        if not stems:
            blk.fill(0.0)
            continue
        np.add(stems[0][:, s:s + STREAM_BLOCK_FRAMES], 0.0, out=blk)
        for audio in stems[1:]:
            blk += audio[:, s:s + STREAM_BLOCK_FRAMES]
    return mix
