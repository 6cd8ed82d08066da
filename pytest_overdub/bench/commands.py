"""``overdub list``, ``overdub start`` and ``overdub score``: the scorer without pytest.

Each ``*_main(argv)`` returns an exit code or raises an :class:`~pytest_overdub.errors.OverdubError` that
:mod:`pytest_overdub.cli` prints as one line (exit 2); paths and numbers are checked before any work.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from ..cliargs import Parser, add_sandbox_options, arg, float_in, input_file, output_dir, output_file
from ..errors import OverdubError, UsageError
from .tasks import Bench, bundled_bench

BENCH_HELP = "a bench folder: tasks/<id>.json, songs/, oracles/, near_misses/ (default: the bundled bench)"


def bench_dir(text: str) -> Bench:
    """The bench at ``text``: an existing folder holding ``tasks/`` with at least one task file."""
    path = Path(text)
    want = "want a bench folder holding tasks/<id>.json and songs/"
    if not path.exists():
        raise UsageError(f"{text}: no such folder; {want}")
    if not path.is_dir():
        raise UsageError(f"{text} is a file; {want}")
    if not any((path / "tasks").glob("*.json")):
        raise UsageError(f"{text} has no task files in {path / 'tasks'}; {want}")
    return Bench(path.resolve())


def _bench(bench: Bench | None) -> Bench:
    return bench if bench is not None else bundled_bench()


def list_main(argv: list[str]) -> int:
    parser = Parser(prog="overdub list", description="List the tasks and their instructions.",
                    epilog="example: overdub list --bench ../my-tasks")
    parser.add_argument("--bench", type=arg(bench_dir), help=BENCH_HELP)
    parser.add_argument("--json", action="store_true",
                        help="print a JSON list of {id, family, title, instruction} (the instruction verbatim)")
    parser.add_argument("--variants", action="store_true",
                        help="list the train variants (<task>@<seed>, seeds 1-99) of every task template instead")
    args = parser.parse_args(argv)
    if args.variants:
        return _list_variants(as_json=args.json)
    bench = _bench(args.bench)
    tasks = [bench.task(tid) for tid in bench.task_ids()]
    if args.json:
        print(json.dumps([{"id": t.id, "family": t.family, "title": t.title, "instruction": t.instruction}
                          for t in tasks], indent=2, ensure_ascii=False))
        return 0
    for task in tasks:
        print(f"{task.id}  [{task.family}]  {task.title}")
        print(textwrap.indent(textwrap.fill(task.instruction, 96), "    "))
    return 0


def _list_variants(*, as_json: bool) -> int:
    """The train variants' ids; their songs and instructions are made by ``overdub start <id>``."""
    from .variants import TRAIN_SEEDS, train_ids

    ids = train_ids()
    if as_json:
        print(json.dumps([{"id": vid, "task": vid.split("@")[0], "seed": int(vid.split("@")[1]), "split": "train"}
                          for vid in ids], indent=2))
        return 0
    print(f"{len(ids)} train variants (seeds {TRAIN_SEEDS.start}-{TRAIN_SEEDS.stop - 1}); "
          "test seeds (1000 and up) are made on demand: overdub start <task>@<seed>")
    for vid in ids:
        print(vid)
    return 0


def start_main(argv: list[str]) -> int:
    """The song carries the task's id and instruction in ``meta`` (``meta.task``, ``meta.instruction``): the
    file stays a plain ``overdub/0`` song (``meta`` is free-form and never scored), and an agent handed only
    that file still reads what to do. An audio task writes a folder instead: its input WAVs and
    ``INSTRUCTION.md`` (the instruction and the files to hand back)."""
    parser = Parser(prog="overdub start",
                    description="Write the song an agent is handed for a task (setup applied), with the task's "
                                "id and instruction in its meta; for an audio task, a folder with its input WAVs "
                                "and INSTRUCTION.md.",
                    epilog="example: overdub start mix-chorus-lift --out start.json\n"
                           "         overdub start master-streaming-single --out work/")
    parser.add_argument("task")
    parser.add_argument("--out", help="where to write the song, a .json file (default: print it); for an audio "
                                      "task a folder (required); for a transcription task the mix, a .wav file, "
                                      "or a folder to hold mix.wav and INSTRUCTION.md (default: print the cached "
                                      "mix's path)")
    parser.add_argument("--bench", type=arg(bench_dir), help=BENCH_HELP)
    args = parser.parse_args(argv)
    from ..song.model import dumps_song
    from .tasks import TRANSCRIPTION, start_song

    bench = _bench(args.bench)
    task = bench.task(args.task)
    if task.family == TRANSCRIPTION:
        return _start_transcription(task, bench, args.out)
    if task.is_audio:
        return _start_audio(task, bench, args.out)
    try:
        out = output_file(args.out, what="song file", suffixes=(".json",)) if args.out is not None else None
    except UsageError as exc:
        raise UsageError(f"argument --out: {exc}") from None
    song = start_song(task, bench=bench)
    song = song.model_copy(update={"meta": {**song.meta, "task": task.id, "instruction": task.instruction}})
    text = dumps_song(song)
    if out:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise OverdubError(f"--out {out}: cannot write: {exc.strerror}") from None
        print(f"wrote {out}")
    else:
        print(text, end="")
    return 0


