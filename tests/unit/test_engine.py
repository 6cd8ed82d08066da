"""The render engine's chain, rules and warnings (docs/rendering.md), with tiny test devices.

Every device here is defined in this file and handed to ``render(devices=...)``; the values asserted are
hand-worked (a unit click through a known gain lands on a known frame with a known height).
"""

from __future__ import annotations

import base64
import io
import math

import numpy as np
import pytest
import soundfile as sf
from scipy.signal import lfilter

from pytest_overdub.devices.base import Effect, Instrument
from pytest_overdub.devices.params import DeviceSpec, Param
from pytest_overdub.errors import RenderError
from pytest_overdub.render import Render, StemCache, render
from pytest_overdub.render.engine import (
    SOFT_CLIP_CEILING, SOFT_CLIP_LINEAR, balance_gains, db_to_gain, device_seed, soft_clip,
)
from pytest_overdub.song.model import Song, song_from_data, song_to_data

SR = 8000  # small renders; 120 bpm -> one beat = 4000 frames


def _p(key, lo, hi, default):
    return Param(key=key, label=key, min=lo, max=hi, default=default)


class Click(Instrument):
    """A unit impulse per note: ``velocity * level`` at the note's onset frame, both channels."""

    spec = DeviceSpec("test.click", "instrument", "Click", "", (_p("level", 0, 1, 1),))
    calls = 0
    seen: list = []

    def render(self, notes, *, n_frames):
        type(self).calls += 1
        type(self).seen.append(list(notes))
        out = np.zeros((2, n_frames))
        for ev in notes:
            out[:, int(round(ev.start_s * self.sr))] += ev.velocity * ev.params["level"]
        return out


class Drone(Instrument):
    """Ones from the first note's onset to the end."""

    spec = DeviceSpec("test.drone", "instrument", "Drone", "", ())

    def render(self, notes, *, n_frames):
        out = np.zeros((2, n_frames))
        if notes:
            out[:, int(round(notes[0].start_s * self.sr)):] = 1.0
        return out


class Gain(Effect):
    spec = DeviceSpec("test.gain", "effect", "Gain", "", (_p("gain", -60, 24, 0),))
    calls = 0

    def process(self, x, params):
        type(self).calls += 1
        return x * 10.0 ** (params["gain"] / 20.0)


class OnePole(Effect):
    """y[n] = (1 - a) x[n] + a y[n-1], state carried between calls (segment invariant)."""

    spec = DeviceSpec("test.onepole", "effect", "OnePole", "", (_p("a", 0, 0.999, 0.9),))
    calls = 0

    def __init__(self, **kw):
        super().__init__(**kw)
        self.zi = np.zeros((2, 1))

    def process(self, x, params):
        type(self).calls += 1
        a = params["a"]
        y, self.zi = lfilter([1 - a], [1, -a], x, axis=1, zi=self.zi)
        return y


class Late(Effect):
    """A pure delay of ``latency_frames`` frames that declares it (like a lookahead limiter)."""

    spec = DeviceSpec("test.late", "effect", "Late", "", ())
    latency_frames = 100

    def __init__(self, **kw):
        super().__init__(**kw)
        self.buf = np.zeros((2, self.latency_frames))

    def process(self, x, params):
        joined = np.concatenate([self.buf, x], axis=1)
        self.buf = joined[:, -self.latency_frames:]
        return joined[:, :x.shape[1]]


class Boom(Effect):
    spec = DeviceSpec("test.boom", "effect", "Boom", "", ())

    def process(self, x, params):
        raise ValueError("kaboom")


class BadBuild(Effect):
    spec = DeviceSpec("test.badbuild", "effect", "BadBuild", "", ())

    def __init__(self, **kw):
        raise RuntimeError("cannot build")


class NaNs(Effect):
    spec = DeviceSpec("test.nan", "effect", "NaNs", "", ())

    def process(self, x, params):
        y = np.array(x)
        y[0, 5] = np.nan
        return y


class WrongShape(Effect):
    spec = DeviceSpec("test.mono", "effect", "Mono", "", ())

    def process(self, x, params):
        return x[0]


class Seeded(Instrument):
    spec = DeviceSpec("test.seeded", "instrument", "Seeded", "", ())
    seeds: list = []

    def render(self, notes, *, n_frames):
        type(self).seeds.append(self.seed)
        return np.zeros((2, n_frames))


