"""Probes: measuring a device, not the mix (docs/checks.md, "Devices (probes)").

The scorer builds a one-track song (the task's track with its inserts, or its instrument alone; track
gain 0 dB and centred; master at 0 dB with no inserts) and a test source:

* ``bench.click``: a sine blip at 1 kHz × 2^((pitch − 60)/12) with a 3 ms exponential decay, amplitude
  0.5·velocity;
* ``bench.sine``: a sine at the note's pitch, amplitude 0.25·velocity, 10 ms linear fades.

Echo checks render one click at beat 0 at each tempo; the envelope is the peak |x| per 1 ms frame; the
dry hit is the peak in the first 20 ms after the onset; the echo is the peak from 15 ms to 2 s after it
(the click has fallen 43 dB by 15 ms). The *first repeat* is the first 1 ms frame in that window within
6 dB of the window's peak or within 30 dB of the dry hit, whichever comes first (a flam 30 ms after the
hit, or a quieter sixteenth before the dotted eighth, is a repeat: it is heard), located to the sample
by the largest |x| in the 20 ms that follow it. Decay checks play probe notes 4 s apart at
120 bpm, velocity 0.8 unless the check draws it, on the instrument alone, with 10 ms frames; the same
notes give ``notePitch`` and ``noteLength`` (the readings in bench/device_checks.py). Tone checks play 1 s
tones 4 beats apart at 120 bpm and compare the RMS over 0.4-0.9 s of each tone with inserts and without.
Every time in seconds becomes a sample index as the song timing rounds it (half up,
:func:`seconds_to_frames`).

Tempos, the click's pitch and level, tone pitches and levels, and the decay notes' pitches, levels and
lengths are drawn per check from a seeded family (bench/device_checks.py): the same submission always
meets the same probes, and no table of the bench's probe values can know them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..devices.base import Instrument, NoteEvent
from ..devices.params import DeviceSpec
from ..dsp.levels import gain_to_db
from ..errors import TaskError
from ..song.model import Clip, Master, Note, Song, Track
from ..song.timing import seconds_to_frames
from .context import Context
from .device_checks import REPEAT_FLOOR_DB

CLICK_ID = "bench.click"
SINE_ID = "bench.sine"
PROBE_TEMPO = 120.0
REPEAT_GAP_S = 0.015     # echo checks look for repeats from 15 ms after the dry click's peak


class Click(Instrument):
    """``bench.click``: a blip at 1 kHz × 2^((pitch − 60)/12), 3 ms exponential decay, 0.5·velocity."""

    spec = DeviceSpec(CLICK_ID, "instrument", "Click", "bench probe: a 1 kHz blip")

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        out = np.zeros((2, n_frames))
        n = seconds_to_frames(0.05, sr=self.sr)  # 50 ms holds the blip down to -72 dB
        t = np.arange(n) / self.sr
        for note in notes:
            blip = np.sin(2 * np.pi * 1000.0 * 2 ** ((note.pitch - 60) / 12) * t) * np.exp(-t / 0.003)
            a = seconds_to_frames(note.start_s, sr=self.sr)
            b = min(n_frames, a + n)
            if a < b:
                out[:, a:b] += 0.5 * note.velocity * blip[: b - a]
        return out


class Sine(Instrument):
    """``bench.sine``: a sine at the note's pitch, amplitude 0.25·velocity, 10 ms linear fades."""

    spec = DeviceSpec(SINE_ID, "instrument", "Sine", "bench probe: a steady tone")

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        out = np.zeros((2, n_frames))
        fade = seconds_to_frames(0.01, sr=self.sr)
        for note in notes:
            a = seconds_to_frames(note.start_s, sr=self.sr)
            n = seconds_to_frames(note.dur_s, sr=self.sr)
            b = min(n_frames, a + n)
            if a >= b:
                continue
            t = np.arange(b - a) / self.sr
            f = 440.0 * 2 ** ((note.pitch - 69) / 12)
            env = np.minimum(1.0, np.minimum(np.arange(b - a) + 1, n - np.arange(b - a)) / fade)
            out[:, a:b] += 0.25 * note.velocity * np.sin(2 * np.pi * f * t) * env
        return out


PROBES = {CLICK_ID: Click, SINE_ID: Sine}


# --- the probe song -----------------------------------------------------------------------------

