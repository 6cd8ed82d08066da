"""Song-defined devices: the kernel API (docs/devices.md) and the device objects the engine calls.

An agent writes a device as Python source stored in ``song.devices[id].kernel``. This module checks the
definition, builds a device object that keeps the house contract (:mod:`pytest_overdub.devices.base`),
and runs the kernel either in-process (trusted) or in the sandbox (:mod:`.sandbox`, the default).

The kernel contract (written up for agents in ``docs/devices.md``):

* An **effect** defines ``process(x, params, ctx)``: ``x`` is float64 ``(2, n)`` (a whole track or a long
  consecutive segment of it), ``params`` a dict of floats (a per-sample float64 array of length ``n``
  where the engine passes one), and it returns a real float array of shape ``(2, n)``. It may declare
  ``LATENCY_FRAMES`` (int, default 0) and ``TAIL_S`` (float seconds, default 0).
* An **instrument** defines ``render(notes, params, ctx, n_frames)`` returning ``(2, n_frames)``; ``notes``
  is a :class:`Notes` (arrays ``pitch``, ``velocity``, ``start_s``, ``dur_s``, ``index`` and per-note
  params ``notes.params[key]``; iterating yields :class:`Note` records). It may declare ``TAIL_S``.
* ``ctx`` (:class:`KernelContext`) carries ``sr``, ``tempo`` (bpm), ``beat_s``, ``seed``, ``device_id``,
  ``dsp`` (the stdlib), ``np`` (numpy), ``rng(*keys)`` and ``state`` (a dict the kernel owns for one
  track render). The names ``np``, ``dsp`` and ``math`` are also globals of the kernel source.

A kernel fault (it raises, returns NaN/inf, the wrong shape or dtype, times out, or breaks a sandbox
rule) raises :class:`~pytest_overdub.errors.KernelError`; the engine turns that into a ``fault`` warning.
Error messages carry the kernel's own traceback with line numbers in its source.
"""

from __future__ import annotations

import linecache
import math
import re
import traceback
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import numpy as np

from ..devices.base import Effect, Instrument, NoteEvent
from ..devices.params import DeviceSpec, Param
from ..dsp.signals import device_seed
from ..errors import DeviceError, KernelError
from .kernel_imports import kernel_builtins
from .trust import trust_kernels_default

#: A song-defined device id (docs/formats.md).
DEVICE_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
PARAM_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
KERNEL_MAX_BYTES = 256 * 1024
MAX_PARAMS = 64
MAX_TAIL_S = 60.0


#: The seed a kernel gets on one track (``ctx.seed``): the engine's one seed function for every device.
kernel_seed = device_seed


# --------------------------------------------------------------------------------------------------
# The definition


@dataclass(frozen=True)
class KernelDefinition:
    """A checked ``song.devices[id]`` entry; ``spec`` validates params like a house device's table."""

    id: str
    kind: str  # "effect" | "instrument"
    name: str
    source: str
    version: int
    spec: DeviceSpec

    @property
    def filename(self) -> str:
        """The name tracebacks give the kernel source."""
        return f"<kernel {self.id} v{self.version}>"

    def to_json(self) -> dict:
        params = [{"key": p.key, "label": p.label, "min": p.min, "max": p.max, "def": p.default,
                   "unit": p.unit} for p in self.spec.params]
        return {"id": self.id, "kind": self.kind, "name": self.name, "kernel": self.source,
                "params": params, "version": self.version}


def validate_definition(defn: Any) -> KernelDefinition:
    """Check a device definition (a dict in the song's JSON shape, or a pydantic model of it).

    Raises :class:`KernelError` naming the field, the value and what is allowed. Runs no kernel code.
    """
    if hasattr(defn, "model_dump"):
        defn = defn.model_dump(by_alias=True)
    if not isinstance(defn, Mapping):
        raise KernelError(f"device definition must be an object, got {type(defn).__name__}")
    unknown = sorted(set(defn) - {"id", "kind", "name", "kernel", "params", "version"})
    if unknown:
        raise KernelError(f"device definition: unknown field(s) {unknown}; allowed id, kind, name, "
                          f"kernel, params, version")
    dev_id = defn.get("id")
    if not isinstance(dev_id, str) or not DEVICE_ID_RE.match(dev_id) or dev_id.startswith("core."):
        raise KernelError(f"device id {dev_id!r} is not allowed; it must match "
                          f"{DEVICE_ID_RE.pattern} and not start with 'core.'")
    kind = defn.get("kind")
    if kind not in ("effect", "instrument"):
        raise KernelError(f"device {dev_id}: kind {kind!r} is not allowed; use 'effect' or 'instrument'")
    source = defn.get("kernel")
    if not isinstance(source, str) or not source.strip():
        raise KernelError(f"device {dev_id}: kernel must be non-empty Python source text")
    size = len(source.encode("utf-8"))
    if size > KERNEL_MAX_BYTES:
        raise KernelError(f"device {dev_id}: kernel is {size} bytes; at most {KERNEL_MAX_BYTES} allowed")
    version = defn.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise KernelError(f"device {dev_id}: version {version!r} must be an integer >= 1")
    name = defn.get("name") or dev_id
    params = tuple(_param(dev_id, i, p) for i, p in enumerate(defn.get("params") or ()))
    if len(params) > MAX_PARAMS:
        raise KernelError(f"device {dev_id}: {len(params)} params; at most {MAX_PARAMS} allowed")
    keys = [p.key for p in params]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise KernelError(f"device {dev_id}: duplicate param key(s) {dupes}")
    spec = DeviceSpec(dev_id, kind, str(name), "song-defined device", params)
    return KernelDefinition(dev_id, kind, str(name), source, version, spec)