DEVICES = {cls.spec.id: cls for cls in (Click, Drone, Gain, OnePole, Late, Boom, BadBuild, NaNs,
                                        WrongShape, Seeded)}


def track(tid, *, name="", device="test.click", inserts=(), notes=((0, 1.0),), length=4, **kw):
    """A track with one 4-beat clip of clicks ``(beat, velocity)``."""
    return {"id": tid, "name": name, "instrument": {"device": device},
            "inserts": [dict({"id": f"fx_{tid}{i}"}, **ins) for i, ins in enumerate(inserts)],
            "clips": [{"id": f"c_{tid}", "start": 0, "length": length,
                       "notes": [{"p": 60, "t": t, "d": 0.5, "v": v} for t, v in notes]}], **kw}


def song(*tracks, **kw):
    return song_from_data(dict({"format": "overdub/0", "id": "s", "tempo": 120, "tracks": list(tracks)}, **kw))


def go(s, **kw) -> Render:
    kw.setdefault("cache", StemCache())
    return render(s, sr=kw.pop("sr", SR), devices=DEVICES, **kw)


# --- gain, pan, clip ----------------------------------------------------------------------------

def test_balance_pan_centre_and_half_right():
    assert balance_gains(0.0) == (1.0, 1.0)
    left, right = balance_gains(0.5)
    assert right == 1.0 and left == pytest.approx(math.cos(math.pi / 4), abs=1e-15)
    assert balance_gains(-0.5) == pytest.approx((1.0, math.cos(math.pi / 4)))
    assert balance_gains(1.0) == (0.0, 1.0)


def test_pan_and_gain_in_the_stem():
    r = go(song(track("t_a", pan=0.5, gain=-6.0)))
    stem = r.stems["t_a"]
    g = 10 ** (-6 / 20)
    assert stem[1, 0] == pytest.approx(g, abs=1e-15)                       # right at unity
    assert stem[0, 0] == pytest.approx(g * math.cos(math.pi / 4), abs=1e-15)
    centre = go(song(track("t_a"))).stems["t_a"]
    assert centre[0, 0] == 1.0 and centre[1, 0] == 1.0


class Held(Effect):
    """Returns one array it keeps (read-only, or writeable when ``writeable`` is on), whatever the input."""

    spec = DeviceSpec("test.held", "effect", "Held", "", (_p("writeable", 0, 1, 0),))
    kept: list = []

    def process(self, x, params):
        held = np.full(x.shape, 0.5)
        held.flags.writeable = bool(params["writeable"])
        type(self).kept.append(held)
        return held


class Through(Effect):
    """Returns its input itself (the engine's read-only view of the track)."""

    spec = DeviceSpec("test.through", "effect", "Through", "", ())

    def process(self, x, params):
        return x


def test_track_gain_never_writes_into_an_array_a_device_kept_or_its_input():
    g = 10 ** (-6 / 20)
    devices = dict(DEVICES, **{"test.held": Held, "test.through": Through})
    Held.kept.clear()
    r = render(song(track("t_a", gain=-6.0, inserts=[{"device": "test.held"}])), sr=SR,
               devices=devices, cache=StemCache())
    assert r.stems["t_a"][0, 0] == pytest.approx(0.5 * g, abs=1e-15)
    assert np.all(Held.kept[0] == 0.5)  # read-only: the engine scaled a copy
    r = render(song(track("t_a", gain=-6.0, inserts=[{"device": "test.through"}])), sr=SR,
               devices=devices, cache=StemCache())
    assert r.stems["t_a"][0, 0] == pytest.approx(g, abs=1e-15)  # the click, scaled once
    assert r.stems["t_a"][0, 1] == 0.0
    # a fresh writeable array the device returned is the engine's to scale in place (no new array)
    r = render(song(track("t_a", gain=-6.0, inserts=[{"device": "test.held", "params": {"writeable": 1}}])),
               sr=SR, devices=devices, cache=StemCache())
    assert r.stems["t_a"][0, 0] == pytest.approx(0.5 * g, abs=1e-15)
    assert np.all(r.stems["t_a"] == 0.5 * g)


