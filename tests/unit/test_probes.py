"""Probe checks on hand-built devices whose answers are known in closed form (docs/checks.md, "Devices (probes)")."""

import math
from pathlib import Path

import numpy as np
import pytest

from pydantic import TypeAdapter

from pytest_overdub.bench.context import Context
from pytest_overdub.bench.model import Check
from pytest_overdub.song.model import load_song
from pytest_overdub.song.ops import apply_ops

ROOT = Path(__file__).resolve().parents[2]
LAB = load_song(ROOT / "songs" / "lab.json")

IDEAL_DELAY = """
def process(x, params, ctx):
    d = int(round(0.450 * ctx.sr))          # exactly 450 ms
    n = x.shape[1]
    hist = ctx.state.get("hist", np.zeros((2, d)))
    buf = np.concatenate([hist, x], axis=1)
    ctx.state["hist"] = buf[:, -d:]
    return x + 0.5 * buf[:, :n]
"""

ONE_POLE = """
import scipy.signal as ss
def process(x, params, ctx):
    a = math.exp(-2 * math.pi * 500.0 / ctx.sr)
    zi = ctx.state.get("zi", np.zeros((2, 1)))
    y, ctx.state["zi"] = ss.lfilter([1 - a], [1, -a], x, axis=1, zi=zi)
    return y
"""

EXP_DECAY = """
TAIL_S = 2.0
def render(notes, params, ctx, n_frames):
    out = np.zeros((2, n_frames))
    n = int(1.5 * ctx.sr)
    t = np.arange(n) / ctx.sr
    for note in notes:
        y = 0.5 * note.velocity * np.exp(-t / 0.1) * np.sin(2 * np.pi * 1000.0 * t + np.pi / 2)
        a = int(round(note.start_s * ctx.sr))
        b = min(n_frames, a + n)
        out[:, a:b] += y[: b - a]
    return out
"""


def _ctx(kernel: str, kind: str, track: str) -> Context:
    ops = [{"type": "device.define", "device": {"id": "test.dev", "kind": kind, "kernel": kernel}}]
    if kind == "effect":
        ops.append({"type": "insert.add", "track": track, "insert": {"device": "test.dev"}})
    else:
        ops.append({"type": "instrument.set", "track": track, "device": "test.dev"})
    return Context(start=LAB, song=apply_ops(LAB, ops), trusted=True)


def _check(kind: str, **kw):
    """A check of ``kind`` read through the task model's union, as a task file's check is."""
    return TypeAdapter(Check).validate_python({"id": "c", "label": "c", "kind": kind, "target": [None, None], **kw})


def value(check, ctx: Context) -> float:
    return check.value(ctx)


def _echo(kind: str, **kw):
    return _check(kind, track="Snaps", **kw)


def test_an_ideal_450_ms_delay_reads_its_time_level_and_dry_exactly():
    ctx = _ctx(IDEAL_DELAY, "effect", "Snaps")
    # 0.75 beat at 100 bpm is 450 ms: the first repeat is exactly on time
    assert value(_echo("echoTime", beats=0.75, tempos=[100]), ctx) == pytest.approx(0.0, abs=0.05)
    # at 130 bpm the wanted 0.75 beat is 346.15 ms, so an ideal 450 ms delay is 103.85 ms off
    assert value(_echo("echoTime", beats=0.75, tempos=[130]), ctx) == pytest.approx(103.85, abs=0.05)
    # the repeat is half the dry hit: 20 log10(0.5) = -6.02 dB
    assert value(_echo("echoLevel", tempos=[100]), ctx) == pytest.approx(-6.02, abs=0.01)
    # the dry path is untouched
    assert value(_echo("dryKept", tempos=[100]), ctx) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("pitch", [31, 43, 83, 102])
def test_a_one_pole_low_pass_reads_its_analytic_response(pitch):
    ctx = _ctx(ONE_POLE, "effect", "Room")
    f, sr, fc = 440.0 * 2 ** ((pitch - 69) / 12), 48000, 500.0
    a = math.exp(-2 * math.pi * fc / sr)
    w = 2 * math.pi * f / sr
    want = 20 * math.log10((1 - a) / math.sqrt(1 - 2 * a * math.cos(w) + a * a))
    got = value(_check("toneGain", track="Room", pitch=pitch), ctx)
    assert got == pytest.approx(want, abs=0.05)


def test_an_exponential_decay_reads_its_time_constant_and_peak():
    ctx = _ctx(EXP_DECAY, "instrument", "Bell")
    notes = [{"p": 60, "d": 0.5}, {"p": 60, "d": 4}]
    # peak 0.5 * 0.8 = 0.4 (-7.96 dBFS); it falls under -60 dBFS (0.001) after 0.1 s * ln(400) = 0.599 s,
    # read on 10 ms frames (the last frame above the threshold ends at 0.60 s)
    t = value(_check("decayTime", track="Bell", notes=notes, threshold=-60), ctx)
    assert t == pytest.approx(0.1 * math.log(400), abs=0.011)
    peak = value(_check("decayPeak", track="Bell", notes=notes, which="loudest"), ctx)
    assert peak == pytest.approx(20 * math.log10(0.4), abs=0.01)


