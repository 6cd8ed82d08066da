"""What a transcription task hands the agent: the mix, and in an oracle run what the task's ``given`` names.

A blind task (``given`` empty) hands over ``mix.wav`` and nothing else. An oracle run adds, per entry:

* ``"tempo"``: the song's tempo (bpm) and meter, as facts (``{"tempo_bpm": 134, "meter": "4/4"}``);
* ``"stems"``: each part's tracks alone over the same excerpt, ``stems/<part>.wav`` (:func:`.inputs.stem_wav`);
* ``"tracks"``: the heard tracks' names (so their count) and the tracks each part is made of.

:func:`given_facts` is what ``get_task`` answers and :func:`given_text` what the instruction states; both
are empty for a blind task, whose instruction therefore names no tempo, stem or track count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..render.heard import heard_tracks
from ..song.model import Song
from .task import MIX, TranscriptionTask, stem_name
from .truth import heard_ids


def handed_files(task: TranscriptionTask, song: Song) -> dict[str, Path]:
    """Name in the agent's folder -> the cached file, for each of ``task.inputs``: ``mix.wav``, and
    ``stems/<part>.wav`` when given."""
    from .inputs import mix_wav, stem_wav

    stems = {stem_name(part): part for part in task.parts}
    return {f.name: mix_wav(task, song) if f.name == MIX else stem_wav(task, song, stems[f.name])
            for f in task.inputs}


def heard_names(task: TranscriptionTask, song: Song) -> list[str]:
    """The names of the tracks in the mix, in song order."""
    ids = heard_ids(task, song)
    return [t.name for _, t in heard_tracks(song, ids)]


def given_facts(task: TranscriptionTask, song: Song) -> dict[str, Any]:
    """What the task gives besides the mix (``{}`` when blind)."""
    out: dict[str, Any] = {}
    if "tempo" in task.given:
        out["tempo_bpm"] = song.tempo
        out["meter"] = f"{song.meter[0]}/{song.meter[1]}"
    if "stems" in task.given:
        out["stems"] = {part: stem_name(part) for part in task.parts}
    if "tracks" in task.given:
        names = heard_names(task, song)
        out["tracks"] = names
        out["parts"] = {part: [song.track(ref).name for ref in refs] for part, refs in task.parts.items()}
    return out


def given_text(task: TranscriptionTask, song: Song) -> str:
    """The instruction's section stating what an oracle run gives ("" when blind)."""
    if not task.given:
        return ""
    facts = given_facts(task, song)
    lines = [f"This is an oracle run: besides the mix you are given {', '.join(task.given)}; its score is not "
             "a blind transcription score."]
    if "tempo_bpm" in facts:
        lines.append(f"- tempo: {facts['tempo_bpm']:g} bpm, meter {facts['meter']}")
    if "stems" in facts:
        lines.append("- stems (each part's tracks alone, the same excerpt as the mix): "
                     + ", ".join(f"`{name}` ({part})" for part, name in facts["stems"].items()))
    if "tracks" in facts:
        lines.append(f"- the mix holds {len(facts['tracks'])} tracks: {', '.join(facts['tracks'])}; "
                     + "; ".join(f"{part} is {', '.join(names)}" for part, names in facts["parts"].items()))
    return "## Given (oracle run)\n\n" + "\n".join(lines) + "\n"
