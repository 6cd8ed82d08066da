"""The transcription ladder on generated songs: ``transcribe-solo-hook@<seed>`` (tier 1),
``transcribe-bass-under-drums@<seed>`` (tier 2), ``transcribe-full-band@<seed>`` (tier 3) and
``transcribe-full-band-oracle@<seed>`` (tier 3, an oracle run: the tempo, the parts' stems and the track
list are handed over too).

Each mirrors the published task of its id on a song of the generator's tier of the same number (tier 2:
denser parts, tier 3: a faster tempo). Computed from the ground truth: the heard tracks and the parts by
role (the lead is ``hook``, the bass ``bass``, the chords part ``keys`` or ``pad`` after its track's name),
the excerpt (the song's first verse and chorus: the whole song at tiers 1 and 2, the first half at tier
3), the instruments the instruction names. The blind instruction names no tempo, key, stem or track count.
The answers are made from the truth by :data:`~pytest_overdub.transcribe.answers.MAKERS`: the oracle the
true notes; the near miss the true notes in beats at a tempo 3 % off; cheats every pitch on every grid
step, the gated part an octave down, a constant scale arpeggio, and every note hedged twice (in two
octaves, or at two onsets).
"""

from __future__ import annotations

from typing import Any

from ...generate.build import Generated
from .base import Answer

LEAD = {"core.pluck": "a plucked synth", "core.poly": "a synth lead"}
CHORDS = {"core.keys": "an electric piano", "core.pad": "a pad"}


def _excerpt(made: Generated) -> dict[str, float]:
    """The first verse and chorus, in beats."""
    truth = made.truth
    return {"from": truth.section("Verse").start_beats, "to": truth.section("Chorus").end_beats}


def _answers(gate: str, *, parts: list[str]) -> tuple[Answer, tuple[Answer, ...]]:
    every = tuple(f"f1-{p}" for p in parts) + (f"gate-{gate}",)
    oracle = Answer("oracle", "The song's own notes of each part, in seconds.", [], make="truth")
    misses = (
        Answer("tempo-off", "The true notes written in beats at a tempo 3% off the song's: after a few bars "
               "every onset is out by more than 50 ms.", [], (f"f1-{gate}",), make="tempo-off"),
        Answer("cheat-every-step", "Every pitch of each part's range on every grid step: recall 1, precision "
               "near 0.", [], every, make="every-step"),
        Answer("cheat-octave-off", f"The true notes with the {gate} an octave down.", [],
               (f"f1-{gate}", f"gate-{gate}"), make="octave-off"),
        Answer("cheat-scale-arpeggio", "A constant arpeggio of the key's scale on every eighth note, in each "
               "part's register.", [], every, make="scale-arpeggio"),
        Answer("cheat-hedge-octaves", "Every true note written twice, at its pitch and an octave up: each "
               "matches once, so half the notes written are wrong.", [], (f"f1-{gate}", f"surplus-{gate}"),
               make="hedge-octaves"),
        Answer("cheat-hedge-onsets", "Every true note written twice, at its onset and a grid step later: "
               "half the notes written are wrong.", [], (f"f1-{gate}", f"surplus-{gate}"), make="hedge-onsets"),
        Answer("cheat-quarter-tone", "Every true note written a quarter tone sharp and flat in turn: no note "
               "at a pitch the song plays.", [], every, make="quarter-tone"),
    )
    return oracle, misses


def _fields(made: Generated, *, title: str, instruction: str, heard: list[str] | None,
            parts: dict[str, list[str]], gate: str, given: list[str] | None = None) -> dict[str, Any]:
    fields: dict[str, Any] = {"family": "transcription", "tier": made.truth.tier, "title": title,
                              "instruction": instruction, "parts": parts, "gate": gate, "grid": 0.25,
                              **_excerpt(made)}
    if heard is not None:
        fields["heard"] = heard
    if given:
        fields["given"] = given
    return fields


def solo_hook(made: Generated, variant_id: str):
    lead = made.truth.part("lead")
    sound = LEAD.get(lead.device, "a synth")
    instruction = (f"The recording is {sound} playing a melody alone, one note at a time, with its echo. "
                   "Write down every note it plays: its pitch, when it starts and how long it lasts, as the "
                   "part \"hook\". Echoes are not notes.")
    fields = _fields(made, title="Write down a melody, heard alone", instruction=instruction,
                     heard=[lead.name], parts={"hook": [lead.name]}, gate="hook")
    return (fields, *_answers("hook", parts=["hook"]))


def bass_under_drums(made: Generated, variant_id: str):
    truth = made.truth
    bass = truth.part("bass")
    drums = [p.name for p in truth.parts_with("drums")]
    instruction = ("The recording is a drum kit and a synth bass. Write down every note of the bass line (pitch, "
                   "start and length) as the part \"bass\"; the drums are not asked for.")
    fields = _fields(made, title="Write down a bass line under a drum kit", instruction=instruction,
                     heard=[*drums, bass.name], parts={"bass": [bass.name]}, gate="bass")
    return (fields, *_answers("bass", parts=["bass"]))


def _band(made: Generated, *, given: list[str] | None):
    truth = made.truth
    bass, chords, lead = truth.part("bass"), truth.part("chords"), truth.part("lead")
    chords_part = chords.name.lower()
    parts = {"bass": [bass.name], chords_part: [chords.name], "hook": [lead.name]}
    instruction = (f"The recording is a band: drums, a synth bass, {CHORDS.get(chords.device, 'a keyboard')} "
                   f"playing chords and {LEAD.get(lead.device, 'a synth')} melody on top. Write down the notes "
                   f"of three parts: \"bass\", \"{chords_part}\" (every note of every chord) and \"hook\" (pitch, "
                   "start and length of each). The drums are not asked for.")
    title = "Write down the bass, the chords and the hook of a band"
    if given:
        title += " (oracle run)"
    fields = _fields(made, title=title, instruction=instruction, heard=None, parts=parts, gate="hook",
                     given=given)
    return (fields, *_answers("hook", parts=list(parts)))


def full_band(made: Generated, variant_id: str):
    return _band(made, given=None)


def full_band_oracle(made: Generated, variant_id: str):
    return _band(made, given=["tempo", "stems", "tracks"])
