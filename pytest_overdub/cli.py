"""The ``overdub`` command: the bench for people (SPEC section 11).

Each subcommand lives with the layer it serves and loads only when called, so ``overdub --help`` is
instant. Every subcommand's ``--help`` explains it with an example.
"""

from __future__ import annotations

import sys
from importlib import import_module

#: name -> ("module:function", one-line help). The function takes argv (list[str]) and returns an exit code.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("pytest_overdub.bench.run:main", "score every task's oracle, baseline and near misses; print the table"),
    "list": ("pytest_overdub.bench.commands:list_main", "list the tasks and their instructions"),
    "start": ("pytest_overdub.bench.commands:start_main", "write the song an agent is handed for a task"),
    "score": ("pytest_overdub.bench.commands:score_main", "score a submission on a task (no pytest needed)"),
    "render": ("pytest_overdub.render.cli:main", "render a song to a 24-bit WAV (and stems)"),
    "measure": ("pytest_overdub.measure.report:main", "print every meter's figure for a WAV or FLAC file"),
    "devices": ("pytest_overdub.render.cli:devices_main", "list the house devices and their parameters"),
    "schema": ("pytest_overdub.song.schema:main", "print the JSON Schema of songs, ops or tasks"),
    "check-changed": ("pytest_overdub.bench.precommit:main",
                      "self-check the tasks that changed files touch (the pre-commit hook)"),
}


def _usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = ["usage: overdub COMMAND [ARGS]  (overdub COMMAND --help for details)", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"overdub: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module, func = COMMANDS[name][0].split(":")
    from . import runtime
    from .errors import OverdubError

    try:
        runtime.enter("overdub")  # the scorer's process-wide settings (malloc, caches, GC at exit)
        return int(getattr(import_module(module), func)(rest) or 0)
    except OverdubError as exc:
        print(f"overdub {name}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
