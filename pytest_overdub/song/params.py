"""Reading device param values in songs and ops: one rule for both.

A param of a house device or a song-defined device is read by
:meth:`~pytest_overdub.devices.params.Param.check` (a real number in range, or a switch's option name;
never a string of digits or a bool). A param of a device that is neither (bypassed at render time) must be
a finite number. Automation points are read the same way. A refused value gets what was allowed, in the
words ops and song loading both print: ``<path> = <value>: allowed <what>``.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from ..devices.params import DeviceSpec, house_spec, real_number
from ..errors import DeviceError
from .model import DeviceDef


class ParamRefused(Exception):
    """A param value or key that is not allowed; ``allowed`` says what would be."""

    def __init__(self, allowed: str):
        super().__init__(allowed)
        self.allowed = allowed


def device_spec(device: str, defined: Mapping[str, Any]) -> DeviceSpec | None:
    """The table of a house device or of a song-defined one (a ``DeviceDef`` or its JSON), else None."""
    spec = house_spec(device)
    if spec is not None:
        return spec
    d = defined.get(device)
    if d is None:
        return None
    if isinstance(d, dict):  # a transaction's copy of a definition the Song model already validated
        d = DeviceDef.model_validate(d)
    return d.spec


def read_param(spec: DeviceSpec | None, device: str, key: str, value: Any) -> float:
    """``value`` of param ``key`` of ``device`` as a float, or :class:`ParamRefused`."""
    if spec is None:
        try:
            return real_number(value)
        except DeviceError:
            raise ParamRefused("a finite number") from None
    try:
        param = spec.param(key)
    except DeviceError:
        keys = ", ".join(p.key for p in spec.params) or "none"
        raise ParamRefused(f"a param of {device}: {keys}") from None
    try:
        return param.check(value)
    except DeviceError:
        raise ParamRefused(f"{device} {key}: {param.allowed()}") from None


def device_holders(song: Any) -> Iterator[tuple[str, Any]]:
    """``(path, holder)`` for every instrument and insert of a Song (tracks in order, then the master)."""
    for i, tr in enumerate(song.tracks):
        if tr.instrument is not None:
            yield f"tracks[{i}].instrument", tr.instrument
        yield from ((f"tracks[{i}].inserts[{j}]", ins) for j, ins in enumerate(tr.inserts))
    yield from ((f"master.inserts[{j}]", ins) for j, ins in enumerate(song.master.inserts))


def param_problems(song: Any) -> Iterator[tuple[str, Any, str]]:
    """``(path, value, allowed)`` for every param and automation value of a Song that is refused."""
    for where, h in device_holders(song):
        spec = device_spec(h.device, song.devices)
        for key, value in h.params.items():
            try:
                read_param(spec, h.device, key, value)
            except ParamRefused as r:
                yield f"{where}.params.{key}", value, r.allowed
        for key, points in h.auto.items():
            for k, pt in enumerate(points):
                try:
                    read_param(spec, h.device, key, pt.v)
                except ParamRefused as r:
                    yield f"{where}.auto.{key}[{k}].v", pt.v, r.allowed