def test_minus_120_db_is_silence():
    assert db_to_gain(-120.0) == 0.0
    assert db_to_gain(-200.0) == 0.0
    assert db_to_gain(-119.0) == pytest.approx(10 ** (-119 / 20))
    # the song model stops track gain at -96 dB, which is quiet but not silent
    assert go(song(track("t_a", gain=-96.0))).stems["t_a"][0, 0] == pytest.approx(10 ** -4.8)


def test_soft_clip_is_identity_below_minus_3_dbfs():
    x = np.linspace(-SOFT_CLIP_LINEAR, SOFT_CLIP_LINEAR, 10001)
    assert np.array_equal(soft_clip(x), x)
    assert SOFT_CLIP_LINEAR == pytest.approx(0.7079457843841379)


def test_soft_clip_never_passes_minus_half_dbfs():
    x = np.concatenate([np.linspace(0, 4, 20001), [10.0, 1e3, 1e12]])
    y = soft_clip(np.vstack([x, -x]))
    assert np.abs(y).max() <= SOFT_CLIP_CEILING      # reaches it only where tanh rounds to 1
    assert SOFT_CLIP_CEILING == pytest.approx(0.9440608762859234)
    assert np.all(np.diff(y[0]) >= 0)                                 # monotonic
    # C1 at the knee: the slope just above a is 1 (tanh'(0) = 1)
    a, h = SOFT_CLIP_LINEAR, 1e-7
    assert (soft_clip(np.array([a + h]))[0] - a) / h == pytest.approx(1.0, abs=1e-5)


def test_master_soft_clip_and_clean_clip_in_a_render():
    loud = track("t_a", notes=((0, 1.0),))
    soft = go(song(loud, master={"gain": 12.0}))
    assert soft.mix[0, 0] < SOFT_CLIP_CEILING and soft.mix[0, 0] > 0.94
    clean = go(song(loud, master={"gain": 12.0, "clip": "clean"}))
    assert clean.mix[0, 0] == 1.0
    quiet = go(song(track("t_a", notes=((0, 0.5),))))
    assert quiet.mix[0, 0] == 0.5                                      # below -3 dBFS: untouched


# --- notes --------------------------------------------------------------------------------------

def test_note_rules_length_duration_mute_and_index():
    Click.seen = []
    s = song({"name": "", "id": "t_a", "instrument": {"device": "test.click"}, "clips": [
        {"id": "c_1", "start": 0, "length": 2, "notes": [
            {"p": 60, "t": 0, "d": 4, "v": 1}, {"p": 62, "t": 2, "d": 1, "v": 1}]},   # t == length: unheard
        {"id": "c_2", "start": 2, "length": 2, "mute": True, "notes": [{"p": 64, "t": 0, "d": 1}]},
        {"id": "c_3", "start": 4, "length": 4, "notes": [{"p": 65, "t": 1.5, "d": 1, "v": 0.5}]},
    ]})
    go(s)
    (events,) = Click.seen
    assert [(e.pitch, e.index) for e in events] == [(60, 0), (65, 3)]
    assert events[0].dur_s == pytest.approx(1.0)       # min(4, 2 - 0) beats at 120 bpm
    assert events[1].start_s == pytest.approx(2.75)    # (4 + 1.5) beats


def test_clip_gain_scales_output_not_velocity():
    Click.seen = []
    s = song({"name": "", "id": "t_a", "instrument": {"device": "test.click"}, "clips": [
        {"id": "c_1", "start": 0, "length": 1, "gain": -6, "notes": [{"p": 60, "t": 0, "d": 1, "v": 1}]},
        {"id": "c_2", "start": 1, "length": 1, "notes": [{"p": 60, "t": 0, "d": 1, "v": 1}]}]})
    stem = go(s).stems["t_a"]
    assert stem[0, 0] == pytest.approx(10 ** (-6 / 20)) and stem[0, 4000] == 1.0
    assert all(e.velocity == 1 for evs in Click.seen for e in evs)


def test_instrument_params_read_at_note_onset():
    Click.seen = []
    s = song({"name": "", "id": "t_a", "instrument": {"device": "test.click", "params": {"level": 0.2},
                                          "auto": {"level": [{"t": 1, "v": 0}, {"t": 3, "v": 1}]}},
              "clips": [{"id": "c_1", "start": 0, "length": 8, "notes": [
                  {"p": 60, "t": t, "d": 0.5, "v": 1} for t in (0, 2, 2.5, 6)]}]})
    stem = go(s).stems["t_a"]
    assert [e.params["level"] for e in Click.seen[0]] == [0.0, 0.5, 0.75, 1.0]   # held, ramp, held
    assert stem[0, 8000] == 0.5 and stem[0, 24000] == 1.0


