"""Handing a file task to an agent: an audio task (``task.is_audio``: input WAVs in, files back) or a
transcription task (the mix in, notes back). ``overdub start --out``, the ``overdub eval`` workspace and
``overdub mcp`` all write the inputs and say what to hand back through this module.

Inputs are copied from the bench's cache (rendered first when needed); an audio task's files keep their
names (a name may hold a subfolder), a transcription task's mix is ``mix.wav``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

MIX = "mix.wav"


def is_file_task(task: Any) -> bool:
    """True for a task answered with files (audio or transcription), not with ops on a song."""
    from .tasks import TRANSCRIPTION

    return task.family == TRANSCRIPTION or bool(getattr(task, "is_audio", False))


def input_files(task: Any, bench: Any) -> dict[str, Path]:
    """Name in the folder -> the cached file (rendered now if it is not cached yet)."""
    from .tasks import TRANSCRIPTION

    if task.family == TRANSCRIPTION:
        from ..transcribe.handover import handed_files

        return handed_files(task, bench.song(task.song))
    from .audio.inputs import ensure_inputs

    return dict(ensure_inputs(task, bench))


def write_inputs(task: Any, bench: Any, folder: Path, *, keep_existing: bool = False) -> dict[str, Path]:
    """Copy the task's inputs into ``folder`` (made if needed); returns name -> the written file.
    ``keep_existing``: a file already there is left as it is. Raises OSError when a file cannot be written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, path in input_files(task, bench).items():
        dest = folder / name
        if not (keep_existing and dest.is_file()):
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        written[name] = dest
    return written


def hand_back(task: Any) -> list[dict[str, str]]:
    """The files the answer folder holds: ``[{"name", "what"}]`` (a transcription task: one of the two)."""
    from .tasks import TRANSCRIPTION

    if task.family == TRANSCRIPTION:
        return [{"name": a.name, "what": a.what} for a in task.answer]
    return [{"name": a.name, "what": a.what + (f" ({a.bits}-bit PCM)" if a.bits else "")} for a in task.answer]


def instruction(task: Any, *, bench: Any) -> str:
    """The instruction, the input files and the files to hand back (markdown)."""
    from .tasks import TRANSCRIPTION

    if task.family == TRANSCRIPTION:
        return transcription_instruction(task, bench.song(task.song))
    return audio_instruction(task)


def transcription_instruction(task: Any, song: Any) -> str:
    """A transcription task's instruction, what it hands over (an oracle run: what it gives too) and the
    answer's forms."""
    from ..transcribe.handover import given_text

    parts = ", ".join(f"`{p}`" for p in task.parts)
    given = given_text(task, song)
    ins = "\n".join(f"- `{i.name}`: {i.what}" for i in task.inputs)
    return (f"# {task.title} ({task.id})\n\n{task.instruction}\n\n## Input\n\n{ins}\n\n"
            f"{given + chr(10) if given else ''}"
            f"## Hand back\n\nThe notes of {parts}, as `notes.json` "
            "(`{\"time\": \"seconds\", \"parts\": {\"<part>\": [{\"p\": 60, \"t\": 0.0, \"d\": 0.5}]}}`, or "
            "`\"time\": \"beats\"` with your `\"tempo\"`) or `notes.mid` (one track per part, named for it).\n")


def audio_instruction(task: Any) -> str:
    """An audio task's instruction, its input files and the files to hand back."""
    ins = "\n".join(f"- `{i.name}`" for i in task.inputs)
    outs = "\n".join(f"- `{h['name']}`: {h['what']}" for h in hand_back(task))
    return (f"# {task.title} ({task.id})\n\n{task.instruction}\n\n## Inputs (48 kHz, 24-bit, stereo)\n\n{ins}\n\n"
            f"## Hand back (a folder holding these files; WAV or FLAC, 48 kHz stereo)\n\n{outs}\n")
