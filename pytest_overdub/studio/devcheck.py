"""The short check ``define_device`` runs on a song-defined device: does its kernel build and run, is its
output finite, how loud is it, how long does it ring, and does it give the same samples twice.

The check renders a probe song with the canonical renderer, kernels sandboxed unless the session trusts
them (so a fault is what the scorer would see: a ``fault`` or ``error`` warning, never an exception):

* an **effect** on a one-track song whose instrument is ``bench.sine`` (the scorer's probe tone: a sine
  at the note's pitch, 0.25 x velocity, 10 ms fades) playing A4 for 0.5 s at 120 bpm; the same song
  without the effect is the dry reference for the effect's gain;
* an **instrument** playing C4, E4 (0.25 s each) and G4 (0.5 s), one every 0.5 s, at 120 bpm.

All of it runs in one kernel session (a device that faults is not built again, and the kernels share one
time budget, so a hung kernel costs one timeout). The probes run 3.5 s (a 2 s bar and the renderer's
1.5 s tail), the device at its declared defaults.
Figures: ``peak`` (dBFS), ``truePeak`` (dBTP), ``lufs`` of the whole probe; ``tail_s``, the time from the
end of the input (the last note's end) to the end of the last 10 ms frame whose peak is within 60 dB of
the output's peak (``null`` and a finding when the output still rings at the end of the probe);
``deterministic``: two renders, each building the device afresh, equal in every bit. With ``use_on``, the
device's track in the song is rendered too (the stem as the renderer makes it) and its warnings and
levels reported, since a kernel may fault only on the real input (not when it faulted on the probe already).
"""

from __future__ import annotations

from typing import Any

from ..errors import OverdubError
from ..song.model import Clip, DeviceDef, Insert, Instrument, Note, Song, Track

PROBE_TEMPO = 120.0
TAIL_FLOOR_DB = 60.0
FRAME_S = 0.01
_TRACK_ID = "t_check"


def probe_song(defn: DeviceDef, *, with_device: bool = True) -> tuple[Song, float]:
    """The probe song for ``defn`` and when its input ends, in seconds."""
    if defn.kind == "effect":
        inst = Instrument(device="bench.sine")
        inserts = (Insert(id="fx_check", device=defn.id),) if with_device else ()
        notes = (Note(p=69, t=0.0, d=1.0, v=0.8, id="n0"),)
        end_beats = 1.0
    else:
        inst = Instrument(device=defn.id)
        inserts = ()
        notes = (Note(p=60, t=0.0, d=0.5, v=0.8, id="n0"), Note(p=64, t=1.0, d=0.5, v=0.8, id="n1"),
                 Note(p=67, t=2.0, d=1.0, v=0.8, id="n2"))
        end_beats = 3.0
    track = Track(id=_TRACK_ID, name="check", instrument=inst, inserts=inserts,
                  clips=(Clip(id="c_check", start=0.0, length=4.0, notes=notes),))
    song = Song(format="overdub/0", id="studio-device-check", tempo=PROBE_TEMPO, tracks=(track,),
                devices={defn.id: defn})
    return song, end_beats * 60.0 / PROBE_TEMPO


def check_device(song: Song, dev_id: str, *, trusted: bool, use_on: dict | None) -> dict[str, Any]:
    """``{"ok", "check": {...figures}, "findings": [...], "on_track"?}`` for ``song.devices[dev_id]``."""
    from ..render.engine import kernel_scope

    defn = song.devices[dev_id]
    findings: list[dict[str, str]] = []
    out: dict[str, Any] = {}
    with kernel_scope(song, trusted=trusted):  # one session: a hung kernel costs one timeout, not one per render
        try:
            out["check"] = _probe(defn, trusted=trusted, findings=findings)
        except OverdubError as exc:
            findings.append({"kind": "fault", "message": f"the check could not run: {exc}"})
            out["check"] = None
        faulted = any(f["kind"] in ("fault", "error") for f in findings)
        if use_on is not None and faulted:
            out["on_track"] = None  # the probe faulted: the track would only fault again (and cost its time)
        elif use_on is not None:
            try:
                out["on_track"] = _on_track(song, use_on["track"], trusted=trusted, findings=findings)
            except OverdubError as exc:
                findings.append({"kind": "fault", "message": f"the track could not be rendered: {exc}"})
    out["findings"] = findings
    out["ok"] = not any(f["kind"] in ("fault", "error", "nondeterministic") for f in findings)
    if not out["ok"]:
        out["hint"] = ("the definition is applied as the scorer would take it (a faulting device is bypassed "
                       "and the clean gate fails); fix it with define_device again, or undo()")
    return out


