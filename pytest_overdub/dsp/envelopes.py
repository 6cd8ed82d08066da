"""Envelopes as whole arrays: ADSR, attack-decay (AR) and exponential decay.

Conventions:

* An envelope is a 1-D float64 array of gains 0..1, sample 0 at the note's onset, at sample rate ``sr``.
* Attacks are linear from 0 to 1 over ``attack_s``.
* Decays are exponential and their times are **T60s**: ``decay_s`` is the time the level takes to fall
  60 dB (a factor 1000) of the way toward its target, ``exp(-ln(1000) * t / decay_s)``.
* Releases start from whatever level the envelope has at gate-off and fall exponentially (T60 shape)
  to **exactly zero** at ``release_s``: the curve ``(exp(-k x) - exp(-k)) / (1 - exp(-k))`` with
  ``x = t / release_s`` and ``k = ln(1000)``, so truncating a note at the end of its release never clicks.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DeviceError

#: ln(1000): a T60 decay is ``exp(-LN1000 * t / t60)``.
LN1000 = math.log(1000.0)


def _check_times(**times: float) -> None:
    for name, value in times.items():
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise DeviceError(f"{name} must be a finite time >= 0 s, got {value!r}")


def _frames(seconds: float, sr: int) -> int:
    return int(math.ceil(seconds * sr - 1e-9))


def exp_decay(n_frames: int, *, sr: int, t60_s: float) -> np.ndarray:
    """``exp(-ln(1000) t / t60_s)``: 1 at sample 0, 0.001 (-60 dB) at ``t60_s``."""
    _check_times(t60_s=t60_s)
    t = np.arange(int(n_frames), dtype=np.float64) / sr
    if t60_s == 0:
        return (t == 0).astype(np.float64)
    return np.exp(-LN1000 / t60_s * t)


def release_curve(n_frames: int, *, sr: int, release_s: float) -> np.ndarray:
    """The release shape: 1 at sample 0, exponential (T60 shape), exactly 0 from ``release_s`` on."""
    _check_times(release_s=release_s)
    t = np.arange(int(n_frames), dtype=np.float64)
    t /= sr
    if release_s <= 0:
        return (t == 0).astype(np.float64)
    t /= release_s
    np.minimum(t, 1.0, out=t)
    t *= -LN1000
    np.exp(t, out=t)
    tail = math.exp(-LN1000)
    t -= tail
    t /= 1.0 - tail
    return t


def _attack_decay(n: int, *, sr: int, attack_s: float, decay_s: float, sustain: float,
                  out: np.ndarray | None = None) -> np.ndarray:
    """Attack then decay toward ``sustain``, ``n`` samples, written into ``out[:n]`` when given (in place,
    no temporaries: the values are those of the plain expressions)."""
    a = max(attack_s, 1.0 / sr)
    n_att = min(n, int(math.ceil(a * sr - 1e-9)))  # samples with t < a
    out = np.empty(n) if out is None else out[:n]
    head = out[:n_att]
    head[:] = np.arange(n_att, dtype=np.float64)
    head /= a * sr
    tail = out[n_att:]
    if decay_s > 0:
        tail[:] = np.arange(n_att, n, dtype=np.float64)
        tail /= sr
        tail -= a
        tail *= -LN1000 / decay_s
        np.exp(tail, out=tail)
        if sustain != 0.0:
            tail *= 1.0 - sustain
            tail += sustain
    else:
        tail[:] = sustain
    return out


def adsr(gate_s: float, *, sr: int, attack_s: float, decay_s: float, sustain: float, release_s: float,
         n_frames: int | None = None) -> np.ndarray:
    """ADSR for a note held ``gate_s`` seconds: length ``ceil((gate_s + release_s) * sr)`` by default.

    Attack linear to 1, decay exponential (T60 ``decay_s``) toward ``sustain`` (0..1), release from the
    level reached at gate-off (even mid-attack) to exactly 0 at ``release_s`` after it. ``n_frames``
    truncates or zero-pads the result.
    """
    _check_times(gate_s=gate_s, attack_s=attack_s, decay_s=decay_s, release_s=release_s)
    if not 0.0 <= sustain <= 1.0:
        raise DeviceError(f"sustain must be in 0..1, got {sustain!r}")
    total = _frames(gate_s + release_s, sr)
    n = total if n_frames is None else int(n_frames)
    out = np.empty(n)
    gate = min(_frames(gate_s, sr), n)
    m = min(total, n)
    held = _attack_decay(min(gate + 1, m), sr=sr, attack_s=attack_s, decay_s=decay_s, sustain=sustain, out=out)
    if m > gate:
        level = held[gate] if gate < held.shape[0] else 0.0
        rel = out[gate:m]
        rel[:] = release_curve(m - gate, sr=sr, release_s=release_s)
        rel *= level
    out[m:] = 0.0
    return out


def ar(n_frames: int, *, sr: int, attack_s: float, decay_s: float) -> np.ndarray:
    """Percussive attack-decay: linear attack to 1 over ``attack_s``, then exponential decay (T60)."""
    _check_times(attack_s=attack_s, decay_s=decay_s)
    return _attack_decay(int(n_frames), sr=sr, attack_s=attack_s, decay_s=decay_s, sustain=0.0)