def test_audio_clip_plays_the_asset_from_its_offset():
    buf = io.BytesIO()
    pcm = np.zeros(4000)
    pcm[100] = 0.5
    sf.write(buf, pcm, SR, format="WAV", subtype="FLOAT")
    data = base64.b64encode(buf.getvalue()).decode()
    s = song({"name": "", "id": "t_au", "kind": "audio", "clips": [
        {"id": "c_a", "kind": "audio", "start": 1, "length": 1, "asset": "a1"},
        {"id": "c_b", "kind": "audio", "start": 2, "length": 1, "asset": "a1", "offset": 50 / SR}]},
        assets={"a1": {"data": data}})
    stem = go(s).stems["t_au"]
    assert np.flatnonzero(stem[0]).tolist() == [4100, 8050]
    assert stem[1, 4100] == 0.5


# --- devices, warnings --------------------------------------------------------------------------

def test_unknown_devices_are_bypassed_with_a_warning():
    r = go(song(track("t_a", name="Keys", inserts=[{"device": "core.nonesuch"}]),
                track("t_b", device="acme.synth")))
    kinds = {(w.kind, w.where) for w in r.warnings}
    assert kinds == {("bypass", "tracks[0] Keys insert fx_t_a0 core.nonesuch"),
                     ("bypass", "tracks[1] t_b instrument acme.synth")}
    assert r.stems["t_a"][0, 0] == 1.0              # insert passed through
    assert not r.stems["t_b"].any()                  # instrument bypassed: silent


@pytest.mark.parametrize("device, kind, text", [
    ("test.boom", "fault", "kaboom"),
    ("test.badbuild", "fault", "cannot build"),
    ("test.nan", "error", "NaN"),
    ("test.mono", "fault", "shape"),
])
def test_failing_effects_warn_and_pass_through(device, kind, text):
    r = go(song(track("t_a", inserts=[{"device": "test.gain", "params": {"gain": -6}},
                                      {"device": device}]),
                track("t_b", notes=((1, 0.5),))))
    (w,) = r.warnings
    assert w.kind == kind and text in w.message
    assert w.where == f"tracks[0] t_a insert fx_t_a1 {device}"
    assert r.stems["t_a"][0, 0] == pytest.approx(10 ** (-6 / 20))   # the chain went on without it
    assert r.mix[0, 4000] == 0.5                                      # the other track is heard


def test_bad_param_is_an_error_warning_and_dropped():
    r = go(song(track("t_a", inserts=[{"device": "test.gain", "params": {"gain": -6, "gian": 3}}])))
    (w,) = r.warnings
    assert w.kind == "error" and "gian" in w.message
    assert r.stems["t_a"][0, 0] == pytest.approx(10 ** (-6 / 20))


def test_stored_params_are_clamped():
    r = go(song(track("t_a", inserts=[{"device": "test.gain", "params": {"gain": -100}}])))
    assert r.warnings == ()
    assert r.stems["t_a"][0, 0] == pytest.approx(10 ** (-60 / 20))


def test_insert_off_passes_through():
    r = go(song(track("t_a", inserts=[{"device": "test.gain", "on": False, "params": {"gain": -20}}])))
    assert r.stems["t_a"][0, 0] == 1.0


def test_seeds_come_from_device_and_track_ids():
    Seeded.seeds = []
    go(song(track("t_a", device="test.seeded"), track("t_b", device="test.seeded")))
    assert Seeded.seeds == [device_seed("test.seeded", "t_a"), device_seed("test.seeded", "t_b")]
    assert Seeded.seeds[0] != Seeded.seeds[1]
    # pinned: printed by a separate Python process (another PYTHONHASHSEED); a change reseeds every render
    assert device_seed("core.verb", "t_keys") == 14334488480129071177


# --- latency and segments -----------------------------------------------------------------------