def probe_track(ctx: Context, ref: str) -> Track:
    """The agent's track ``ref`` names (as a scope finds it); :class:`TaskError` if it is not there."""
    from ..notes.selection import resolve_tracks

    tracks = resolve_tracks(ctx.song, [ref], start_song=ctx.start)
    if not tracks:
        raise TaskError(f"track {ref!r} is not in the submitted song")
    return tracks[0]


def probe_song(song: Song, track: Track, *, tempo: float, notes: list[Note], length_beats: float,
               instrument: Any, inserts: bool) -> Song:
    """A one-track song: ``track``'s inserts (or none) behind ``instrument``, master at 0 dB."""
    clip = Clip(id="c_probe", start=0.0, length=length_beats, notes=tuple(notes))
    probe = track.model_copy(update={
        "instrument": instrument, "inserts": track.inserts if inserts else (), "clips": (clip,),
        "gain": 0.0, "pan": 0.0, "mute": False, "solo": False,
    })
    return song.model_copy(update={"tempo": tempo, "tracks": (probe,), "sections": (), "master": Master(),
                                   "loop": None})


def _render(ctx: Context, song: Song) -> np.ndarray:
    from ..render import render

    r = render(song, sr=ctx.sr, trust_kernels=ctx.trusted, devices=PROBES)
    ctx.warnings.extend(r.warnings)
    return r.mix


def _db(x: float) -> float:
    return float(gain_to_db(x))


# --- echo ---------------------------------------------------------------------------------------