def submission_arg(text: str) -> Path:
    """A readable submission file, or a folder (of ``<task>.json`` answers)."""
    if text and Path(text).is_dir():
        return Path(text)
    return input_file(text, what="submission file (JSON; a transcription task also takes .mid), or a folder "
                                 "of answers")


def answer_path(path: Path, task_id: str) -> Path:
    """The submission file: ``path`` itself, or ``<path>/<task_id>.json`` when ``path`` is a folder."""
    if not path.is_dir():
        return path
    answer = path / f"{task_id}.json"
    if not answer.is_file():
        raise UsageError(f"{path}: no answer for task {task_id} in this folder (no file {answer})")
    return answer


def _start_transcription(task, bench: Bench, out_text: str | None) -> int:
    """A transcription task hands the agent the mix alone (never the song, which is the answer): to a
    ``.wav`` file, or into a folder as ``mix.wav`` with ``INSTRUCTION.md``; no ``--out``: the cached file's
    path is printed. An oracle run given stems has several files: a folder, or no ``--out`` (every path)."""
    import shutil

    from .handoff import MIX, input_files

    if out_text is None:
        for path in input_files(task, bench).values():
            print(path)
        return 0
    if out_text.lower().endswith(".wav") and "stems" in task.given:
        raise UsageError(f"argument --out: {task.id} is an oracle run that gives stems too; give a folder")
    if out_text.lower().endswith(".wav"):
        out = output_file(out_text, what="mix file", suffixes=(".wav",))
        try:
            shutil.copyfile(input_files(task, bench)[MIX], out)
        except OSError as exc:
            raise OverdubError(f"--out {out}: cannot write: {exc.strerror}") from None
        print(f"wrote {out}")
        return 0
    _write_folder(task, bench, output_dir(out_text, what="folder for the task's mix"))
    return 0


def _start_audio(task, bench: Bench, out_text: str | None) -> int:
    """The inputs (copied from the cache, rendered first if needed) and INSTRUCTION.md into ``out_text``."""
    if out_text is None:
        raise UsageError(f"{task.id} is an audio task: give --out DIR, the folder to write its input WAVs into")
    _write_folder(task, bench, output_dir(out_text, what="folder for the task's input WAVs"))
    return 0


def _write_folder(task, bench: Bench, out: Path) -> None:
    from .handoff import instruction, write_inputs

    try:
        names = write_inputs(task, bench, out)
        (out / "INSTRUCTION.md").write_text(instruction(task, bench=bench), encoding="utf-8")
    except OSError as exc:
        raise OverdubError(f"--out {out}: cannot write: {exc.strerror}") from None
    print(f"wrote {', '.join(names)} and INSTRUCTION.md into {out}")


def score_main(argv: list[str]) -> int:
    parser = Parser(
        prog="overdub score",
        description="Score a submission (ops, {ops}, transactions, a tool-call log or a whole song) on a "
                    "task (a folder of answers: its <task>.json), an audio task's answer folder, or a transcription task's notes (a notes .json, a .mid "
                    "file or a folder holding one). Exit 0 when the score reaches --pass, 1 under it, 2 on bad "
                    "input.",
        epilog="example: overdub score mix-chorus-lift ops.json --json")
    parser.add_argument("task")
    parser.add_argument("submission", type=arg(submission_arg),
                        help="a submission file; for an audio task the folder holding its answer files "
                             "(or DIR/<task-id>/ holding them); for a transcription task a notes .json, a .mid "
                             "file or a folder holding notes.json or notes.mid (or DIR/<task-id>/ holding it)")
    parser.add_argument("--bench", type=arg(bench_dir), help=BENCH_HELP)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--pass", dest="pass_line", type=arg(float_in, lo=0.0, hi=1.0, what="a task score"),
                        default=0.9, help="the score that passes, 0..1 (default 0.9)")
    add_sandbox_options(parser, weak_note="; the result says which layers ran")
    args = parser.parse_args(argv)
    from ..song.submission import load_submission
    from .report import dumps_json, result_to_dict

    if args.weak_sandbox:
        from ..render.trust import allow_weak_sandbox

        allow_weak_sandbox()
    from .tasks import score_task

    bench = _bench(args.bench)
    task = bench.task(args.task)
    if task.family == "transcription":
        from ..transcribe.answer import read_answer

        path = args.submission / task.id if (args.submission / task.id).is_dir() else args.submission
        answer = read_answer(path, parts=task.parts)  # notes per part; bad input: exit 2
        result = score_task(task, answer, bench=bench)
    elif task.is_audio:
        from .audio.score import score_audio_task

        if not args.submission.is_dir():
            raise UsageError(f"{args.submission}: {task.id} is an audio task; want the folder holding "
                             + ", ".join(a.name for a in task.answer))
        result = score_audio_task(task, args.submission, bench=bench)
    else:
        submission = load_submission(answer_path(args.submission, task.id))  # unreadable: an error (exit 2)
        result = score_task(task, submission, bench=bench, trusted=True if args.trust_kernels else None)
    if args.json:
        print(dumps_json(result_to_dict(result)))
    else:
        print(result.text())
    return 0 if result.score >= args.pass_line else 1