def test_latency_is_compensated_click_stays_on_its_beat():
    r = go(song(track("t_a", inserts=[{"device": "test.late"}], notes=((1, 1.0),))))
    assert np.flatnonzero(r.stems["t_a"][0]).tolist() == [4000]
    # a click on the very last frame is not lost to the padding
    n = r.timeline.n_frames
    last = go(song(track("t_a", inserts=[{"device": "test.late"}, {"device": "test.late"}],
                         device="test.drone", notes=((0, 1.0),))))
    assert last.stems["t_a"][0, n - 1] == 1.0 and last.stems["t_a"].shape == (2, n)


def test_constant_automation_is_bit_identical_to_none():
    plain = track("t_a", device="test.drone", inserts=[{"device": "test.onepole", "params": {"a": 0.99}}])
    auto = track("t_a", device="test.drone", inserts=[{
        "device": "test.onepole", "params": {"a": 0.5},
        "auto": {"a": [{"t": 0.3, "v": 0.99}, {"t": 2.7, "v": 0.99}, {"t": 3.1, "v": 0.99}]}}])
    OnePole.calls = 0
    a = go(song(plain), sr=48000).stems["t_a"]
    assert OnePole.calls == 1
    b = go(song(auto), sr=48000).stems["t_a"]
    assert OnePole.calls == 1 + 4                   # cut at three points -> four segments
    assert np.array_equal(a, b)


def test_ramp_segments_use_the_centre_value_and_later_devices_run_whole():
    s = song(track("t_a", device="test.drone", inserts=[
        {"device": "test.gain", "auto": {"gain": [{"t": 0, "v": 0}, {"t": 8, "v": -12}]}},
        {"device": "test.onepole", "params": {"a": 0.0}}], length=8))
    OnePole.calls = 0
    stem = go(s, sr=48000).stems["t_a"]
    assert OnePole.calls == 1
    # first segment: frames [0, 8192), centre 4096 frames = 0.170667 beats -> -0.256 dB
    assert stem[0, 100] == pytest.approx(10 ** (-0.256 / 20), abs=1e-12)
    assert np.all(stem[0, :8192] == stem[0, 100]) and stem[0, 8192] < stem[0, 100]
    # after the last point (beat 8 = 192000 frames) the value holds at -12 dB
    assert stem[0, 200000] == pytest.approx(10 ** (-12 / 20), abs=1e-15)
    steps = np.flatnonzero(np.diff(stem[0, :192000]))
    assert np.diff(steps).max() <= 8192


# --- streamed house chains ----------------------------------------------------------------------

def _house_chain_song(inserts):
    notes = [{"p": 48 + 5 * i, "t": 0.75 * i, "d": 0.5, "v": 0.9} for i in range(8)]
    return song(dict(track("t_a", device="core.pluck", inserts=inserts), clips=[
        {"id": "c_a", "start": 0, "length": 8, "notes": notes}]))


def test_streamed_house_chain_equals_whole_track_calls():
    """House inserts run block by block through the chain; the same classes as test overrides (never
    streamed: one whole-track call each) give the same samples, latency in mid-chain included."""
    from pytest_overdub.devices import house_class
    from pytest_overdub.render.engine import STREAM_BLOCK_FRAMES

    ids = ("core.limiter", "core.comp", "core.delay", "core.verb")
    s = _house_chain_song([{"device": d, "params": {"gain": 12} if d == "core.limiter" else {}}
                           for d in ids] + [{"device": "core.nope"}])
    streamed = render(s, sr=48000, cache=StemCache())
    whole = render(s, sr=48000, cache=StemCache(), devices={d: house_class(d) for d in ids})
    assert streamed.timeline.n_frames > 3 * STREAM_BLOCK_FRAMES
    assert np.array_equal(streamed.stems["t_a"], whole.stems["t_a"])
    assert [w.kind for w in streamed.warnings] == ["bypass"]


