"""The task templates, by the id of the published task each generalises (:mod:`..variants`)."""

from __future__ import annotations

from .base import Template
from . import darken_keys, decaying_instrument, dotted_echo, rumble_filter, write_bassline

TEMPLATES: dict[str, Template] = {
    "device-decaying-instrument": Template("device-decaying-instrument", decaying_instrument.TIER,
                                           decaying_instrument.build),
    "device-dotted-echo": Template("device-dotted-echo", dotted_echo.TIER, dotted_echo.build),
    "device-rumble-filter": Template("device-rumble-filter", rumble_filter.TIER, rumble_filter.build),
    "mix-darken-keys": Template("mix-darken-keys", darken_keys.TIER, darken_keys.build),
    "write-bassline": Template("write-bassline", write_bassline.TIER, write_bassline.build),
}
