"""The task templates, by the id of the published task each generalises (:mod:`..variants`)."""

from __future__ import annotations

from .base import Template
from . import bass_under_kick
from . import chorus_lift
from . import chorus_up_a_step
from . import counter_melody
from . import darken_keys
from . import decaying_instrument
from . import dotted_echo
from . import drum_groove
from . import harmonize_hook
from . import hook_in_front
from . import master_loudness
from . import mono_low_end
from . import quantize_swing
from . import rumble_filter
from . import transcribe_ladder
from . import write_bassline
from .audio import mastering, mixdown

TEMPLATES: dict[str, Template] = {
    "device-decaying-instrument": Template("device-decaying-instrument", decaying_instrument.TIER,
                                           decaying_instrument.build),
    "device-dotted-echo": Template("device-dotted-echo", dotted_echo.TIER, dotted_echo.build),
    "device-rumble-filter": Template("device-rumble-filter", rumble_filter.TIER, rumble_filter.build),
    "edit-chorus-up-a-step": Template("edit-chorus-up-a-step", chorus_up_a_step.TIER, chorus_up_a_step.build),
    "edit-quantize-swing": Template("edit-quantize-swing", quantize_swing.TIER, quantize_swing.build),
    "master-ep-sequence": Template("master-ep-sequence", mastering.TIER, mastering.ep_sequence),
    "master-match-reference": Template("master-match-reference", mastering.TIER, mastering.match_reference),
    "master-mid-side": Template("master-mid-side", mastering.TIER, mastering.mid_side),
    "master-streaming-single": Template("master-streaming-single", mastering.TIER, mastering.streaming_single),
    "mix-bass-under-kick": Template("mix-bass-under-kick", bass_under_kick.TIER, bass_under_kick.build),
    "mix-chorus-lift": Template("mix-chorus-lift", chorus_lift.TIER, chorus_lift.build),
    "mix-darken-keys": Template("mix-darken-keys", darken_keys.TIER, darken_keys.build),
    "mix-hook-in-front": Template("mix-hook-in-front", hook_in_front.TIER, hook_in_front.build),
    "mix-master-loudness": Template("mix-master-loudness", master_loudness.TIER, master_loudness.build),
    "mix-mono-low-end": Template("mix-mono-low-end", mono_low_end.TIER, mono_low_end.build),
    "mixdown-clear-mud": Template("mixdown-clear-mud", mixdown.TIER, mixdown.clear_mud),
    "mixdown-parallel-drums": Template("mixdown-parallel-drums", mixdown.TIER, mixdown.parallel_drums),
    "mixdown-sidechain-bass": Template("mixdown-sidechain-bass", mixdown.TIER, mixdown.sidechain_bass),
    "mixdown-stems-null": Template("mixdown-stems-null", mixdown.TIER, mixdown.stems_null),
    "transcribe-bass-under-drums": Template("transcribe-bass-under-drums", 2, transcribe_ladder.bass_under_drums),
    "transcribe-full-band": Template("transcribe-full-band", 3, transcribe_ladder.full_band),
    "transcribe-full-band-oracle": Template("transcribe-full-band-oracle", 3, transcribe_ladder.full_band_oracle),
    "transcribe-solo-hook": Template("transcribe-solo-hook", 1, transcribe_ladder.solo_hook),
    "write-bassline": Template("write-bassline", write_bassline.TIER, write_bassline.build),
    "write-counter-melody": Template("write-counter-melody", counter_melody.TIER, counter_melody.build),
    "write-drum-groove": Template("write-drum-groove", drum_groove.TIER, drum_groove.build),
    "write-harmonize-hook": Template("write-harmonize-hook", harmonize_hook.TIER, harmonize_hook.build),
}
