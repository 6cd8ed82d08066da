"""Level detection and gain laws: dB helpers, peak/RMS followers, a compressor gain computer, clippers.

Conventions:

* dB means 20·log10 of an amplitude; :func:`db_to_gain` and :func:`gain_to_db` are :mod:`.levels`' (the
  package's one set of dB helpers, re-exported here for the devices and the kernel stdlib).
* The peak follower has instant attack and exponential release: ``e[n] = max(u[n], a·e[n-1])`` with
  ``a = exp(-1 / (release_s · sr))``. It vectorises exactly in the log domain, because
  ``ln e[n] - n ln a = max over k <= n of (ln u[k] - k ln a)``: a running maximum (numpy's
  ``maximum.accumulate``). State (the last value) is carried between calls.
* The compressor's detector follows Giannoulis, Massberg & Reiss, "Digital dynamic range compressor
  design — a tutorial and analysis" (JAES 60(6), 2012): gain computer on the level in dB (soft knee,
  their eq. 4), then the smooth *decoupled* peak detector on the gain reduction in dB (their eq. 17):
  instant-attack release stage (the running max above) followed by a one-pole attack stage.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DeviceError
from .levels import LN10_OVER_20, db_to_gain, gain_to_db

# The public API (and what the kernel stdlib re-exports). The ``*_samples`` loops are left out: they are
# plain Python until a device module compiles them with numba.
__all__ = ["db_to_gain", "gain_to_db", "release_coeff", "peak_hold_release", "PeakFollower", "RmsFollower",
           "gain_computer", "hard_clip", "soft_clip", "balance_gains"]


def release_coeff(release_s: float, *, sr: float) -> float:
    """Per-sample decay factor of an exponential release with time constant ``release_s``."""
    if not release_s > 0:
        raise DeviceError(f"release time {release_s!r} s must be > 0")
    return math.exp(-1.0 / (release_s * sr))


def peak_hold_release(u: np.ndarray, *, coeff: float, state: float = 0.0, loop=None) -> np.ndarray:
    """``e[n] = max(u[n], coeff·e[n-1])`` with ``e[-1] = state``, for non-negative ``u`` (1-D), exactly.

    Computed as a running max of ``ln u[k] - k·ln coeff`` (log domain), no Python loop; or, given
    ``loop`` (a compiled :func:`peak_hold_samples`), by the recursion itself (the two agree to rounding).

    >>> peak_hold_release(np.array([1.0, 0.0, 0.0, 2.0]), coeff=0.5).round(6).tolist()
    [1.0, 0.5, 0.25, 2.0]
    """
    u = np.asarray(u, dtype=np.float64)
    n = u.shape[0]
    if n == 0:
        return u.copy()
    if not 0.0 < coeff < 1.0:
        raise DeviceError(f"release coefficient {coeff!r} must be in (0, 1)")
    if loop is not None:
        out = np.empty(n)
        loop(np.ascontiguousarray(u), float(coeff), float(state), out)
        return out
    lna = math.log(coeff)
    k = np.arange(n, dtype=np.float64)
    with np.errstate(divide="ignore"):
        t = np.log(u) - k * lna
    start = math.log(state) + lna if state > 0 else -np.inf  # the carried value, one step decayed
    t[0] = max(t[0], start)
    np.maximum.accumulate(t, out=t)
    return np.exp(t + k * lna)


def peak_hold_samples(u, coeff, state, out):  # pragma: no cover - run compiled by numba
    """``out[n] = max(u[n], coeff·out[n-1])`` with ``out[-1] = state`` (see :func:`peak_hold_release`)."""
    e = state
    for i in range(u.shape[0]):
        e = max(u[i], coeff * e)
        out[i] = e


def compressor_samples(x, threshold_db, ratio, knee_db, makeup_db, release_coeff, attack_coeff, state, y,
                       gr):  # pragma: no cover - run compiled by numba
    """``core.comp`` frame by frame: the stereo-linked level ``max |x[c]|`` in dB, the gain law, the
    detector, and the gain. Writes the smoothed gain reduction (dB, >= 0) to ``gr`` and the compressed
    audio ``y = x · 10^((makeup_db - gr) / 20)`` to ``y``, each only if it has frames (an empty array
    asks for none of it).

    * Gain law: :func:`gain_computer`'s soft knee (Giannoulis et al. 2012, eq. 4), both branches computed
      and one selected without a branch on the level (a level wandering around the threshold would
      mispredict it).
    * Detector: the instant-attack release ``h = max(gr, release_coeff·h)`` (:func:`peak_hold_release`),
      then the one-pole attack ``s = (1 - attack_coeff)·h + z``, ``z = attack_coeff·s`` (``lfilter``'s
      transposed form). ``state`` is ``[h, z]``, updated in place.
    * Below ``10^((threshold - knee/2)/20)``, less a relative margin of 1e-9 that no rounding of the
      logarithm reaches, the law gives 0 exactly, so the logarithm is not taken there. The level is NaN
      if any channel is (``np.maximum``'s rule).

    ``20·log10`` and the gain's ``exp(· ln 10 / 20)`` (:func:`db_to_gain`) are the C library's, which numpy
    calls too where it has no SIMD version of its own (x86-64 without AVX-512): the samples are those of
    the same formulas on whole arrays. ``x`` and ``y`` are ``(channels, n)``, ``gr`` ``(n,)``.
    """
    slope = 1.0 - 1.0 / ratio
    half = knee_db / 2.0
    soft_knee = knee_db > 0
    width2 = 2.0 * knee_db if soft_knee else 1.0  # (the knee's value is only kept when there is a knee)
    b0 = 1.0 - attack_coeff
    quiet = 10.0 ** ((threshold_db - half) / 20.0) * (1.0 - 1e-9)
    apply = y.shape[1] > 0
    keep = gr.shape[0] > 0
    held = state[0]
    z = state[1]
    n_ch, n = x.shape
    for i in range(n):
        a = abs(x[0, i])
        for c in range(1, n_ch):
            b = abs(x[c, i])
            if b > a or b != b:
                a = b
        if a < quiet:
            law = 0.0
        else:
            over = 20.0 * math.log10(a) - threshold_db
            k = over + half
            knee = slope * k * k / width2
            above = over * slope if over > 0.0 else 0.0
            law = knee if soft_knee and abs(over) <= half else above
        held = max(law, release_coeff * held)
        s = b0 * held + z
        z = attack_coeff * s
        if keep:
            gr[i] = s
        if apply:
            g = math.exp((makeup_db - s) * LN10_OVER_20)
            for c in range(n_ch):
                y[c, i] = x[c, i] * g
    state[0] = held
    state[1] = z


class PeakFollower:
    """Instant-attack, exponential-release peak envelope of ``max |x|`` over channels, with state.

    >>> pf = PeakFollower(release_s=0.05, sr=48000)
    >>> env = pf.process(np.eye(1, 4800))
    >>> round(float(env[2400]), 4)  # 50 ms after a unit click: e^-1
    0.3679
    """

    def __init__(self, *, release_s: float, sr: float):
        self.coeff = release_coeff(release_s, sr=sr)
        self.state = 0.0

    def process(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        u = np.abs(x) if x.ndim == 1 else np.abs(x).max(axis=0)
        env = peak_hold_release(u, coeff=self.coeff, state=self.state)
        if env.size:
            self.state = float(env[-1])
        return env


class RmsFollower:
    """RMS envelope: a one-pole average of the mean square over channels (time constant ``window_s``).

    >>> rf = RmsFollower(window_s=0.01, sr=48000)
    >>> round(float(rf.process(np.full((2, 48000), 0.5))[-1]), 6)
    0.5
    """

    def __init__(self, *, window_s: float, sr: float):
        self.coeff = release_coeff(window_s, sr=sr)
        self._zi = np.zeros(1)

    def process(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        ms = x * x if x.ndim == 1 else (x * x).mean(axis=0)
        from scipy.signal import lfilter  # not used by the house devices (kernels have scipy pre-imported)

        a = self.coeff
        y, self._zi = lfilter([1.0 - a], [1.0, -a], ms, zi=self._zi)
        return np.sqrt(np.maximum(y, 0.0))


def gain_computer(level_db: np.ndarray, *, threshold_db: float, ratio: float, knee_db: float) -> np.ndarray:
    """Gain reduction in dB (>= 0) of a downward compressor with a quadratic soft knee.

    Giannoulis et al. 2012, eq. 4: below ``T - W/2`` nothing; above ``T + W/2`` the static curve
    ``T + (x - T)/R``; in between ``(1/R - 1)(x - T + W/2)² / (2W)``.

    >>> gain_computer(np.array([-30.0, -10.0]), threshold_db=-20, ratio=2, knee_db=0).tolist()
    [0.0, 5.0]
    """
    if not ratio >= 1.0:
        raise DeviceError(f"compressor ratio {ratio!r} must be >= 1")
    x = np.asarray(level_db, dtype=np.float64)
    over = x - threshold_db
    slope = 1.0 - 1.0 / ratio
    gr = np.maximum(over, 0.0) * slope
    if knee_db > 0:
        inside = np.abs(over) <= knee_db / 2.0
        z = over[inside] + knee_db / 2.0
        gr[inside] = slope * z * z / (2.0 * knee_db)
    return gr


def balance_gains(pan: float) -> tuple[float, float]:
    """(left, right) factors of a balance pan in -1..1 (docs/rendering.md): centre is unity on both sides;
    pan > 0 leaves the right at unity and scales the left by cos(pan·π/2); pan < 0 mirrors that; the far
    ends are exactly 0 (not cos(π/2) ≈ 6e-17).

    >>> balance_gains(0.0), balance_gains(1.0)
    ((1.0, 1.0), (0.0, 1.0))
    """
    pan = float(pan)
    if pan > 0:
        return (0.0 if pan >= 1 else math.cos(pan * math.pi / 2)), 1.0
    if pan < 0:
        return 1.0, (0.0 if pan <= -1 else math.cos(-pan * math.pi / 2))
    return 1.0, 1.0


def hard_clip(x: np.ndarray, *, ceiling: float = 1.0) -> np.ndarray:
    """Clamp to ``[-ceiling, ceiling]``.

    >>> hard_clip(np.array([-2.0, 0.5, 2.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    return np.clip(x, -ceiling, ceiling)


def soft_clip(x: np.ndarray, *, knee_dbfs: float = -3.0, ceiling_dbfs: float = -0.5) -> np.ndarray:
    """Identity below ``knee_dbfs``; above it a tanh bend that approaches ``ceiling_dbfs`` and never passes it.

    With k = knee and c = ceiling (linear): ``y = sign(x)·(k + (c - k)·tanh((|x| - k)/(c - k)))`` for
    ``|x| > k``. The slope is 1 at the knee (tanh'(0) = 1), so the bend is smooth.

    >>> float(soft_clip(np.array([0.5]))[0]), float(soft_clip(np.array([100.0]))[0]) <= 10 ** (-0.5 / 20)
    (0.5, True)
    """
    k = 10.0 ** (knee_dbfs / 20.0)
    c = 10.0 ** (ceiling_dbfs / 20.0)
    if not c > k:
        raise DeviceError(f"soft clip ceiling {ceiling_dbfs} dBFS must be above its knee {knee_dbfs} dBFS")
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    over = a > k
    y = x.copy()
    y[over] = np.sign(x[over]) * (k + (c - k) * np.tanh((a[over] - k) / (c - k)))
    return y


def window_max(x: np.ndarray, *, size: int) -> np.ndarray:
    """``out[j] = max(x[j : j + size])`` for every window that fits (``len(x) - size + 1`` values).

    The van Herk / Gil-Werman running maximum: cut ``x`` into blocks of ``size``; a window meets at most
    two blocks, so its maximum is the larger of the suffix maximum of the first block (from j) and the
    prefix maximum of the next (to j + size - 1). Two ``maximum.accumulate`` passes, O(n) for any size;
    a maximum is exact, so this equals any other sliding-max (``scipy.ndimage.maximum_filter1d``).

    >>> window_max(np.array([1.0, 3.0, 2.0, 0.0, 5.0]), size=2).tolist()
    [3.0, 3.0, 2.0, 5.0]
    """
    if int(size) != size or size < 1:
        raise DeviceError(f"window size {size!r} must be a whole number >= 1")
    x = np.asarray(x, dtype=np.float64)
    size = int(size)
    count = x.shape[0] - size + 1
    if count <= 0:
        return np.zeros(0)
    blocks = -(-x.shape[0] // size)
    padded = np.full(blocks * size, -np.inf)
    padded[:x.shape[0]] = x
    rows = padded.reshape(blocks, size)
    ahead = np.maximum.accumulate(rows, axis=1).reshape(-1)
    behind = np.maximum.accumulate(rows[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    return np.maximum(behind[:count], ahead[size - 1:size - 1 + count])