def _param(dev_id: str, i: int, p: Any) -> Param:
    where = f"device {dev_id}: params[{i}]"
    if not isinstance(p, Mapping):
        raise KernelError(f"{where} must be an object {{key, label, min, max, def, unit}}, got {p!r}")
    unknown = sorted(set(p) - {"key", "label", "min", "max", "def", "default", "unit"})
    if unknown:
        raise KernelError(f"{where}: unknown field(s) {unknown}; allowed key, label, min, max, def, unit")
    key = p.get("key")
    if not isinstance(key, str) or not PARAM_KEY_RE.match(key):
        raise KernelError(f"{where}: key {key!r} must match {PARAM_KEY_RE.pattern}")
    nums = {}
    for field, fallback in (("min", 0.0), ("max", 1.0), ("def", None)):
        v = p.get(field, p.get("default") if field == "def" else fallback)
        if v is None:
            v = nums["min"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise KernelError(f"{where} ({key}): {field} {v!r} must be a finite number")
        nums[field] = float(v)
    if not nums["min"] <= nums["def"] <= nums["max"]:
        raise KernelError(f"{where} ({key}): def {nums['def']:g} is outside min {nums['min']:g} .. "
                          f"max {nums['max']:g}")
    return Param(key=key, label=str(p.get("label") or key), min=nums["min"], max=nums["max"],
                 default=nums["def"], unit=str(p.get("unit") or ""))


# --------------------------------------------------------------------------------------------------
# What the kernel sees


@dataclass(frozen=True)
class Note:
    """One note as a kernel sees it when iterating :class:`Notes`: seconds from the render's start."""

    pitch: int
    velocity: float
    start_s: float
    dur_s: float
    index: int
    params: Mapping[str, float]


class Notes:
    """A track's notes as parallel float64/int64 arrays (sorted as the engine gave them).

    ``pitch`` (MIDI, int64), ``velocity`` (0..1), ``start_s``, ``dur_s`` (seconds), ``index`` (the
    note's stable position in the track) and ``params[key]`` (the device's params in force at each
    note's onset). ``len(notes)``; ``for n in notes`` yields :class:`Note` records.
    """

    def __init__(self, payload: Mapping[str, Any]):
        self.pitch = np.asarray(payload["pitch"], dtype=np.int64)
        self.velocity = np.asarray(payload["velocity"], dtype=np.float64)
        self.start_s = np.asarray(payload["start_s"], dtype=np.float64)
        self.dur_s = np.asarray(payload["dur_s"], dtype=np.float64)
        self.index = np.asarray(payload["index"], dtype=np.int64)
        self.params = {k: np.asarray(v, dtype=np.float64) for k, v in payload["params"].items()}

    def __len__(self) -> int:
        return int(self.pitch.size)

    def __iter__(self) -> Iterator[Note]:
        for i in range(len(self)):
            yield Note(int(self.pitch[i]), float(self.velocity[i]), float(self.start_s[i]),
                       float(self.dur_s[i]), int(self.index[i]),
                       {k: float(v[i]) for k, v in self.params.items()})

    def __repr__(self) -> str:
        return f"Notes({len(self)} notes)"


def notes_payload(notes: list[NoteEvent], spec: DeviceSpec, defaults: Mapping[str, float]) -> dict:
    """Plain lists (JSON-safe, float repr round-trips exactly) of a track's notes for :class:`Notes`."""
    keys = [p.key for p in spec.params]
    per_note = {k: [] for k in keys}
    for n in notes:
        resolved = _resolve_scalars(spec, {**defaults, **dict(n.params or {})}, strict=False)
        for k in keys:
            per_note[k].append(resolved[k])
    return {"pitch": [int(n.pitch) for n in notes], "velocity": [float(n.velocity) for n in notes],
            "start_s": [float(n.start_s) for n in notes], "dur_s": [float(n.dur_s) for n in notes],
            "index": [int(n.index) for n in notes], "params": per_note}


class KernelContext:
    """The ``ctx`` a kernel gets: rate, tempo, seed, the stdlib and its own ``state`` dict."""

    def __init__(self, *, sr: int, tempo_bpm: float, seed: int, device_id: str, dsp: Any):
        self.sr = int(sr)
        self.tempo = float(tempo_bpm)
        self.tempo_bpm = self.tempo
        self.beat_s = 60.0 / self.tempo
        self.seed = int(seed)
        self.device_id = device_id
        self.dsp = dsp
        self.np = np
        self.state: dict = {}

    def rng(self, *keys) -> np.random.Generator:
        """A numpy Generator seeded from this device's seed and ``keys`` (ints), e.g. ``ctx.rng(note.index)``."""
        return np.random.default_rng([self.seed % 2**63, *[int(k) % 2**63 for k in keys]])

    def __repr__(self) -> str:
        return f"KernelContext(sr={self.sr}, tempo={self.tempo:g}, seed={self.seed})"


# --------------------------------------------------------------------------------------------------
# Running a kernel (the same code in-process and inside the sandbox child)


class KernelRuntime:
    """A compiled kernel with its context; ``process``/``render`` check what the kernel returns.

    Used directly in trusted mode and inside the sandbox child, so both give bit-identical audio.
    """

    def __init__(self, definition: KernelDefinition, *, sr: int, tempo_bpm: float, seed: int):
        from ..dsp.stdlib import stdlib

        self.defn = definition
        self.ctx = KernelContext(sr=sr, tempo_bpm=tempo_bpm, seed=seed, device_id=definition.id,
                                 dsp=stdlib())
        self.namespace = self._load()
        entry = "process" if definition.kind == "effect" else "render"
        self.entry = self.namespace.get(entry)
        if not callable(self.entry):
            raise KernelError(f"kernel {definition.id}: an {definition.kind} kernel must define "
                              f"`def {entry}(...)`; found {sorted(k for k in self.namespace if not k.startswith('__'))}")
        self.tail_s = self._number("TAIL_S", 0.0, 0.0, MAX_TAIL_S)
        self.latency_frames = int(self._number("LATENCY_FRAMES", 0, 0, 10 * sr))

    def _load(self) -> dict:
        d = self.defn
        lines = d.source.splitlines(keepends=True)
        linecache.cache[d.filename] = (len(d.source), None, lines, d.filename)
        try:
            code = compile(d.source, d.filename, "exec", dont_inherit=True)
        except SyntaxError as e:
            raise kernel_fault(d, "does not compile", e) from None
        ns = {"__name__": f"kernel_{d.id}", "__builtins__": kernel_builtins(), "np": np, "math": math,
              "dsp": self.ctx.dsp}
        try:
            exec(code, ns)
        except BaseException as e:  # noqa: BLE001 - any failure of agent code is a fault
            if isinstance(e, KeyboardInterrupt):
                raise
            raise kernel_fault(d, "failed while loading", e) from None
        return ns

    def _number(self, name: str, default: float, lo: float, hi: float) -> float:
        v = self.namespace.get(name, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise KernelError(f"kernel {self.defn.id}: {name} = {v!r} must be a number in {lo:g}..{hi:g}")
        return float(v)

    def process(self, x: np.ndarray, params: dict, *, check_finite: bool = True) -> np.ndarray:
        return self._call(self.entry, (x, params, self.ctx), x.shape[1], check_finite)

    def render(self, notes: Notes, params: dict, n_frames: int, *, check_finite: bool = True) -> np.ndarray:
        return self._call(self.entry, (notes, params, self.ctx, n_frames), n_frames, check_finite)

    def close(self) -> None:
        """Drop the kernel's module namespace (which its functions reference: a cycle), its ``ctx.state``
        and its source lines, so what it held is freed now rather than at the next garbage collection."""
        self.namespace.clear()
        self.ctx.state.clear()
        self.entry = None
        linecache.cache.pop(self.defn.filename, None)

    def _call(self, fn, args, n: int, check_finite: bool) -> np.ndarray:
        try:
            y = fn(*args)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            raise kernel_fault(self.defn, "raised", e) from None
        return check_output(self.defn, y, n, check_finite=check_finite)


def check_output(defn: KernelDefinition, y: Any, n: int, *, check_finite: bool = True) -> np.ndarray:
    """``y`` as float64 ``(2, n)``, or :class:`KernelError` saying what was wrong with it."""
    who = f"kernel {defn.id}"
    if not isinstance(y, np.ndarray):
        raise KernelError(f"{who} returned {type(y).__name__}; expected a numpy float array of shape (2, {n})")
    if y.dtype.kind != "f":
        raise KernelError(f"{who} returned dtype {y.dtype}; expected float64 (or float32), shape (2, {n})")
    if y.shape != (2, n):
        raise KernelError(f"{who} returned shape {y.shape}; expected (2, {n})")
    y = np.asarray(y, dtype=np.float64)
    if check_finite:
        check_finite_audio(defn, y)
    return y


def check_finite_audio(defn: KernelDefinition, y: np.ndarray) -> None:
    """Raise :class:`KernelError` at the first NaN or inf sample, naming its channel and frame.

    One check wherever it runs: the compiled one-pass ``all_finite``. Only the scorer runs it (trusted
    kernels and the sandbox's answers alike); the sandbox child, which never loads numba, calls kernels
    with ``check_finite=False`` and leaves the check to the scorer."""
    from ..dsp.compiled import all_finite

    if all_finite(y):
        return
    ch, frame = (int(i[0]) for i in np.nonzero(~np.isfinite(y)))
    raise KernelError(f"kernel {defn.id} returned {float(y[ch, frame])!r} at channel {ch}, frame {frame}; "
                      f"output must be finite (no NaN or inf)")


def kernel_fault(defn: KernelDefinition, what: str, exc: BaseException) -> KernelError:
    """A :class:`KernelError` whose message ends with the kernel's traceback (frames from its source on)."""
    tb = format_kernel_traceback(defn.filename, exc)
    err = KernelError(f"kernel {defn.id} {what}: {type(exc).__name__}: {exc}\n{tb}")
    err.reason = f"{what}: {type(exc).__name__}: {exc}"
    err.kernel_traceback = tb
    return err


def format_kernel_traceback(filename: str, exc: BaseException) -> str:
    """The traceback of ``exc`` from the first frame in the kernel's source (host frames dropped)."""
    te = traceback.TracebackException.from_exception(exc, capture_locals=False)
    frames = list(te.stack)
    first = next((i for i, f in enumerate(frames) if f.filename == filename), None)
    te.stack = traceback.StackSummary.from_list(frames[first:] if first is not None else [])
    return "".join(te.format()).rstrip()


# --------------------------------------------------------------------------------------------------
# Params


def _resolve_scalars(spec: DeviceSpec, params: Mapping[str, Any], *, strict: bool) -> dict[str, float]:
    out = spec.defaults()
    for key, value in params.items():
        try:
            p = spec.param(key)
        except Exception as e:
            if strict:
                raise KernelError(str(e)) from None
            continue
        try:
            out[key] = p.coerce(value, clamp=True)
        except DeviceError:
            raise KernelError(f"{spec.id}: param {key} = {value!r} is not a finite number; "
                              f"allowed {p.allowed()}") from None
    return out


def resolve_params(spec: DeviceSpec, params: Mapping[str, Any] | None, n: int | None = None) -> dict:
    """Defaults overlaid with ``params``: floats clamped to the declared range; a 1-D array of length
    ``n`` (automation) is clipped to the range. Unknown keys raise :class:`KernelError`."""
    scalars = {k: v for k, v in (params or {}).items() if not isinstance(v, np.ndarray)}
    out: dict[str, Any] = _resolve_scalars(spec, scalars, strict=True)
    for key, value in (params or {}).items():
        if not isinstance(value, np.ndarray):
            continue
        try:
            p = spec.param(key)
        except Exception as e:
            raise KernelError(str(e)) from None
        if value.ndim != 1 or n is None or value.shape[0] != n or value.dtype.kind not in "fiu":
            raise KernelError(f"{spec.id}: param {key} array of shape {value.shape} and dtype {value.dtype}; "
                              f"expected a real 1-D array of {n} samples")
        out[key] = np.clip(np.asarray(value, dtype=np.float64), p.min, p.max)
    return out


# --------------------------------------------------------------------------------------------------
# The devices the engine builds


class _InProcess:
    """Backend running the kernel in this process (``--overdub-trust-kernels``)."""

    layers = ("in-process",)

    def __init__(self, defn: KernelDefinition, *, sr: int, tempo_bpm: float, seed: int):
        from .sandbox.determinism import seed_globals

        seed_globals(seed)  # as in the sandbox child: np.random.rand and random give the same numbers
        self.runtime = KernelRuntime(defn, sr=sr, tempo_bpm=tempo_bpm, seed=seed)
        self.tail_s = self.runtime.tail_s
        self.latency_frames = self.runtime.latency_frames

    def process(self, x, params):
        return self.runtime.process(x, params)

    def render(self, payload, params, n_frames):
        return self.runtime.render(Notes(payload), params, n_frames)

    def close(self):
        self.runtime.close()


class _KernelDevice:
    """Shared part of the song-defined effect and instrument: definition, backend, fault latch."""

    def _setup(self, defn: KernelDefinition, backend) -> None:
        self.definition = defn
        self.spec = defn.spec
        self._backend = backend
        self.layers = tuple(backend.layers)
        self.tail_s = backend.tail_s
        self.faulted: KernelError | None = None

    def _guard(self, call):
        if self.faulted is not None:
            raise KernelError(f"kernel {self.definition.id} already faulted: {self.faulted.reason}")
        try:
            return call()
        except KernelError as e:
            if not hasattr(e, "reason"):
                e.reason = str(e).split("\n", 1)[0]
            self.faulted = e
            self.close()
            raise

    def close(self) -> None:
        """Release the sandbox child (also done on a fault and when the device is garbage collected)."""
        self._backend.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class KernelEffect(_KernelDevice, Effect):
    """A song-defined effect: ``process(x, params) -> (2, n)`` with state carried between calls."""

    def __init__(self, defn: KernelDefinition, backend, *, sr, tempo_bpm, seed, params):
        Effect.__init__(self, sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._setup(defn, backend)
        self.latency_frames = backend.latency_frames

    def process(self, x: np.ndarray, params: Mapping[str, Any] | None = None) -> np.ndarray:
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[0] != 2 or x.dtype != np.float64:
            raise KernelError(f"{self.spec.id}: input must be float64 (2, n), got {x.dtype} {x.shape}")
        resolved = resolve_params(self.spec, self.params if params is None else params, x.shape[1])
        return self._guard(lambda: self._backend.process(x, resolved))


class KernelInstrument(_KernelDevice, Instrument):
    """A song-defined instrument: ``render(notes, n_frames=...) -> (2, n_frames)``."""

    def __init__(self, defn: KernelDefinition, backend, *, sr, tempo_bpm, seed, params):
        Instrument.__init__(self, sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._setup(defn, backend)

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        if isinstance(n_frames, bool) or not isinstance(n_frames, (int, np.integer)) or n_frames < 0:
            raise KernelError(f"{self.spec.id}: n_frames must be an int >= 0, got {n_frames!r}")
        payload = notes_payload(list(notes), self.spec, self.params)
        return self._guard(lambda: self._backend.render(payload, dict(self.params), int(n_frames)))


def build_kernel_device(defn: Any, *, sr: int, tempo_bpm: float, seed: int, trusted: bool | None = None,
                        params: Mapping[str, Any] | None = None, limits=None):
    """Build a song-defined device for one track render.

    ``defn``: the ``song.devices[id]`` JSON (or its pydantic model). ``trusted=True`` runs the kernel
    in this process; ``False`` in the sandbox; ``None`` reads :func:`trust_kernels_default`.
    ``params``: the device's params on this track (defaults where missing; clamped to the declared
    ranges). ``limits``: a :class:`~.sandbox.SandboxLimits` (CPU, memory, time budgets) for sandboxed runs.

    Returns a :class:`KernelEffect` or :class:`KernelInstrument` (the house contract plus ``layers``,
    ``tail_s``, ``close()``). Raises :class:`KernelError` when the definition is invalid or the kernel
    fails to compile or load (its traceback is in the message).
    """
    d = validate_definition(defn)
    if trusted is None:
        trusted = trust_kernels_default()
    resolved = _resolve_scalars(d.spec, dict(params or {}), strict=True)
    if trusted:
        backend = _InProcess(d, sr=sr, tempo_bpm=tempo_bpm, seed=seed)
    else:
        from .sandbox import SandboxedKernel

        backend = SandboxedKernel(d, sr=sr, tempo_bpm=tempo_bpm, seed=seed, limits=limits)
    cls = KernelEffect if d.kind == "effect" else KernelInstrument
    return cls(d, backend, sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=resolved)


__all__ = ["KernelContext", "KernelDefinition", "KernelEffect", "KernelInstrument", "KernelRuntime",
           "Note", "Notes", "build_kernel_device", "kernel_seed", "trust_kernels_default",
           "validate_definition", "resolve_params", "DEVICE_ID_RE", "KERNEL_MAX_BYTES"]
