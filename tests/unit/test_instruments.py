"""The six house instruments: measured sound requirements plus the contract invariants."""

import numpy as np
import pytest

from pytest_overdub.devices.base import NoteEvent
from pytest_overdub.devices.drums import Drums
from pytest_overdub.devices.synths import Bass, Keys, Pad, Pluck, Poly

SR = 48000
ALL = [Drums, Bass, Keys, Pluck, Pad, Poly]


def note(cls, pitch, *, start=0.0, dur=0.5, vel=0.8, index=0, **params):
    return NoteEvent(start, dur, pitch, vel, index, cls.spec.defaults() | params)


def render(cls, notes, seconds=1.5, seed=11, **params):
    dev = cls(sr=SR, tempo_bpm=120, seed=seed, params=cls.spec.defaults() | params)
    return dev.render(notes, n_frames=int(seconds * SR))


def power_spectrum(x):
    spec = np.abs(np.fft.rfft(x)) ** 2
    return np.fft.rfftfreq(x.shape[-1], 1 / SR), spec


def share(x, lo, hi):
    f, p = power_spectrum(x)
    return p[(f >= lo) & (f < hi)].sum() / p.sum()


def typical(cls):
    pitch = 38 if cls is Drums else 57
    return [note(cls, pitch if cls is not Drums else p, start=0.3 * i, dur=0.25, index=i)
            for i, p in enumerate([36, 42, 38, 42, 46, 49] if cls is Drums else [57, 60, 64, 67, 69, 72])]


# ------------------------------------------------------------------ contract invariants


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_contract_invariants(cls):
    notes = typical(cls)
    a = render(cls, notes, seconds=2.5)
    b = render(cls, notes, seconds=2.5)
    assert a.shape == (2, int(2.5 * SR)) and a.dtype == np.float64
    assert np.isfinite(a).all()
    assert np.array_equal(a, b)  # bit-identical on a second render
    assert np.abs(a).max() > 1e-3
    assert not np.array_equal(a, render(cls, notes, seconds=2.5, seed=12)) or cls in (Bass,)
    assert not render(cls, [], seconds=0.5).any()


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_note_at_buffer_end_does_not_overflow(cls):
    n = SR // 2
    pitch = 36 if cls is Drums else 57
    y = cls(sr=SR, tempo_bpm=120, seed=1, params={}).render(
        [note(cls, pitch, start=(n - 10) / SR, dur=2.0), note(cls, pitch, start=1.0, index=1)], n_frames=n)
    assert y.shape == (2, n) and np.isfinite(y).all() and np.abs(y[:, -10:]).max() > 0


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_single_note_level(cls):
    pitch = 36 if cls is Drums else (45 if cls is Bass else 60)
    y = render(cls, [note(cls, pitch, dur=1.0 if cls is not Pad else 2.0)], seconds=3.0)
    peak_db = 20 * np.log10(np.abs(y).max())
    assert -14.0 <= peak_db <= -5.0, peak_db


# ------------------------------------------------------------------ drums


@pytest.mark.parametrize("kit", [0, 1, 2])
def test_kick_energy_is_low_and_centred(kit):
    y = render(Drums, [note(Drums, 36, kit=kit)], seconds=1.5, kit=kit)
    assert np.array_equal(y[0], y[1])
    f, p = power_spectrum(y[0])
    centroid = (f * p).sum() / p.sum()
    assert 40.0 <= centroid <= 100.0, centroid
    assert share(y[0], 0, 150) > 0.85


@pytest.mark.parametrize("pitch", [38, 40])
def test_snare_is_centred_even_with_width(pitch):
    y = render(Drums, [note(Drums, pitch, width=1.0, room=1.0)], width=1.0)
    assert np.array_equal(y[0], y[1])


