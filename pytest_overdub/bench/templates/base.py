"""What a task template is (bench/variants.py instantiates them): no template imports the variants."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...generate.build import Generated

#: The ramp of a held automation step into the next one's downbeat, beats.
#: The writing tasks' last sentence, as the published tasks have it: the ``voiced`` gate reads a part's notes
#: as its instrument sounds them (docs/checks.md).
PLAY_PITCHED = ("Play it on a pitched house instrument (core.bass, core.keys, core.pluck, core.pad or core.poly): "
                "its notes are read as the pitches they sound.")
PLAY_DRUMS = "Play it on core.drums: its notes are read as the drums of the kit's map."
RAMP_BEATS = 0.05


@dataclass(frozen=True)
class Answer:
    """An oracle, near miss or cheat of a variant: ``ops`` in any submission form, the checks it fails.

    ``make``: instead of ops, the name of an answer maker of the task's family (an audio task's
    :data:`~pytest_overdub.bench.audio.answers.MAKERS`, a transcription task's
    :data:`~pytest_overdub.transcribe.answers.MAKERS`), which makes the answer's files or notes by code,
    as a published task's ``{"make": ...}`` answer file does; ``ops`` is then empty."""

    name: str
    why: str
    ops: list[Any]
    fails: tuple[str, ...] = ()
    make: str | None = None

    @property
    def cheat(self) -> bool:
        return self.name.startswith("cheat-")


@dataclass(frozen=True)
class Template:
    """``build(made, variant_id)`` returns the task's fields (a dict the Task model reads) and its answers.

    What a variant's pytest items and markers need is declared here, so a run collects a variant without
    building it (a build generates a song and may render): ``family``; ``misses``, the names of the near
    misses and cheats ``build`` returns, in its order (every variant is held to the same rules: a name
    never depends on the seed); ``answer``, an audio task's answer file names (empty: not an audio task).
    The build is the truth: one that returns other names, family or answer files is refused
    (:func:`~pytest_overdub.bench.variants.variant`)."""

    id: str
    tier: int
    build: Callable[[Generated, str], tuple[dict[str, Any], Answer, tuple[Answer, ...]]]
    family: str
    misses: tuple[str, ...]
    answer: tuple[str, ...] = ()

    @property
    def is_audio(self) -> bool:
        """An audio task (inputs in, answer files out): the Task model's ``is_audio``, as declared."""
        return bool(self.answer)


def track_add_op(name: str, *, instrument: dict[str, Any], ref: str, mute: bool = False,
                 solo: bool = False) -> dict[str, Any]:
    """``track.add`` of a new track at 0 dB on ``instrument`` (``{"device", "params"}``), named ``$ref`` later."""
    track: dict[str, Any] = {"name": name, "instrument": instrument, "gain": 0}
    if mute:
        track["mute"] = True
    if solo:
        track["solo"] = True
    return {"type": "track.add", "track": track, "ref": ref}


def clip_add_op(ref: str, *, start: float, length: float, name: str, notes: list[dict[str, Any]]) -> dict[str, Any]:
    """``clip.add`` of ``notes`` (beats relative to the clip's ``start``) on the track added as ``ref``."""
    return {"type": "clip.add", "track": f"${ref}", "clip": {"start": start, "length": length, "name": name,
                                                            "notes": notes}}


def held(spans: list[tuple[float, float, float]], *then: tuple[float, float],
         ramp_beats: float = RAMP_BEATS) -> str:
    """Automation breakpoints: each ``(start_beats, stop_beats, value)`` of ``spans`` held from its start
    to ``ramp_beats`` before its stop (a ramp into what follows), then the points ``then`` as
    ``(beats, value)``. ``held([(0, 16, 0)], (16, 3), (32, 3))`` is ``"0:0 15.95:0 16:3 32:3"``."""
    points = [f"{a:g}:{v:g} {b - ramp_beats:g}:{v:g}" for a, b, v in spans]
    return " ".join(points + [f"{beats:g}:{v:g}" for beats, v in then])