def test_a_flat_eq_in_a_streamed_chain_hands_its_input_on_uncalled(monkeypatch):
    """An EQ with every band off and 0 dB gain passes its input on without being called (first, in the
    middle and last in the chain, where the chain writes its output over the track's own source); an EQ
    with a band on is called. The samples are those of whole-track calls."""
    from pytest_overdub.devices import house_class
    from pytest_overdub.devices.eq import EQ

    inserts = [{"device": "core.eq"}, {"device": "core.comp"}, {"device": "core.eq"},
               {"device": "core.delay"}, {"device": "core.eq", "params": {"low": 3.0}}, {"device": "core.eq"}]
    s = _house_chain_song(inserts)
    whole = render(s, sr=48000, cache=StemCache(), devices={d: house_class(d)
                                                              for d in ("core.eq", "core.comp", "core.delay")})
    called = []
    process = EQ.process

    def counted(self, x, params):
        called.append(params["low"])
        return process(self, x, params)

    monkeypatch.setattr(EQ, "process", counted)
    streamed = render(s, sr=48000, cache=StemCache())
    assert np.array_equal(streamed.stems["t_a"], whole.stems["t_a"])
    assert called and set(called) == {3.0}  # only the EQ with a band on ran


def test_a_streamed_device_that_faults_is_passed_through_over_the_whole_track(monkeypatch):
    from pytest_overdub.devices.dynamics import Compressor

    s = _house_chain_song([{"device": "core.comp"}, {"device": "core.delay"}])
    clean = render(_house_chain_song([{"device": "core.delay"}]), sr=48000, cache=StemCache())
    calls = []

    def flaky(self, x, params):  # fine on the first block, raises on the second
        calls.append(x.shape[1])
        if len(calls) > 1:
            raise ValueError("boom")
        return np.array(x)

    monkeypatch.setattr(Compressor, "process", flaky)
    r = render(s, sr=48000, cache=StemCache())
    assert [(w.kind, "boom" in w.message) for w in r.warnings] == [("fault", True)]
    assert np.array_equal(r.stems["t_a"], clean.stems["t_a"])


def test_a_master_chain_that_faults_midway_starts_again_from_the_sum_of_the_stems(monkeypatch):
    """The master chain streams over the mix itself, the master gain applied as each block is written; a
    fault in its second block (the first already written over the mix) leaves the mix of a song without
    that insert: the sum made again, times the gain, clipped."""
    from pytest_overdub.devices.dynamics import Compressor

    def with_master(inserts):
        s = _house_chain_song([{"device": "core.delay"}])
        return s.model_copy(update={"master": s.master.model_copy(update={"gain": -7.0, "inserts": inserts})})

    calls = []

    def flaky(self, x, params):
        calls.append(x.shape[1])
        if len(calls) > 1:
            raise ValueError("boom")
        return np.array(x) * 0.5

    clean = render(with_master(()), sr=48000, cache=StemCache())
    monkeypatch.setattr(Compressor, "process", flaky)
    from pytest_overdub.song.model import Insert

    r = render(with_master((Insert(id="fx_m", device="core.comp"),)), sr=48000, cache=StemCache())
    assert calls[:2] == [32768, 32768]
    assert [(w.kind, w.where.startswith("master")) for w in r.warnings] == [("fault", True)]
    assert np.array_equal(r.mix, clean.mix) and np.abs(clean.mix).max() > 0.01


def test_a_streamed_device_that_returns_nan_mid_chain_is_named_and_passed_through(monkeypatch):
    """The streamed chain checks its output once per block (the NaN goes on through the delay); the
    whole-track rerun checks every device, so the warning names the compressor, and the stem is the
    chain without it."""
    from pytest_overdub.devices.dynamics import Compressor

    s = _house_chain_song([{"device": "core.comp"}, {"device": "core.delay"}])
    clean = render(_house_chain_song([{"device": "core.delay"}]), sr=48000, cache=StemCache())
    calls = []

    def poisoned(self, x, params):  # passes its input on, with a NaN at frame 40 000 (in the second block)
        start = self.__dict__.setdefault("frames", 0)
        self.frames = start + x.shape[1]
        calls.append(x.shape[1])
        y = np.array(x)
        if start <= 40000 < self.frames:
            y[1, 40000 - start] = np.nan
        return y

    monkeypatch.setattr(Compressor, "process", poisoned)
    r = render(s, sr=48000, cache=StemCache())
    assert calls[:2] == [32768, 32768] and max(calls) > 32768  # streamed blocks, then a whole-track call
    assert [(w.kind, "core.comp" in w.where) for w in r.warnings] == [("error", True)]
    assert np.array_equal(r.stems["t_a"], clean.stems["t_a"])


# --- which tracks, cache ------------------------------------------------------------------------

