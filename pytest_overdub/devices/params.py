"""Parameter tables of the house devices (docs/rendering.md; ``overdub devices`` prints them), as plain data.

This module imports nothing heavy: ops are validated against these tables, and the plugin may load it
without numpy. The keys, ranges and defaults are the Overdub studio's, so studio songs and ops logs mean
the same here; ``core.comp`` and ``core.gain`` are ours.

Conventions:

* A *switch* stores the index of its option (``kit: 2`` is DUST) and snaps to whole numbers.
* ``log`` marks a control whose knob is logarithmic; it changes nothing about validation, only how a
  person would sweep it.
* :meth:`Param.coerce` is the one reading of a param value, for song files, ops, the renderer and
  kernels alike: a real number (never a bool or a string of digits; a switch also takes an option's
  name), finite, inside ``[min, max]`` (songs and ops refuse a value outside it; the renderer and kernels
  clamp, ``clamp=True``), snapped to the step.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from ..errors import DeviceError


@dataclass(frozen=True)
class Param:
    """One device parameter: its key, range, default, unit and (for a switch) options."""

    key: str
    label: str
    min: float
    max: float
    default: float
    unit: str = ""
    log: bool = False
    options: tuple[str, ...] = ()
    step: float | None = None

    @property
    def is_switch(self) -> bool:
        return bool(self.options)

    def allowed(self) -> str:
        """What a value may be, in words: ``"0..1"``, ``"40..8000 Hz"`` or ``"0..5 (FIELD=0, ...)"``."""
        if self.options:
            names = ", ".join(f"{name}={i}" for i, name in enumerate(self.options))
            return f"an option index 0..{len(self.options) - 1} ({names})"
        unit = f" {self.unit}" if self.unit else ""
        return f"{_num(self.min)}..{_num(self.max)}{unit}"

    def coerce(self, value: object, *, clamp: bool = False) -> float:
        """``value`` read as this param's float, snapped to the step; :class:`DeviceError` saying what is
        allowed if it is not a number (a switch also takes an option's name) or, unless ``clamp``, if it
        lies outside ``[min, max]`` (``clamp=True`` clamps instead)."""
        if isinstance(value, str) and self.options:
            names = [o.lower() for o in self.options]
            if value.lower() in names:
                return float(names.index(value.lower()))
        try:
            v = real_number(value)
        except DeviceError:
            raise DeviceError(f"{self.key}: {value!r} is not a number; allowed {self.allowed()}") from None
        if not clamp and (v < self.min - 1e-9 or v > self.max + 1e-9):
            raise DeviceError(f"{self.key}: {_num(v)} is out of range; allowed {self.allowed()}")
        return self.snap(v)

    def check(self, value: object) -> float:
        """:meth:`coerce` refusing a value outside the range (how songs and ops read a value)."""
        return self.coerce(value, clamp=False)

    def snap(self, value: float) -> float:
        """Clamp to the range and snap to the step (switches snap to whole option indices)."""
        v = min(max(float(value), self.min), self.max)
        step = 1.0 if self.options else self.step
        if step:
            v = self.min + round((v - self.min) / step) * step
            v = min(max(v, self.min), self.max)
        return v


def real_number(value: object) -> float:
    """``value`` as a finite float if it is a real number (int, float, numpy scalar; never a bool or a
    string), else :class:`DeviceError`. How any param value of any device is read."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or type(value).__name__ == "bool_":
        raise DeviceError(f"{value!r} is not a number")
    try:
        v = float(value)
    except OverflowError:  # an int too large for a float
        raise DeviceError(f"{value!r} is not a finite number") from None
    if not math.isfinite(v):
        raise DeviceError(f"{value!r} is not a finite number")
    return v


@dataclass(frozen=True)
class DeviceSpec:
    """A device's identity and parameter table."""

    id: str
    kind: str  # "instrument" | "effect"
    name: str
    description: str
    params: tuple[Param, ...] = field(default_factory=tuple)

    def param(self, key: str) -> Param:
        for p in self.params:
            if p.key == key:
                return p
        known = ", ".join(p.key for p in self.params)
        raise DeviceError(f"{self.id} has no parameter {key!r}; its parameters are: {known}")

    def defaults(self) -> dict[str, float]:
        return {p.key: float(p.default) for p in self.params}

    def resolve(self, params: dict[str, object] | None) -> dict[str, float]:
        """Defaults overlaid with ``params``, each clamped and snapped; unknown keys and non-numbers raise."""
        out = self.defaults()
        for key, value in (params or {}).items():
            out[key] = self.param(key).coerce(value, clamp=True)
        return out


def _num(v: float) -> str:
    return f"{v:g}"


def _p(key, lo, hi, default, unit="", *, label=None, log=False, options=(), step=None) -> Param:
    return Param(key=key, label=label or key.replace("_", " "), min=float(lo), max=float(hi),
                 default=float(default), unit=unit, log=log, options=tuple(options), step=step)


def _switch(key, options, default=0, *, label=None) -> Param:
    return _p(key, 0, len(options) - 1, default, label=label, options=options)


DELAY_DIVISIONS = ("FREE", "1/32", "1/16T", "1/16", "1/16D", "1/8T", "1/8", "1/8D", "1/4T", "1/4",
                   "1/4D", "1/2", "1/2D", "1 BAR", "2 BARS")
#: Length of each delay division in beats (FREE uses ``ms``; 4/4 bars).
DELAY_DIVISION_BEATS = (None, 1 / 8, 1 / 6, 1 / 4, 3 / 8, 1 / 3, 1 / 2, 3 / 4, 2 / 3, 1.0, 1.5, 2.0, 3.0,
                        4.0, 8.0)

DRUM_KITS = ("FIELD", "MACHINE", "DUST", "808", "909", "ACOUSTIC")

HOUSE_SPECS: dict[str, DeviceSpec] = {
    s.id: s
    for s in (
        DeviceSpec("core.drums", "instrument", "Drums", "General MIDI drum kit", (
            _switch("kit", DRUM_KITS),
            _p("tune", -12, 12, 0, "st"),
            _p("decay", 0.3, 2.5, 1, "x"),
            _p("tone", -1, 1, 0, "", label="tone (tilt around 1 kHz)"),
            _p("drive", 0, 1, 0.15),
            _p("width", 0, 1, 0.6),
            _p("room", 0, 1, 0.3),
            _switch("cym_model", ("CLASSIC", "FDN", "MODAL"), label="cymbal model"),
        )),
        DeviceSpec("core.bass", "instrument", "Bass", "mono bass synth with legato glide", (
            _p("wave", 0, 1, 0.25),
            _p("sub", 0, 1, 0.55),
            _p("cutoff", 40, 8000, 520, "Hz", log=True),
            _p("reso", 0, 1, 0.3),
            _p("envamt", 0, 1, 0.45, label="env amount"),
            _p("fdecay", 0.02, 2, 0.25, "s", log=True, label="filter decay"),
            _p("drive", 0, 1, 0.25),
            _p("glide", 0, 500, 45, "ms"),
            _p("release", 0.005, 2, 0.06, "s", log=True),
            _switch("mode", ("LEGATO", "RETRIG")),
        )),
        DeviceSpec("core.keys", "instrument", "Keys", "FM electric piano", (
            _switch("voice", ("TINES", "GRAND")),
            _p("bright", 0, 1, 0.5),
            _p("bell", 0, 1, 0.4),
            _p("decay", 0.3, 2.5, 1, "x"),
            _p("release", 0.02, 2, 0.12, "s", log=True),
            _p("trem", 0, 1, 0.2, label="tremolo"),
            _p("rate", 0.5, 9, 4.2, "Hz", log=True),
        )),
        DeviceSpec("core.pluck", "instrument", "Pluck", "plucked string (extended Karplus-Strong)", (
            _p("tone", 0, 1, 0.55),
            _p("decay", 0.2, 12, 3.5, "s", log=True),
            _p("pick", 0.04, 5, 0.18, label="pick position"),
            _p("body", 0, 1, 0.5),
            _p("mute", 0.03, 3, 0.35, "s", log=True),
            _p("spread", 0, 1, 0.5),
        )),
        DeviceSpec("core.pad", "instrument", "Pad", "detuned pad with chorus and space", (
            _p("tone", 200, 12000, 2200, "Hz", log=True),
            _p("detune", 0, 40, 14, "ct"),
            _p("motion", 0, 1, 0.35),
            _p("attack", 0.005, 6, 0.7, "s", log=True),
            _p("release", 0.05, 8, 1.8, "s", log=True),
            _p("chorus", 0, 1, 0.5),
            _p("space", 0, 1, 0.35),
        )),
        DeviceSpec("core.poly", "instrument", "Poly", "subtractive polyphonic synth", (
            _switch("wave", ("SAW", "SQUARE", "PULSE")),
            _p("pw", 0.05, 5, 0.28, label="pulse width"),
            _p("detune", 0, 40, 9, "ct"),
            _p("sub", 0, 1, 0.25),
            _p("spread", 0, 1, 0.4),
            _p("unison", 0, 1, 0),
            _p("cutoff", 60, 16000, 2400, "Hz", log=True),
            _p("reso", 0, 1, 0.18),
            _p("envamt", -1, 1, 0.35, label="env amount"),
            _p("fdecay", 0.02, 3, 0.4, "s", log=True, label="filter decay"),
            _p("attack", 0.001, 4, 0.004, "s", log=True),
            _p("decay", 0.01, 4, 0.6, "s", log=True),
            _p("sustain", 0, 1, 0.7),
            _p("release", 0.005, 6, 0.35, "s", log=True),
            _p("glide", 0, 1000, 0, "ms"),
        )),
        DeviceSpec("core.verb", "effect", "Reverb", "algorithmic reverb (rings out when off)", (
            _p("size", 0, 1, 0.55),
            _p("decay", 0.2, 20, 2.4, "s", log=True),
            _p("damp", 0, 1, 0.45),
            _p("predelay", 0, 250, 14, "ms"),
            _p("lowcut", 20, 1000, 140, "Hz", log=True),
            _p("width", 0, 1, 1),
            _p("mix", 0, 1, 0.22, label="mix (equal-power dry/wet)"),
        )),
        DeviceSpec("core.delay", "effect", "Delay", "tempo-synced delay (rings out when off)", (
            _switch("div", DELAY_DIVISIONS, 7, label="division"),
            _p("ms", 1, 2000, 320, "ms", log=True, label="time (FREE)"),
            _switch("mode", ("STEREO", "PING-PONG"), 1),
            _p("feedback", 0, 0.95, 0.35),
            _p("tone", 400, 16000, 4200, "Hz", log=True),
            _p("lowcut", 20, 2000, 150, "Hz", log=True),
            _p("wow", 0, 1, 0.1),
            _p("mix", 0, 1, 0.25),
        )),
        DeviceSpec("core.chorus", "effect", "Chorus", "stereo chorus (it widens)", (
            _p("rate", 0.05, 8, 0.7, "Hz", log=True),
            _p("depth", 0, 1, 0.5),
            _p("delay", 1, 30, 9, "ms", log=True),
            _p("feedback", 0, 0.85, 0),
            _p("width", 0, 1, 1),
            _p("mix", 0, 1, 0.5),
        )),
        DeviceSpec("core.width", "effect", "Width", "mid/side width, balance and MONO BASS", (
            _p("gain", -36, 18, 0, "dB"),
            _p("pan", -1, 1, 0, label="balance"),
            _p("width", 0, 2, 1, "x"),
            _p("monobass", 20, 500, 20, "Hz", log=True, label="mono bass below (off at 20)"),
        )),
        DeviceSpec("core.limiter", "effect", "Limiter", "true-peak lookahead limiter", (
            _p("gain", 0, 24, 0, "dB"),
            _p("ceiling", -12, 0, -1, "dBTP"),
            _p("release", 5, 1000, 90, "ms", log=True),
        )),
        DeviceSpec("core.eq", "effect", "EQ", "filters, shelves and a bell", (
            _p("hp", 10, 1000, 10, "Hz", log=True, label="high-pass (off at 10, 4th-order)"),
            _p("lowf", 30, 600, 110, "Hz", log=True, label="low shelf freq"),
            _p("low", -15, 15, 0, "dB", label="low shelf"),
            _p("midf", 150, 9000, 1000, "Hz", log=True, label="mid freq"),
            _p("mid", -15, 15, 0, "dB", label="mid bell"),
            _p("q", 0.3, 8, 0.9, "", log=True, label="mid Q"),
            _p("highf", 1500, 16000, 7000, "Hz", log=True, label="high shelf freq"),
            _p("high", -15, 15, 0, "dB", label="high shelf"),
            _p("lp", 1000, 22000, 22000, "Hz", log=True, label="low-pass (off at 22000, 4th-order)"),
            _p("gain", -18, 18, 0, "dB"),
        )),
        DeviceSpec("core.comp", "effect", "Compressor", "feed-forward compressor, log-domain detector", (
            _p("threshold", -60, 0, -18, "dB"),
            _p("ratio", 1, 20, 4, ":1", log=True),
            _p("knee", 0, 24, 6, "dB"),
            _p("attack", 0.1, 200, 10, "ms", log=True),
            _p("release", 5, 2000, 120, "ms", log=True),
            _p("makeup", -12, 24, 0, "dB"),
        )),
        DeviceSpec("core.gain", "effect", "Gain", "gain and balance", (
            _p("gain", -60, 24, 0, "dB"),
            _p("pan", -1, 1, 0, label="balance"),
        )),
    )
}


def house_spec(device_id: str) -> DeviceSpec | None:
    """The spec of a house device, or None for an id that is not a house device."""
    return HOUSE_SPECS.get(device_id)