@pytest.mark.parametrize("kit", [0, 1, 2])
@pytest.mark.parametrize("pitch", [42, 44, 46])
def test_hats_live_above_6k(kit, pitch):
    y = render(Drums, [note(Drums, pitch, kit=kit, room=0.0)], kit=kit)
    assert share(y.sum(axis=0), 6000, SR / 2) > 0.9


def test_kits_sound_different():
    kicks = [render(Drums, [note(Drums, 36, kit=k)], kit=k)[0] for k in (0, 1, 2)]
    for i in range(3):
        for j in range(i + 1, 3):
            assert np.abs(kicks[i] - kicks[j]).max() > 0.05


def test_open_hat_is_choked_by_closed_hat():
    open_only = render(Drums, [note(Drums, 46, room=0.0)], room=0.0)
    choked = render(Drums, [note(Drums, 46, room=0.0), note(Drums, 42, start=0.1, index=1, room=0.0)], room=0.0)
    closed = render(Drums, [note(Drums, 42, start=0.1, index=1, room=0.0)], room=0.0)
    late = slice(int(0.25 * SR), int(0.45 * SR))  # after the choke; the unchoked open hat rings on
    assert np.abs(open_only[:, late]).max() > 0.002
    assert np.abs((choked - closed)[:, late]).max() == 0.0


def test_width_spreads_toms_and_tone_tilts():
    narrow = render(Drums, [note(Drums, 50, width=0.0)], width=0.0)
    wide = render(Drums, [note(Drums, 50, width=1.0)], width=1.0)
    assert np.array_equal(narrow[0], narrow[1]) and not np.array_equal(wide[0], wide[1])
    dark = render(Drums, [note(Drums, 38, tone=-1.0, room=0.0)])
    bright = render(Drums, [note(Drums, 38, tone=1.0, room=0.0)])
    assert share(bright[0], 1000, SR / 2) > share(dark[0], 1000, SR / 2) + 0.2


def test_cymbal_models_differ():
    ys = [render(Drums, [note(Drums, 49, cym_model=m)], cym_model=m)[0] for m in (0, 1, 2)]
    assert all(share(y, 3000, SR / 2) > 0.7 for y in ys)
    assert np.abs(ys[0] - ys[1]).max() > 0.01 and np.abs(ys[1] - ys[2]).max() > 0.01


# ------------------------------------------------------------------ bass


@pytest.mark.parametrize("pitch", [33, 40, 45])  # A1, E2, A2
def test_bass_energy_below_250(pitch):
    y = render(Bass, [note(Bass, pitch, dur=1.0)])
    assert np.array_equal(y[0], y[1])  # mono
    assert share(y[0], 0, 250) >= 0.7


def _pitch_track(x, frame):
    """Frequency of the strongest low harmonic in one frame (zero-padded FFT, 1 Hz resolution)."""
    seg = x[frame:frame + 4800] * np.hanning(4800)
    spec = np.abs(np.fft.rfft(seg, SR))
    return np.argmax(spec[20:400]) + 20


def test_bass_legato_glide_and_retrigger():
    notes = [note(Bass, 45, dur=0.5, glide=100.0, sub=0.0),
             note(Bass, 52, start=0.5, dur=0.5, index=1, glide=100.0, sub=0.0)]
    y = render(Bass, notes, sub=0.0, glide=100.0)[0]
    # the sub is off, so the strongest partial is the fundamental: 110 Hz, then 164.8 Hz after the glide
    assert abs(_pitch_track(y, int(0.2 * SR)) - 110) <= 2
    assert abs(_pitch_track(y, int(0.75 * SR)) - 164.8) <= 2
    env = np.abs(y)
    # LEGATO: the amplitude does not dip at the join; RETRIG: it restarts from the held level (no gap)
    join = slice(int(0.49 * SR), int(0.51 * SR))
    assert env[join].max() > 0.3 * env[: int(0.5 * SR)].max()
    legato = render(Bass, notes, sub=0.0)
    retrig = render(Bass, [note(Bass, 45, dur=0.5, mode=1), note(Bass, 52, start=0.5, dur=0.5, index=1, mode=1)])
    assert not np.array_equal(legato, retrig)


