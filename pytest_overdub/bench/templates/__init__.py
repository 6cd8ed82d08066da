"""The task templates, by the id of the published task each generalises (:mod:`..variants`), each with what
its variants' pytest items need declared (family, near miss and cheat names, an audio task's answer files:
:class:`.base.Template`), so collecting a variant builds nothing.

A figure a template's docstring or comment gives for a seed ("seed 22: ...") was read on the song of the
generator current when it was written: up to version 1 (8-bar sections) unless it says generator 2. A
seed keeps its tempo, key, devices and mix from one version to the next (:mod:`...generate.plan`), so
the cause a figure illustrates still holds; the figure itself may have moved, and the validity sweep
(``bench/variants_validity.py``) is what holds each variant today."""

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

#: The transcription ladder's near miss and cheats (one list for its four templates).
TRANSCRIBE = ("tempo-off", "cheat-every-step", "cheat-octave-off", "cheat-scale-arpeggio", "cheat-hedge-octaves",
              "cheat-hedge-onsets", "cheat-quarter-tone")

TEMPLATES: dict[str, Template] = {t.id: t for t in (
    Template("device-decaying-instrument", decaying_instrument.TIER, decaying_instrument.build, "device",
             misses=("sustains", "cheat-clicks", "cheat-faint-tone", "cheat-ground-scale", "cheat-long-reverb",
                    "cheat-noise-burst", "cheat-one-pitch", "cheat-probe-notes", "cheat-probe-tempo",
                    "cheat-quiet-organ", "cheat-under-a-fifth")),
    Template("device-dotted-echo", dotted_echo.TIER, dotted_echo.build, "device",
             misses=("straight-eighth", "cheat-first-hit-only", "cheat-flam", "cheat-ground-draws", "cheat-house-delay",
                    "cheat-lone-click", "cheat-probe-only", "cheat-quarter-note", "cheat-sixteenth",
                    "cheat-tempo-table", "cheat-wet-only")),
    Template("device-rumble-filter", rumble_filter.TIER, rumble_filter.build, "device",
             misses=("turned-down", "cheat-notch-comb", "cheat-probe-sines", "cheat-silence", "cheat-sine-detector",
                    "cheat-telephone", "cheat-thin", "cheat-hum-remover")),
    Template("edit-chorus-up-a-step", chorus_up_a_step.TIER, chorus_up_a_step.build, "editing",
             misses=("hook-only", "whole-song", "cheat-down-a-seventh", "cheat-drop-keys", "cheat-hook-left")),
    Template("edit-quantize-swing", quantize_swing.TIER, quantize_swing.build, "editing",
             misses=("straight", "cheat-reprogrammed", "cheat-stacked", "cheat-bass-too", "cheat-on-the-pad",
                     "cheat-drop-hardest")),
    Template("master-ep-sequence", mastering.TIER, mastering.ep_sequence, "mastering",
             misses=("cheat-click-trains", "cheat-clipped", "cheat-crushed-clicks", "cheat-crushed", "cheat-no-gaps",
                    "cheat-peak-normalised", "cheat-ultrasonic-peaks"),
             answer=("ep.wav",)),
    Template("master-match-reference", mastering.TIER, mastering.match_reference, "mastering",
             misses=("bleed", "swapped", "cheat-blend", "cheat-reference", "cheat-tilt"), answer=("mix.wav",)),
    Template("master-mid-side", mastering.TIER, mastering.mid_side, "mastering",
             misses=("swapped", "cheat-highpass", "cheat-mid-cut", "cheat-mono", "cheat-noise-widen", "cheat-widen-all"),
             answer=("master.wav",)),
    Template("master-streaming-single", mastering.TIER, mastering.streaming_single, "mastering",
             misses=("swapped", "cheat-click-trains", "cheat-clipped", "cheat-no-dither", "cheat-noise-after-rounding",
                     "cheat-planted-peaks", "cheat-slammed", "cheat-tail-noise", "cheat-ultrasonic-peaks"),
             answer=("master.wav", "master-16.wav")),
    Template("mix-bass-under-kick", bass_under_kick.TIER, bass_under_kick.build, "mix",
             misses=("buried", "muted", "cheat-kick-up", "cheat-mute-others", "cheat-thin-notes",
                     "chorus-boosted", "cheat-mute-bars")),
    Template("mix-chorus-lift", chorus_lift.TIER, chorus_lift.build, "mix",
             misses=("everything-up", "cheat-narrow-verse", "cheat-narrow-verse-tracks", "cheat-noise-bed",
                     "cheat-polarity", "cheat-flip-parts", "cheat-half-lift")),
    Template("mix-darken-keys", darken_keys.TIER, darken_keys.build, "mix",
             misses=("fader", "cheat-master-eq", "cheat-verse-only", "cheat-chop-bars")),
    Template("mix-hook-in-front", hook_in_front.TIER, hook_in_front.build, "mix",
             misses=("cheat-delete-chorus-parts", "cheat-hook-up-others-down", "cheat-others-down-20",
                    "cheat-others-down-8", "hook-blasted", "verse-automation",
                     "cheat-chop-bars", "cheat-chop-beats", "cheat-gut-kick", "cheat-drowned")),
    Template("mix-master-loudness", master_loudness.TIER, master_loudness.build, "mix",
             misses=("gain-into-clip", "cheat-mute-kick", "cheat-slammed", "cheat-pad-silence", "cheat-treble-tilt",
                     "cheat-thin", "cheat-late-note", "cheat-planted-peak")),
    Template("mix-mono-low-end", mono_low_end.TIER, mono_low_end.build, "mix",
             misses=("mono-master", "mono-mids", "cheat-bass-down", "cheat-highpass-120", "cheat-highpass-bass", "cheat-mute-bass")),
    Template("mixdown-clear-mud", mixdown.TIER, mixdown.clear_mud, "mixdown",
             misses=("dulled", "late-cut", "swapped", "cheat-every-other-second", "cheat-flutter", "cheat-highpass",
                     "cheat-one-channel", "cheat-scooped", "cheat-turned-down"),
             answer=("mix.wav",)),
    Template("mixdown-parallel-drums", mixdown.TIER, mixdown.parallel_drums, "mixdown",
             misses=("cheat-gain", "cheat-late-copy", "cheat-limiter", "cheat-reverb", "cheat-ride-every-other",
                     "cheat-ride-first-half", "cheat-ride-loud-half"), answer=("drums.wav",)),
    Template("mixdown-sidechain-bass", mixdown.TIER, mixdown.sidechain_bass, "mixdown",
             misses=("inverted", "cheat-blip", "cheat-every-beat", "cheat-every-other-kick", "cheat-flipped-on-kicks",
                     "cheat-gated",
                     "cheat-turned-down"),
             answer=("bass.wav",)),
    Template("mixdown-stems-null", mixdown.TIER, mixdown.stems_null, "mixdown",
             misses=("cheat-last-stem-is-the-rest", "cheat-mix-over-n", "cheat-raw-sum"),
             answer=("mix.wav", "stems/drums.wav", "stems/music.wav", "stems/hook.wav")),
    Template("transcribe-bass-under-drums", 2, transcribe_ladder.bass_under_drums, "transcription",
             misses=TRANSCRIBE),
    Template("transcribe-full-band", 3, transcribe_ladder.full_band, "transcription",
             misses=TRANSCRIBE),
    Template("transcribe-full-band-oracle", 3, transcribe_ladder.full_band_oracle, "transcription",
             misses=TRANSCRIBE),
    Template("transcribe-solo-hook", 1, transcribe_ladder.solo_hook, "transcription",
             misses=TRANSCRIBE),
    Template("write-bassline", write_bassline.TIER, write_bassline.build, "writing",
             misses=("wrong-roots", "cheat-fifths-on-downbeats", "cheat-hook-copy", "cheat-up-three-octaves",
                     "cheat-muted", "cheat-silent-chain", "cheat-gain-silenced-roots",
                     "cheat-on-the-kit")),
    Template("write-counter-melody", counter_melody.TIER, counter_melody.build, "writing",
             misses=("cheat-octave-copy", "cheat-delayed-copy", "cheat-hook-new-rhythm", "cheat-retrograde",
                     "cheat-parallel-thirds", "cheat-split-thirds", "cheat-flicked-thirds", "cheat-one-note",
                     "in-the-verse", "cheat-muted", "cheat-on-the-kit")),
    Template("write-drum-groove", drum_groove.TIER, drum_groove.build, "writing",
             misses=("four-on-floor", "cheat-every-hit", "cheat-no-backbeat", "cheat-swapped", "cheat-tom-flood",
                    "cheat-muted", "cheat-on-the-keys")),
    Template("write-harmonize-hook", harmonize_hook.TIER, harmonize_hook.build, "writing",
             misses=("cheat-cluster", "cheat-octave-stack", "cheat-chromatic-key", "late-chords", "cheat-muted",
                    "cheat-one-held-chord", "cheat-solo-muted", "cheat-on-the-kit")),
)}