def _render(song: Song, *, trusted: bool, tracks=None):
    from ..bench.probes import Sine, SINE_ID
    from ..render.engine import render
    from ..render.stems import StemCache

    return render(song, tracks=tracks, cache=StemCache(max_bytes=0), trust_kernels=trusted,
                  devices={SINE_ID: Sine})


def _probe(defn: DeviceDef, *, trusted: bool, findings: list[dict[str, str]]) -> dict[str, Any]:
    import numpy as np

    song, input_end_s = probe_song(defn)
    first = _render(song, trusted=trusted)
    second = _render(song, trusted=trusted)
    for w in first.warnings:
        findings.append({"kind": w.kind, "message": f"{w.where.removeprefix('tracks[0] check ')}: {w.message}"})
    faulted = any(w.kind in ("fault", "error") for w in first.warnings)
    deterministic = bool(np.array_equal(first.mix, second.mix))
    if not deterministic:
        diff = np.argwhere(first.mix != second.mix)[0]
        findings.append({"kind": "nondeterministic",
                         "message": f"two renders of the probe differ (first at channel {diff[0]}, "
                                    f"{diff[1] / first.sr:.4f} s); a kernel may not read a clock or unseeded "
                                    f"randomness: use ctx.rng(...)"})
    figures = _levels(first.mix, first.sr)
    figures["tail_s"] = _tail_s(first.mix, first.sr, input_end_s)
    figures["deterministic"] = deterministic
    figures["input_end_s"] = input_end_s
    figures["probe_s"] = round(first.mix.shape[1] / first.sr, 6)
    if faulted:
        figures["note"] = "the device faulted, so these figures are of the probe with the device bypassed"
    if figures["tail_s"] is None and figures["peak"] > -120:
        findings.append({"kind": "long_tail", "message": f"still ringing at the end of the {figures['probe_s']:g} s "
                                                         f"probe (within {TAIL_FLOOR_DB:g} dB of its peak)"})
    if figures["peak"] <= -120:
        findings.append({"kind": "silent", "message": "the output is silent on the probe"})
    elif figures["truePeak"] is not None and figures["truePeak"] > 0:
        findings.append({"kind": "hot", "message": f"true peak {figures['truePeak']:.2f} dBTP on the probe "
                                                   f"(over full scale)"})
    if defn.kind == "effect":
        dry, _ = probe_song(defn, with_device=False)
        dry_levels = _levels(_render(dry, trusted=trusted).mix, first.sr)
        if figures["lufs"] is not None and dry_levels["lufs"] is not None:
            figures["gain_db"] = round(figures["lufs"] - dry_levels["lufs"], 3)
    return figures


def _levels(x, sr: int) -> dict[str, Any]:
    from ..measure.metrics import measure_metric

    out: dict[str, Any] = {}
    for name in ("peak", "truePeak", "lufs"):
        v = measure_metric(x, sr=sr, metric=name)
        out[name] = round(float(v), 3) if v == v and abs(v) != float("inf") else None
    return out


def _tail_s(x, sr: int, input_end_s: float) -> float | None:
    """Seconds from ``input_end_s`` to the end of the last 10 ms frame within 60 dB of the peak; None when
    that is the last frame (the output still rings); 0 when it ends before the input does."""
    import numpy as np

    env = np.abs(x).max(axis=0)
    peak = float(env.max())
    if peak <= 0:
        return 0.0
    hop = max(1, int(round(FRAME_S * sr)))
    n = env.shape[0] // hop
    frames = env[: n * hop].reshape(n, hop).max(axis=1)
    loud = np.nonzero(frames >= peak * 10 ** (-TAIL_FLOOR_DB / 20))[0]
    last = int(loud[-1])
    if last >= n - 1:
        return None
    return round(max(0.0, (last + 1) * hop / sr - input_end_s), 3)


def _on_track(song: Song, ref: str, *, trusted: bool, findings: list[dict[str, str]]) -> dict[str, Any]:
    from ..render.engine import render
    from ..render.stems import StemCache

    track = song.track(ref)
    r = render(song, tracks=[track.id], cache=StemCache(max_bytes=0), trust_kernels=trusted)
    prefix = f"tracks[{song.tracks.index(track)}] {track.name or track.id} "
    for w in r.warnings:
        findings.append({"kind": w.kind, "message": f"on {track.name or track.id}: "
                                                    f"{w.where.removeprefix(prefix)}: {w.message}"})
    return {"track": track.name or track.id, **_levels(r.stems[track.id], r.sr)}