def test_mute_solo_and_named_tracks():
    tracks = [track("t_a", notes=((0, 1.0),)), track("t_b", notes=((1, 1.0),), mute=True),
              track("t_c", notes=((2, 1.0),), solo=True), track("t_d", name="Dee", notes=((3, 1.0),))]
    assert set(go(song(*tracks)).stems) == {"t_c"}
    named = go(song(*tracks), tracks=["t_b", "dee"])            # mute and solo ignored; names work
    assert set(named.stems) == {"t_b", "t_d"}
    assert np.flatnonzero(named.mix[0]).tolist() == [4000, 12000]
    unsolo = [dict(t, solo=False) for t in tracks]
    assert set(go(song(*unsolo)).stems) == {"t_a", "t_c", "t_d"}
    with pytest.raises(RenderError, match="'Nobody'.*t_a"):
        go(song(*tracks), tracks=["Nobody"])


def test_cache_hit_does_not_rerender():
    cache = StemCache()
    tracks = [track("t_a"), track("t_b", notes=((1, 1.0),))]
    Click.calls = 0
    first = go(song(*tracks), cache=cache)
    assert Click.calls == 2
    again = go(song(*tracks), cache=cache)
    sub = go(song(*tracks), cache=cache, tracks=["t_b"])
    assert Click.calls == 2 and cache.hits == 3
    assert np.array_equal(first.mix, again.mix)
    assert np.array_equal(sub.stems["t_b"], first.stems["t_b"])
    go(song(tracks[0], dict(tracks[1], gain=-3.0)), cache=cache)   # only the changed track re-renders
    assert Click.calls == 3


@pytest.mark.parametrize("inserts", [
    [],
    [{"device": "test.onepole"}, {"device": "test.boom"}],                     # unstreamed, with a warning
    [{"device": "test.boom"}],                                                 # passed through, warned
    [{"device": "core.eq", "params": {"hp": 200.0}}, {"device": "core.comp", "params": {"threshold": -30.0}},
     {"device": "core.delay"}],                                                # streamed house chain
])
def test_kept_parts_give_the_stems_a_fresh_render_gives(inserts):
    """The scorer's cache keeps each track's source and its inserts' output: a stem made from them is
    bit-identical to a fresh render, warnings included, and a change of gain or pan alone does not play
    the instrument again."""
    notes = tuple((t / 2, 0.3 + 0.1 * (t % 5)) for t in range(8))
    kept = StemCache(keep_parts=True)
    Click.calls = 0
    for gain, pan in ((0.0, 0.0), (-6.0, 0.3), (4.5, -1.0), (-0.5, 0.0)):
        s = song(track("t_a", inserts=inserts, notes=notes, length=8, gain=gain, pan=pan))
        fresh, made = go(s, cache=StemCache(max_bytes=0)), go(s, cache=kept)
        assert made.stems["t_a"].tobytes() == fresh.stems["t_a"].tobytes(), (gain, pan)
        assert made.mix.tobytes() == fresh.mix.tobytes() and made.warnings == fresh.warnings
    assert Click.calls == 4 + 1                                # four fresh renders, one kept source
    kept.clear()
    assert len(kept.parts) == 0


def test_cache_is_bounded_lru_by_bytes():
    one_stem = 2 * 28000 * 8                                         # 4 beats + tail at 8 kHz, float64
    cache = StemCache(max_bytes=2 * one_stem)
    go(song(track("t_a"), track("t_b"), track("t_c")), cache=cache)
    assert len(cache) == 2 and cache.nbytes == 2 * one_stem
    Click.calls = 0
    go(song(track("t_a")), cache=cache, tracks=["t_a"])             # t_a was evicted first
    assert Click.calls == 1
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


def test_cached_stems_are_read_only_and_carry_their_warnings():
    cache = StemCache()
    s = song(track("t_a", inserts=[{"device": "test.boom"}]))
    first, second = go(s, cache=cache), go(s, cache=cache)
    assert cache.hits == 1
    assert first.warnings == second.warnings and len(second.warnings) == 1
    with pytest.raises(ValueError):
        second.stems["t_a"][0, 0] = 2.0


def test_render_length_and_timeline():
    r = go(song(track("t_a", length=5)))
    # 5 beats -> 2 bars = 8 beats = 4 s at 120 bpm, plus 1.5 s tail
    assert r.timeline.end_beats == 8.0
    assert r.mix.shape == (2, int(5.5 * SR)) and r.mix.dtype == np.float64
    assert r.sr == SR and r.timeline.beats_to_seconds(8) == 4.0