def test_defined_sees_only_a_new_or_changed_kernel_of_the_right_kind():
    ctx = _ctx(IDEAL_DELAY, "effect", "Snaps")
    check = _check("defined", track="Snaps", deviceKind="effect")
    assert value(check, ctx) == 1.0
    assert value(check.model_copy(update={"deviceKind": "instrument"}), ctx) == 0.0
    # the same song as its own start: the kernel is neither new nor changed
    assert value(check, Context(start=ctx.song, song=ctx.song, trusted=True)) == 0.0
    # a house delay is not a song-defined device
    house = apply_ops(LAB, [{"type": "insert.add", "track": "Snaps", "insert": {"device": "core.delay"}}])
    assert value(check, Context(start=LAB, song=house, trusted=True)) == 0.0


def test_a_faulting_kernel_is_a_render_problem_not_a_crash():
    ctx = _ctx("def process(x, params, ctx):\n    raise RuntimeError('boom')\n", "effect", "Snaps")
    v = value(_echo("echoLevel", tempos=[100]), ctx)
    assert np.isfinite(v)
    assert ctx.problems() >= 1 and any("boom" in w.message for w in ctx.warnings)


# --- draws a submission cannot steer (docs/checks.md, "Probe families") --------------------------------
# A submission can re-hash itself offline (a spare param, no render) until the seeded draws land where it
# likes: a fixed 450 ms echo ground until both drawn tempos fell near 100 bpm scored 1.000 on the dotted
# echo, and a notch comb ground until the drawn tone pitches fell on its notches passed the rumble filter's
# tone checks. Tempos are stratified and a pass-deciding pitch is measured over its whole span instead.

def test_two_drawn_tempos_keep_a_fixed_delay_from_matching_both_whatever_the_seed():
    from pytest_overdub.bench import device_checks as dc

    for seed in range(20000):
        a, b = dc.draw_tempos(np.random.default_rng(seed), lo=70, hi=170, n=2)
        assert 70 <= a <= 107.5 and 132.5 <= b <= 170
        # a dotted eighth is 45000 / tempo ms; one fixed time within 18 ms (3 + soft 15) of both needs
        # them within 36 ms; the strata keep them at least 45000 / 107.5 - 45000 / 132.5 = 79 ms apart
        assert 45000 / a - 45000 / b > 78.9


def test_n_drawn_tempos_fall_one_in_each_stratum():
    from pytest_overdub.bench import device_checks as dc

    # eight strata of 12.5 bpm, each kept 12.5 / 4 from its neighbours
    assert dc.tempo_strata(lo=70, hi=170, n=8)[:2] == [(70, 79.375), (85.625, 91.875)]
    for seed in range(2000):
        drawn = dc.draw_tempos(np.random.default_rng(seed), lo=70, hi=170, n=8)
        assert min(b - a for a, b in zip(drawn, drawn[1:])) >= 6.25 - 0.1


def _one_pole_db(pitch: int) -> float:
    f, sr, fc = 440.0 * 2 ** ((pitch - 69) / 12), 48000, 500.0
    a = math.exp(-2 * math.pi * fc / sr)
    w = 2 * math.pi * f / sr
    return 20 * math.log10((1 - a) / math.sqrt(1 - 2 * a * math.cos(w) + a * a))


def test_a_tone_check_reads_the_worst_pitch_of_its_span_for_any_seed(monkeypatch):
    from pytest_overdub.bench import device_checks as dc

    ctx = _ctx(ONE_POLE, "effect", "Room")
    # a low-pass cuts more the higher the pitch: of MIDI 81-85 a check wanting a cut reads the least cut
    # (81), one wanting a pass the most (85), and a two-sided one the farthest from its range (85)
    cut = _check("toneGain", track="Room", pitch=83, spread=2, target=[None, -30])
    keep = _check("toneGain", track="Room", pitch=83, spread=2, target=[-1, None])
    both = _check("toneGain", track="Room", pitch=83, spread=2, target=[-1, 1])
    for seed in (1, 2):
        monkeypatch.setattr(dc, "probe_seed", lambda *a, seed=seed, **k: seed)
        assert value(cut, ctx) == pytest.approx(_one_pole_db(81), abs=0.05)
        assert value(keep, ctx) == pytest.approx(_one_pole_db(85), abs=0.05)
        assert value(both, ctx) == pytest.approx(_one_pole_db(85), abs=0.05)


PITCHED_DECAY = """
TAIL_S = 2.0
def render(notes, params, ctx, n_frames):
    out = np.zeros((2, n_frames))
    n = int(2.0 * ctx.sr)
    t = np.arange(n) / ctx.sr
    for note in notes:
        tau = 0.2 if note.pitch == 61 else 0.1      # rings twice as long on one pitch only
        y = 0.5 * np.exp(-t / tau) * np.sin(2 * np.pi * 1000.0 * t + np.pi / 2)
        a = int(round(note.start_s * ctx.sr))
        b = min(n_frames, a + n)
        out[:, a:b] += y[: b - a]
    return out
"""