def echo_figures(x: np.ndarray, *, sr: int) -> tuple[float, float, float]:
    """(dry peak, first-repeat peak, first-repeat delay in ms) of a click at t = 0 in ``x``."""
    mono = np.max(np.abs(x), axis=0)
    frame = sr // 1000
    n = len(mono) // frame
    env = mono[: n * frame].reshape(n, frame).max(axis=1)
    dry_end = seconds_to_frames(0.020, sr=sr)
    dry_at = int(np.argmax(mono[:dry_end]))
    dry = float(mono[dry_at])
    lo_f = (dry_at + seconds_to_frames(REPEAT_GAP_S, sr=sr)) // frame
    hi_f = min(n, (dry_at + seconds_to_frames(2.0, sr=sr)) // frame)
    window = env[lo_f:hi_f]
    if window.size == 0 or window.max() <= 0:
        return dry, 0.0, math.inf
    floor = min(0.5 * window.max(), dry * 10 ** (REPEAT_FLOOR_DB / 20))
    first = lo_f + int(np.argmax(window >= floor))
    a, b = first * frame, min(len(mono), first * frame + seconds_to_frames(0.020, sr=sr))
    at = a + int(np.argmax(mono[a:b]))
    return dry, float(mono[at]), (at - dry_at) / sr * 1000.0


def _click_song(ctx: Context, track: Track, tempo: float, *, inserts: bool, pitch: int = 60,
                velocity: float = 1.0) -> Song:
    from ..song.model import Instrument as Inst

    return probe_song(ctx.song, track, tempo=tempo,
                      notes=[Note(p=pitch, t=0.0, d=0.25, v=velocity, id="n_probe")],
                      length_beats=max(4.0, math.ceil(2.5 * tempo / 60.0)),
                      instrument=Inst(device=CLICK_ID), inserts=inserts)


def echo_at(ctx: Context, track: Track, tempo: float, *, inserts: bool, pitch: int = 60,
            velocity: float = 1.0) -> tuple[float, float, float]:
    """:func:`echo_figures` of one click (``pitch``, ``velocity``) at beat 0 through ``track``'s inserts
    (or none) at ``tempo``."""
    song = _click_song(ctx, track, tempo, inserts=inserts, pitch=pitch, velocity=velocity)
    return echo_figures(_render(ctx, song), sr=ctx.sr)


# --- decay --------------------------------------------------------------------------------------

def decay_figures(x: np.ndarray, *, sr: int, starts_s: list[float], window_s: float,
                  threshold_db: float) -> list[tuple[float, float]]:
    """Per note: (seconds from strike to the last 10 ms frame above threshold, peak dBFS). Each note's
    window is read alone (peak |x| over channels), not a whole-render copy."""
    frame = sr // 100
    out = []
    for s in starts_s:
        a = seconds_to_frames(s, sr=sr)
        seg = np.max(np.abs(x[:, a: a + seconds_to_frames(window_s, sr=sr)]), axis=0)
        n = len(seg) // frame
        env = seg[: n * frame].reshape(n, frame).max(axis=1) if n else np.zeros(1)
        above = np.nonzero(env > 10 ** (threshold_db / 20))[0]
        t = (above[-1] + 1) * frame / sr if above.size else 0.0
        out.append((t, _db(float(env.max()))))
    return out


def decay_notes(probe_notes: list[Any], *, rng: Any = None, spread: int = 0,
                velocities: tuple[float, float] = (0.8, 0.8), stretch: tuple[float, float] = (1.0, 1.0),
                spacing: float = 8.0) -> list[Note]:
    """The probe notes (``p``, ``d`` in beats at 120 bpm), ``spacing`` beats apart. With ``rng`` each probe
    note plays at every pitch of -spread..spread around its ``p`` (none drawn: a check reads its worst
    note), the k of them at velocities and length factors one in each of k equal strata of ``velocities``
    and ``stretch`` (:func:`~.device_checks.draw_strata`; a length at most half the spacing). Nothing is
    drawn when ``rng`` is None: each note once, at velocity ``velocities[0]``."""
    from . import device_checks as dc

    played: list[tuple[int, float, float]] = []
    for n in probe_notes:
        if rng is None:
            played.append((n.p, velocities[0], n.d))
            continue
        pitches = dc.pitch_span(n.p, spread=spread)
        vs = dc.draw_strata(rng, *velocities, n=len(pitches))
        fs = dc.draw_strata(rng, *stretch, n=len(pitches))
        played += [(p, v, min(spacing / 2, n.d * f)) for p, v, f in zip(pitches, vs, fs)]
    return [Note(p=p, t=i * spacing, d=d, v=v, id=f"n_probe{i}") for i, (p, v, d) in enumerate(played)]


def decay_render(ctx: Context, track: Track, notes: list[Note], *, spacing: float = 8.0) -> np.ndarray:
    """``notes`` (from :func:`decay_notes`) on ``track``'s instrument alone at 120 bpm."""
    if track.instrument is None:
        raise TaskError(f"track {track.name or track.id!r} has no instrument to probe")
    song = probe_song(ctx.song, track, tempo=PROBE_TEMPO, notes=notes, length_beats=spacing * len(notes),
                      instrument=track.instrument, inserts=False)
    return _render(ctx, song)


def decay_at(ctx: Context, track: Track, notes: list[Note], *, threshold_db: float
             ) -> list[tuple[float, float]]:
    """:func:`decay_figures` of ``notes`` (from :func:`decay_notes`, 4 s apart) on ``track``'s instrument."""
    return decay_figures(decay_render(ctx, track, notes), sr=ctx.sr,
                         starts_s=[i * 4.0 for i in range(len(notes))], window_s=4.0, threshold_db=threshold_db)


# --- tones --------------------------------------------------------------------------------------

def tone_gain_db(ctx: Context, track: Track, pitch: int, *, velocity: float = 1.0) -> float:
    """RMS over 0.4-0.9 s of a 1 s ``bench.sine`` tone at ``pitch`` (``velocity``) through ``track``'s
    inserts minus without them, dB."""
    from ..song.model import Instrument as Inst

    notes = [Note(p=pitch, t=0.0, d=2.0, v=velocity, id="n_probe")]

    def rms_db(inserts: bool) -> float:
        song = probe_song(ctx.song, track, tempo=PROBE_TEMPO, notes=notes, length_beats=4.0,
                          instrument=Inst(device=SINE_ID), inserts=inserts)
        x = _render(ctx, song)[:, seconds_to_frames(0.4, sr=ctx.sr): seconds_to_frames(0.9, sr=ctx.sr)]
        return _db(float(np.sqrt(np.mean(x ** 2))))

    return rms_db(True) - rms_db(False)


# --- defined ------------------------------------------------------------------------------------

def defined(ctx: Context, track: Track, device_kind: str) -> float:
    """1 if ``track`` plays a song-defined device of ``device_kind`` that is new or changed since the start."""
    if device_kind == "instrument":
        ids = [track.instrument.device] if track.instrument else []
    else:
        ids = [i.device for i in track.inserts if i.on]
    for dev in ids:
        d = ctx.song.devices.get(dev)
        if d is None or d.kind != device_kind:
            continue
        before = ctx.start.devices.get(dev)
        if before is None or before.kernel != d.kernel or before.params != d.params:
            return 1.0
    return 0.0