# --- song-defined devices -----------------------------------------------------------------------

def _kernel_song(source, *, params=None, kind="effect"):
    return song(track("t_a", inserts=[{"device": "my.fx", "params": params or {}}]),
                devices={"my.fx": {"id": "my.fx", "kind": kind, "kernel": source,
                                   "params": [{"key": "g", "min": 0, "max": 1, "def": 0.5}]}})


def test_song_defined_effect_runs_with_clamped_params():
    # A song file holding g = 3 is refused on load; a Song built in Python can hold it, and render clamps.
    data = song_to_data(_kernel_song("def process(x, params, ctx):\n    return x * params['g']\n"))
    data["tracks"][0]["inserts"][0]["params"] = {"g": 3.0}
    r = go(Song.model_validate(data), trust_kernels=True)
    assert r.warnings == ()
    assert r.stems["t_a"][0, 0] == 1.0          # g clamped to its declared max 1


def test_song_defined_faults_and_misuse_warn():
    raising = go(_kernel_song("def process(x, params, ctx):\n    raise ValueError('nope')\n"),
                 trust_kernels=True)
    (w,) = raising.warnings
    assert w.kind == "fault" and w.where == "tracks[0] t_a insert fx_t_a0 my.fx"
    assert raising.stems["t_a"][0, 0] == 1.0    # passed through
    as_instrument = go(_kernel_song("def render(notes, params, ctx, n):\n    return None\n",
                                    kind="instrument"), trust_kernels=True)
    assert [w.kind for w in as_instrument.warnings] == ["error"]
    data = song_to_data(_kernel_song("def process(x, params, ctx):\n    return x\n"))
    data["tracks"][0]["inserts"][0]["params"] = {"zz": 1}  # refused in a file; a Song built in Python can hold it
    undeclared = go(Song.model_validate(data), trust_kernels=True)
    assert [w.kind for w in undeclared.warnings] == ["error"] and "zz" in undeclared.warnings[0].message


def test_soft_clip_bends_exactly_the_samples_above_the_knee_by_the_stated_formula():
    """Any shape and any mix of samples under and over the knee, signed zeros and non-finite values: each
    sample gets the docstring's formula alone (numpy over the whole array), and NaN stays NaN."""
    a, c = SOFT_CLIP_LINEAR, SOFT_CLIP_CEILING
    x = np.random.default_rng(7).standard_normal((3, 2, 5000)) * 0.8
    x[0, 0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    x[2, 1, -3:] = [a, np.nextafter(a, 2.0), -np.nextafter(a, 2.0)]
    mag = np.abs(x)
    with np.errstate(invalid="ignore"):
        expect = np.where(mag > a, np.sign(x) * (a + (c - a) * np.tanh((mag - a) / (c - a))), x)
    for got in (soft_clip(x), soft_clip(x[1]), soft_clip(x[2, 1])):
        want = expect[1] if got.shape == x[1].shape else expect[2, 1] if got.ndim == 1 else expect
        assert np.array_equal(got, want, equal_nan=True)
    assert soft_clip(x)[2, 1, -3] == a and soft_clip(x)[0, 0, 3] == 0.0
    assert np.signbit(soft_clip(x)[0, 0, 3])  # under the knee a sample is kept as it is, sign and all


def test_the_mix_sums_stems_in_order_from_zero_in_every_block():
    from pytest_overdub.render.engine import STREAM_BLOCK_FRAMES, _sum_stems

    n = 2 * STREAM_BLOCK_FRAMES + 5
    rng = np.random.default_rng(3)
    stems = [rng.standard_normal((2, n)) * 10.0 ** rng.integers(-8, 8, (2, n)) for _ in range(4)]
    for s in stems:
        s[:, :7] = -0.0  # 0 + -0.0 + ... is +0.0: the sum starts from zero, not from the first stem
    expect = np.zeros((2, n))
    for s in stems:
        expect = expect + s
    got = _sum_stems(stems, n)
    assert np.array_equal(got, expect) and not np.signbit(got[:, :7]).any()
    assert np.array_equal(_sum_stems([], 9), np.zeros((2, 9)))