def test_bass_is_monophonic():
    chord = render(Bass, [note(Bass, 45, dur=1.0), note(Bass, 52, start=0.0, dur=1.0, index=1)])[0]
    single = render(Bass, [note(Bass, 52, start=0.0, dur=1.0, index=1)])[0]
    # both notes start together: one voice plays the later-sorted note only, never a sum
    assert np.abs(chord).max() < 1.3 * np.abs(single).max()


# ------------------------------------------------------------------ keys


def _presence_db(**params):
    y = render(Keys, [note(Keys, 69, dur=1.0, **params)], **params)
    return 10 * np.log10(share(y.sum(axis=0), 4000, 8000))


@pytest.mark.parametrize("voice", [0, 1])
def test_keys_bright_and_bell_raise_presence(voice):
    lo, hi = _presence_db(voice=voice, bright=0.0), _presence_db(voice=voice, bright=1.0)
    assert hi - lo >= 3.0, (lo, hi)
    lo, hi = _presence_db(voice=voice, bell=0.0), _presence_db(voice=voice, bell=1.0)
    assert hi - lo >= 3.0, (lo, hi)


def test_keys_tremolo_and_decay():
    steady = render(Keys, [note(Keys, 60, dur=1.0, trem=0.0)], trem=0.0)
    trem = render(Keys, [note(Keys, 60, dur=1.0, trem=1.0, rate=4.0)], trem=1.0, rate=4.0)
    assert np.array_equal(steady[0], steady[1]) and not np.array_equal(trem[0], trem[1])
    short = render(Keys, [note(Keys, 60, dur=1.0, decay=0.3)])
    long = render(Keys, [note(Keys, 60, dur=1.0, decay=2.5)])
    late = slice(int(0.7 * SR), int(0.9 * SR))
    assert np.abs(long[:, late]).max() > 4 * np.abs(short[:, late]).max()


# ------------------------------------------------------------------ pluck


def test_pluck_pitch_is_right():
    y = render(Pluck, [note(Pluck, 57, dur=1.0, spread=0.0, body=0.0)], body=0.0)[0]
    seg = y[int(0.1 * SR): int(1.1 * SR)] * np.hanning(SR)
    spec = np.abs(np.fft.rfft(seg, 8 * SR))
    f = np.fft.rfftfreq(8 * SR, 1 / SR)
    band = (f > 150) & (f < 300)
    f0 = f[band][np.argmax(spec[band])]
    assert abs(f0 - 220.0) / 220.0 < 0.01, f0


