"""The task templates, by the id of the published task each generalises (:mod:`..variants`)."""

from __future__ import annotations

from .base import Template
from . import (bass_under_kick, chorus_lift, chorus_up_a_step, counter_melody, darken_keys, decaying_instrument,
               dotted_echo, drum_groove, harmonize_hook, hook_in_front, mono_low_end, quantize_swing,
               rumble_filter, write_bassline)

TEMPLATES: dict[str, Template] = {
    "device-decaying-instrument": Template("device-decaying-instrument", decaying_instrument.TIER,
                                           decaying_instrument.build),
    "device-dotted-echo": Template("device-dotted-echo", dotted_echo.TIER, dotted_echo.build),
    "device-rumble-filter": Template("device-rumble-filter", rumble_filter.TIER, rumble_filter.build),
    "edit-chorus-up-a-step": Template("edit-chorus-up-a-step", chorus_up_a_step.TIER, chorus_up_a_step.build),
    "edit-quantize-swing": Template("edit-quantize-swing", quantize_swing.TIER, quantize_swing.build),
    "mix-bass-under-kick": Template("mix-bass-under-kick", bass_under_kick.TIER, bass_under_kick.build),
    "mix-chorus-lift": Template("mix-chorus-lift", chorus_lift.TIER, chorus_lift.build),
    "mix-darken-keys": Template("mix-darken-keys", darken_keys.TIER, darken_keys.build),
    "mix-hook-in-front": Template("mix-hook-in-front", hook_in_front.TIER, hook_in_front.build),
    "mix-mono-low-end": Template("mix-mono-low-end", mono_low_end.TIER, mono_low_end.build),
    "write-bassline": Template("write-bassline", write_bassline.TIER, write_bassline.build),
    "write-counter-melody": Template("write-counter-melody", counter_melody.TIER, counter_melody.build),
    "write-drum-groove": Template("write-drum-groove", drum_groove.TIER, drum_groove.build),
    "write-harmonize-hook": Template("write-harmonize-hook", harmonize_hook.TIER, harmonize_hook.build),
}
