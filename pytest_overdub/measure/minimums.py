"""The shortest signal each figure is defined on; anything shorter is refused with a :class:`TooShortError`.

The rule: a figure needs one whole window of what it is defined over, never a partial one.

* ``lufs`` and the momentary series: 400 ms, one BS.1770-4 gating block; ``rmsGated``, ``peakGated`` and
  ``crestGated`` likewise (one unweighted gating block).
* ``lufsShortMax``, ``lra`` and the short-term series: 3 s, one short-term window (EBU Tech 3342 reads the
  range off short-term loudness).
* ``truePeak``: 24 samples, the interpolator's span (24 taps per phase).
* ``bandRel.*``, ``band.*``, ``centroid``: 4096 samples, one FFT frame of the long-term spectrum.
* ``correlation``, ``sideDb``, ``side.*``: 50 ms, one period of 20 Hz, the lowest audible frequency
  (shorter, the figure depends on where a low cycle was cut).
* ``onsetsPerSec``: 500 ms, the adaptive threshold's median window.
* the key: 2 s, a bar of 4/4 at 120 bpm (a key is heard over chords, not within one).
* ``peak``, ``rms``, ``crest``: defined on any signal (one sample).

The message names the figure, the signal's length and the minimum, e.g. ``too short for integrated
loudness: 50 ms, needs 400 ms``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_overdub.errors import TooShortError
from pytest_overdub.dsp import oversample


@dataclass(frozen=True)
class Minimum:
    """A figure's minimum length: in seconds (scaled by the rate) or in samples (the same at every rate)."""

    label: str
    seconds: float | None = None
    samples: int | None = None

    def samples_at(self, sr: int) -> int:
        """The minimum in samples at ``sr`` (a time minimum rounds up to whole samples)."""
        if self.samples is not None:
            return self.samples
        return math.ceil(self.seconds * sr - 1e-6)

    def shortfall(self, n: int, sr: int) -> str | None:
        """The refusal text for an ``n``-sample signal at ``sr``, or None when it is long enough."""
        if n >= self.samples_at(sr):
            return None
        if self.samples is not None:
            need = f"{self.samples} samples"
            have = f"{n} sample{'s' if n != 1 else ''} ({_duration(n / sr)})"
        else:
            need, have = _duration(self.seconds), _duration(n / sr)
        return f"too short for {self.label}: {have}, needs {need}"


def _duration(seconds: float) -> str:
    """``2.5 s``, ``400 ms``, ``0.0208 ms``: three significant figures, no trailing zeros."""
    return f"{seconds:.3g} s" if seconds >= 1.0 else f"{seconds * 1000:.3g} ms"


#: Figure (a metric name of docs/meters.md, or "key", "momentary", "shortTerm", "bands", "stereo") -> its minimum.
MINIMUMS: dict[str, Minimum] = {
    "lufs": Minimum("integrated loudness", seconds=0.4),
    "momentary": Minimum("momentary loudness", seconds=0.4),
    "rmsGated": Minimum("gated levels", seconds=0.4),
    "lufsShortMax": Minimum("short-term loudness", seconds=3.0),
    "shortTerm": Minimum("short-term loudness", seconds=3.0),
    "lra": Minimum("loudness range", seconds=3.0),
    "truePeak": Minimum("true peak", samples=oversample.TAPS_PER_PHASE),
    "bands": Minimum("band levels", samples=4096),
    "centroid": Minimum("the spectral centroid", samples=4096),
    "stereo": Minimum("stereo correlation and side level", seconds=0.05),
    "onsetsPerSec": Minimum("the onset rate", seconds=0.5),
    "key": Minimum("the key", seconds=2.0),
}


def figure_of(metric: str) -> str | None:
    """The :data:`MINIMUMS` entry a metric name falls under (None: defined on any signal)."""
    if metric.startswith(("bandRel.", "band.")):
        return "bands"
    if metric in ("correlation", "sideDb") or metric.startswith("side."):
        return "stereo"
    if metric in ("rmsGated", "peakGated", "crestGated"):
        return "rmsGated"
    if metric in ("lufsMono", "lufsShare"):
        return "lufs"
    return metric if metric in MINIMUMS else None


def shortfall(figure: str, n: int, sr: int) -> str | None:
    """The refusal text when an ``n``-sample signal at ``sr`` is too short for ``figure``, else None."""
    key = figure_of(figure)
    return None if key is None else MINIMUMS[key].shortfall(n, sr)


def require(figure: str, n: int, sr: int) -> None:
    """Raise :class:`TooShortError` when an ``n``-sample signal at ``sr`` is too short for ``figure``."""
    reason = shortfall(figure, n, sr)
    if reason is not None:
        raise TooShortError(reason)
