"""House devices: ids start with ``core.``; parameter tables in :mod:`.params` (no numpy needed).

Implementations load lazily, one module per family, so validating ops never imports DSP code.
"""

from __future__ import annotations

from importlib import import_module

from .params import HOUSE_SPECS, DeviceSpec, Param, house_spec

#: device id -> "module:ClassName" inside this package.
HOUSE_CLASSES: dict[str, str] = {
    "core.drums": "drums:Drums",
    "core.bass": "synths:Bass",
    "core.keys": "synths:Keys",
    "core.pluck": "synths:Pluck",
    "core.pad": "synths:Pad",
    "core.poly": "synths:Poly",
    "core.eq": "eq:EQ",
    "core.comp": "dynamics:Compressor",
    "core.limiter": "dynamics:Limiter",
    "core.gain": "dynamics:Gain",
    "core.delay": "time:Delay",
    "core.chorus": "time:Chorus",
    "core.verb": "space:Reverb",
    "core.width": "space:Width",
}


def house_class(device_id: str):
    """The class implementing a house device, or None for an unknown id."""
    target = HOUSE_CLASSES.get(device_id)
    if target is None:
        return None
    module, name = target.split(":")
    return getattr(import_module(f"{__name__}.{module}"), name)


__all__ = ["HOUSE_SPECS", "HOUSE_CLASSES", "DeviceSpec", "Param", "house_spec", "house_class"]