def test_a_decay_check_plays_every_pitch_of_its_span_for_any_seed(monkeypatch):
    from pytest_overdub.bench import device_checks as dc

    ctx = _ctx(PITCHED_DECAY, "instrument", "Bell")
    check = _check("decayTime", track="Bell", notes=[{"p": 60, "d": 0.5}], spread=1, threshold=-60,
                   velocities=[0.5, 1.0], stretch=[0.5, 1.5])
    for seed in (1, 2):
        monkeypatch.setattr(dc, "probe_seed", lambda *a, seed=seed, **k: seed)
        # the slow pitch (61) is always played: 0.5 * exp(-t / 0.2) falls under 0.001 after 0.2 ln 500
        assert value(check, ctx) == pytest.approx(0.2 * math.log(500), abs=0.011)


def test_drawn_velocities_and_lengths_cover_their_range_whatever_the_seed():
    from pytest_overdub.bench import device_checks as dc

    for seed in range(200):
        vs = dc.draw_strata(np.random.default_rng(seed), 0.5, 1.0, n=11)
        assert min(vs) < 0.5 + 0.5 / 11 and max(vs) > 1.0 - 0.5 / 11
        assert sorted(int((v - 0.5) / (0.5 / 11)) for v in vs) == list(range(11))


def test_decay_figures_read_each_window_alone_as_from_the_whole_renders_envelope():
    """Each note's window is read from its own samples: the figures of the peak over channels taken of the
    whole render first."""
    from pytest_overdub.bench.probes import decay_figures

    sr = 48000
    t = np.arange(int(4.0 * sr)) / sr
    x = np.zeros((2, 3 * t.size + 1000))
    for i, tau in enumerate((0.05, 0.3, 1.0)):
        x[i % 2, i * t.size:(i + 1) * t.size] = 0.8 * np.exp(-t / tau) * np.sin(2 * np.pi * 220 * t)
    starts = [0.0, 4.0, 8.0, 12.5]
    got = decay_figures(x, sr=sr, starts_s=starts, window_s=4.0, threshold_db=-60.0)
    mono, frame = np.max(np.abs(x), axis=0), sr // 100
    for s, (secs, peak) in zip(starts, got):
        seg = mono[int(s * sr): int(s * sr) + 4 * sr]
        env = seg[: len(seg) // frame * frame].reshape(-1, frame).max(axis=1) if len(seg) >= frame else np.zeros(1)
        above = np.nonzero(env > 1e-3)[0]
        assert secs == ((above[-1] + 1) * frame / sr if above.size else 0.0)
        assert peak == float(20 * np.log10(max(env.max(), 1e-6)))
    assert got[1][0] == pytest.approx(0.3 * np.log(0.8 / 1e-3), abs=0.02)  # a 0.3 s decay to -60 dBFS


TAPS = """
def process(x, params, ctx):
    taps = {taps}
    longest = max(int(round(s * ctx.sr)) for s, _ in taps)
    n = x.shape[1]
    hist = ctx.state.get("hist", np.zeros((2, longest)))
    buf = np.concatenate([hist, x], axis=1)
    ctx.state["hist"] = buf[:, -longest:]
    y = x.copy()
    for s, g in taps:
        d = int(round(s * ctx.sr))
        y += g * buf[:, longest - d: longest - d + n]
    return y
"""


@pytest.mark.parametrize("taps, want_ms", [
    # a flam: a copy 30 ms after the hit at half level is the first repeat, 420 ms early
    (((0.030, 0.5), (0.450, 0.5)), 420.0),
    # a sixteenth (150 ms at 100 bpm) 16 dB down before a louder dotted eighth is the first repeat
    (((0.150, 0.16), (0.450, 0.5)), 300.0),
    # 34 dB down it is under the 30 dB floor: the dotted eighth is the first repeat
    (((0.150, 0.02), (0.450, 0.5)), 0.0),
])
def test_a_repeat_within_30_db_of_the_hit_is_the_first_whenever_it_comes(taps, want_ms):
    ctx = _ctx(TAPS.format(taps=taps), "effect", "Snaps")
    assert value(_echo("echoTime", beats=0.75, tempos=[100]), ctx) == pytest.approx(want_ms, abs=0.1)
    # on the real snaps (cross-correlation, then the wet part read as sound before its lag)
    assert value(_check("trackEchoTime", track="Snaps", beats=0.75), ctx) == pytest.approx(want_ms, abs=1.5)


def test_a_dry_passed_at_another_gain_is_no_early_repeat():
    # the dry 1.4 dB down and one repeat at 450 ms: the wet part (out - bypass) holds -0.15 x the dry from
    # the hit on, which the projection on the bypass takes out
    kernel = TAPS.format(taps=((0.450, 0.5),)).replace("y = x.copy()", "y = 0.85 * x")
    ctx = _ctx(kernel, "effect", "Snaps")
    assert value(_check("trackEchoTime", track="Snaps", beats=0.75), ctx) == pytest.approx(0.0, abs=0.1)
    assert value(_check("trackDryKept", track="Snaps"), ctx) == pytest.approx(1.41, abs=0.02)