@pytest.mark.parametrize("decay", [0.5, 1.5])
def test_pluck_decay_t60(decay):
    y = render(Pluck, [note(Pluck, 57, dur=3.0, decay=decay, body=0.0)], seconds=3.0, body=0.0).sum(axis=0)
    frame = SR // 100
    rms = np.sqrt(np.mean(y[: len(y) // frame * frame].reshape(-1, frame) ** 2, axis=1))
    db = 20 * np.log10(np.maximum(rms, 1e-12))
    t = np.arange(db.shape[0]) * 0.01
    use = (t > 0.05) & (db > db.max() - 40) & (t < 0.9 * decay)
    slope = np.polyfit(t[use], db[use], 1)[0]  # dB per second
    t60 = -60.0 / slope
    assert abs(t60 - decay) / decay < 0.3, t60


def test_pluck_mute_damps_after_note_off():
    held = render(Pluck, [note(Pluck, 57, dur=1.5, mute=0.05)], mute=0.05)
    released = render(Pluck, [note(Pluck, 57, dur=0.2, mute=0.05)], mute=0.05)
    late = slice(int(0.5 * SR), int(1.0 * SR))
    assert np.abs(released[:, late]).max() < 0.01 * np.abs(held[:, late]).max()


# ------------------------------------------------------------------ pad and poly


def test_pad_tone_and_chorus():
    dark = render(Pad, [note(Pad, 60, dur=1.0, tone=400.0)], seconds=2.0, tone=400.0)
    bright = render(Pad, [note(Pad, 60, dur=1.0, tone=8000.0)], seconds=2.0, tone=8000.0)
    assert share(bright.sum(0), 1000, SR / 2) > 10 * share(dark.sum(0), 1000, SR / 2)
    def corr(y):
        return np.sum(y[0] * y[1]) / np.sqrt(np.sum(y[0] ** 2) * np.sum(y[1] ** 2))

    def pad(chorus, space):
        return render(Pad, [note(Pad, 60, dur=1.0, chorus=chorus, detune=0.0, space=space)], seconds=2.0)

    dry = corr(pad(0.0, 0.0))
    assert corr(pad(1.0, 0.0)) < dry - 0.1  # the chorus widens
    assert 0.0 < corr(pad(0.0, 1.0)) < dry  # the wash widens too, and stays mono-compatible


def test_pad_attack_is_slow():
    y = render(Pad, [note(Pad, 60, dur=2.0, attack=1.0)], seconds=3.0, attack=1.0)
    early = np.abs(y[:, : int(0.1 * SR)]).max()
    assert early < 0.25 * np.abs(y).max()


def test_poly_filter_envelope_and_waves():
    up = render(Poly, [note(Poly, 48, dur=0.5, envamt=1.0, cutoff=300.0)])
    down = render(Poly, [note(Poly, 48, dur=0.5, envamt=-1.0, cutoff=300.0)])
    first = slice(0, int(0.1 * SR))
    assert share(up[0, first], 2000, SR / 2) > 10 * share(down[0, first], 2000, SR / 2)
    saw = render(Poly, [note(Poly, 48, wave=0, detune=0.0, sub=0.0, spread=0.0)])[0]
    sq = render(Poly, [note(Poly, 48, wave=1, detune=0.0, sub=0.0, spread=0.0)])[0]
    f, ps = power_spectrum(saw)
    _, pq = power_spectrum(sq)
    h2 = np.abs(f - 2 * 130.81) < 3
    h1 = np.abs(f - 130.81) < 3
    # a square has no 2nd harmonic; a saw's is 6 dB under its fundamental
    assert ps[h2].sum() / ps[h1].sum() > 0.15 and pq[h2].sum() / pq[h1].sum() < 0.01


def test_poly_unison_spreads():
    y = render(Poly, [note(Poly, 60, unison=1.0, spread=1.0, detune=20.0)])
    assert not np.array_equal(y[0], y[1])
    mono = render(Poly, [note(Poly, 60, spread=0.0)])
    assert np.array_equal(mono[0], mono[1])


def test_bass_retrig_restarts_the_filter_envelope():
    def join_brightness(mode):
        notes = [note(Bass, 45, dur=0.6, mode=mode, fdecay=0.05),
                 note(Bass, 45, start=0.6, dur=0.6, index=1, mode=mode, fdecay=0.05)]
        y = render(Bass, notes)[0]
        return share(y[int(0.6 * SR): int(0.65 * SR)], 500, SR / 2)
    # RETRIG reopens the filter at the second note; LEGATO keeps it closed (its envelope ran on)
    assert join_brightness(1) > 1.5 * join_brightness(0)  # measured: 0.051 vs 0.026


def test_poly_glide_slides_from_the_previous_note():
    notes = [note(Poly, 57, dur=0.3, glide=200.0, detune=0.0, sub=0.0),
             note(Poly, 69, start=0.3, dur=0.5, index=1, glide=200.0, detune=0.0, sub=0.0)]
    y = render(Poly, notes)[0]
    early = y[int(0.3 * SR): int(0.3 * SR) + 2400]  # first 50 ms of the second note: still near 220 Hz
    f, p = power_spectrum(early * np.hanning(early.shape[0]))
    band = (f > 150) & (f < 600)
    assert f[band][np.argmax(p[band])] < 380
    late = y[int(0.6 * SR): int(0.7 * SR)]
    f, p = power_spectrum(late * np.hanning(late.shape[0]))
    band = (f > 150) & (f < 600)
    assert abs(f[band][np.argmax(p[band])] - 440.0) < 15


# ------------------------------------------------------------------ compiled kernels against their plain forms


def test_fixed_pitch_oscillator_bank_matches_the_recursive_one_and_the_plain_square():
    from pytest_overdub.devices.synths import osc_bank, osc_bank_fixed
    from pytest_overdub.dsp.signals import square

    n, inc = 30000, 311.0 / SR
    ratios, ph0 = np.array([1.0, 1.013, 0.987]), np.array([0.1, 0.45, 0.8])
    gl, gr = np.array([0.7, 1.0, 0.0]), np.array([0.7, 0.0, 1.0])
    for shape, pw, sub in ((0, 0.5, 0.0), (1, 0.3, 0.25)):
        fixed = osc_bank_fixed(inc, n, ratios, ph0, gl, gr, shape, pw, sub)
        recursive = osc_bank(np.full(n, inc), ratios, ph0, gl, gr, shape, pw, sub)
        assert np.abs(fixed - recursive).max() < 1e-9  # only the accumulated phase's rounding differs
    one = np.ones(1)
    pulse = osc_bank_fixed(inc, n, one, np.array([0.37]), one, one, 1, 0.5, 0.0)[0]
    assert np.array_equal(pulse, square(311.0, sr=SR, n_frames=n, phase0=0.37))  # bit for bit


def test_room_taps_impulse_response_is_decaying_copies_at_each_tap():
    from pytest_overdub.devices.synths import tapped_lowpassed

    x = np.zeros(600)
    x[0] = 1.0
    delays, gains, coeff = np.array([3, 17, 250]), np.array([0.5, -0.25, 0.125]), 0.3
    y = tapped_lowpassed(x, delays, gains, coeff)
    n = np.arange(600)
    # closed form: each tap starts a one-pole response coeff (1 - coeff)^(n - d) at its delay d
    expect = sum(g * np.where(n >= d, coeff * (1.0 - coeff) ** np.maximum(n - d, 0), 0.0) for d, g in zip(delays, gains))
    assert np.allclose(y, expect, rtol=0, atol=1e-12)
    assert not y[:3].any()


def test_a_drum_room_decays_to_exact_zero_not_to_subnormals():
    """A kick and its room followed by seconds of silence: the room's one-pole must end at exact 0.
    Left alone it settles on a subnormal number (coeff * state rounds to 0 there), and every later pass
    over the stem then runs subnormal arithmetic, about a hundred times slower."""
    y = render(Drums, [note(Drums, 36, dur=0.1, room=1.0)], seconds=6.0, room=1.0)
    subnormal = (y != 0) & (np.abs(y) < np.finfo(np.float64).tiny)
    assert int(subnormal.sum()) == 0
    assert np.all(y[:, -SR:] == 0.0)  # the last second is silent, exactly
    assert np.abs(y[:, : SR // 2]).max() > 0.1  # and the kick was there


def test_pluck_body_in_one_pass_is_the_two_resonances_filtered_one_after_the_other():
    """The fused body (mid, two biquads from rest, levels, added into both sides) against sosfilt of the
    mid through each: a burst then silence, so the decays reach the filters' rest threshold too."""
    from pytest_overdub.devices.synths import body_resonance_add
    from pytest_overdub.dsp.compiled import sosfilt
    from pytest_overdub.dsp.filters import rbj_biquad

    rng = np.random.default_rng(11)
    buf = np.zeros((2, 14 * SR))  # the 110 Hz resonance falls below 1e-300 after about 12 s
    buf[:, :SR // 10] = rng.uniform(-1.0, 1.0, (2, SR // 10))
    sa, sb = rbj_biquad("bp", freq_hz=110.0, sr=SR, q=6.0), rbj_biquad("bp", freq_hz=240.0, sr=SR, q=8.0)
    mid = 0.5 * (buf[0] + buf[1])
    wet = 0.7 * (0.8 * sosfilt(sa[None, :], mid) + 0.5 * sosfilt(sb[None, :], mid))
    out = rng.standard_normal((2, buf.shape[1]))
    expect = out + wet
    body_resonance_add(buf, sa, 0.8, sb, 0.5, 0.7, out)
    assert np.array_equal(out, expect)
    own = buf.copy()
    body_resonance_add(own, sa, 0.8, sb, 0.5, 0.7, own)  # written over its own input
    assert np.array_equal(own, buf + wet)
    assert wet[-1] == 0.0 and np.abs(wet).max() > 0.01  # rang, then came to rest exactly


def test_keys_tine_phases_and_adds_are_the_numpy_steps():
    from pytest_overdub.devices.synths import add_times, add_times_env, keys_tine_phases

    rng = np.random.default_rng(5)
    m, m_fm, m_ding = 5000, 3000, 1200
    body, fast, ding = rng.standard_normal(m), rng.uniform(0, 1, m_fm), rng.uniform(0, 1, m_ding)
    inc, ph0, two_pi, k_fm, k_tine = 440.0 / SR, 0.37, 2.0 * np.pi, 1.7, 0.9
    wf = np.arange(m_fm, dtype=np.float64) * inc
    wf += ph0
    wf *= two_pi
    index, tine = np.empty(m_fm), np.empty(m_ding)
    keys_tine_phases(body, fast, ding, inc, ph0, two_pi, k_fm, k_tine, index, tine)
    assert np.array_equal(index, k_fm * fast * body[:m_fm] + wf)
    assert np.array_equal(tine, k_tine * ding * body[:m_ding] + 14.0 * wf[:m_ding])
    dst = body.copy()
    add_times(dst, tine, 0.3, ding)
    expect = body.copy()
    expect[:m_ding] += tine * (0.3 * ding)
    assert np.array_equal(dst, expect)
    bus = rng.standard_normal(m + 100)
    expect = bus.copy()
    expect[100:] += (body * fast[0]) * 0.36
    add_times_env(bus, 100, body, np.full(m, fast[0]), 0.36)
    assert np.array_equal(bus, expect)


def test_a_drum_hit_and_the_bass_are_added_in_as_the_numpy_steps_add_them():
    from pytest_overdub.devices.drums import add_hit
    from pytest_overdub.devices.synths import add_driven, add_panned

    rng = np.random.default_rng(9)
    mono = rng.standard_normal(700)
    for panned, gl, gr, room in ((False, 1.0, 1.0, 0.0), (True, 0.61, 1.27, 0.35)):
        buf, send = rng.standard_normal((2, 1000)), rng.standard_normal(1000)
        want_buf, want_send = buf.copy(), send.copy()
        want_buf[0, 300:] += gl * mono if panned else mono
        want_buf[1, 300:] += gr * mono if panned else mono
        if room > 0:
            want_send[300:] += room * mono
        add_hit(buf, send, 300, mono, gl, gr, panned, room)
        assert np.array_equal(buf, want_buf) and np.array_equal(send, want_send)
    out, amp = rng.standard_normal((2, 1000)), rng.uniform(0.0, 1.0, 700)
    want = out.copy()
    want[:, 300:] += (mono / 1.4) * (amp * 0.55)
    add_driven(out, 300, mono, 1.4, amp, 0.55)
    assert np.array_equal(out, want)
    want[0, 300:] += 0.8 * mono
    want[1, 300:] += 1.1 * mono
    add_panned(out, 300, mono, 0.8, 1.1)
    assert np.array_equal(out, want)
