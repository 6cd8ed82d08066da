"""The task templates, by the id of the published task each generalises (:mod:`..variants`)."""

from __future__ import annotations

from .base import Template
from . import bass_under_kick, chorus_lift, darken_keys, mono_low_end, write_bassline

TEMPLATES: dict[str, Template] = {
    "mix-bass-under-kick": Template("mix-bass-under-kick", bass_under_kick.TIER, bass_under_kick.build),
    "mix-chorus-lift": Template("mix-chorus-lift", chorus_lift.TIER, chorus_lift.build),
    "mix-darken-keys": Template("mix-darken-keys", darken_keys.TIER, darken_keys.build),
    "mix-mono-low-end": Template("mix-mono-low-end", mono_low_end.TIER, mono_low_end.build),
    "write-bassline": Template("write-bassline", write_bassline.TIER, write_bassline.build),
}
