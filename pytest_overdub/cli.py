"""The ``overdub`` command: the bench for people (README.md; docs/README.md).

Each subcommand lives with the layer it serves and loads only when called, so ``overdub --help`` is
instant. Every subcommand's ``--help`` explains it with an example.

Exit codes, the same for every subcommand: 0 done (a score at or over the pass line, every validity rule
held); 1 the work was done and the answer is no (a score under the pass line, a validity rule failed);
2 bad input, said in one line on stderr (an unknown option, a number out of range, a file that is missing
or cannot be read or written, a song, task or submission that is not valid); 130 interrupted; 141 the
reader of the output went away (``overdub list | head -1``), like any program killed by SIGPIPE.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

#: name -> ("module:function", one-line help). The function takes argv (list[str]) and returns an exit code.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("pytest_overdub.bench.run:main", "score every task's oracle, baseline and near misses; print the table"),
    "list": ("pytest_overdub.bench.commands:list_main", "list the tasks and their instructions"),
    "start": ("pytest_overdub.bench.commands:start_main", "write the song an agent is handed for a task"),
    "score": ("pytest_overdub.bench.commands:score_main", "score a submission on a task (no pytest needed)"),
    "generate": ("pytest_overdub.generate.cli:main", "write an original song from a seed, with its ground truth"),
    "render": ("pytest_overdub.render.cli:main", "render a song to a 24-bit WAV (and stems)"),
    "measure": ("pytest_overdub.measure.report:main", "print every meter's figure for a WAV or FLAC file"),
    "devices": ("pytest_overdub.render.cli:devices_main", "list the house devices and their parameters"),
    "mcp": ("pytest_overdub.studio.server:main",
            "serve the studio to an agent: an MCP server on stdio (a task's song, or any song)"),
    "schema": ("pytest_overdub.song.schema:main", "print the JSON Schema of songs, ops or tasks"),
    "eval": ("pytest_overdub.evaluate.cli:main", "run an agent on the tasks, K trials each, into a run folder"),
    "report": ("pytest_overdub.evaluate.report:main",
               "summarize an evaluation run: pass rates with intervals, pass^k, costs (--html, --regrade)"),
    "compare": ("pytest_overdub.evaluate.compare:main", "compare two evaluation runs, paired on task and trial"),
    "check-changed": ("pytest_overdub.bench.precommit:main",
                      "self-check the tasks that changed files touch (the pre-commit hook)"),
}


def _usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = ["usage: overdub COMMAND [ARGS]  (overdub COMMAND --help for details)", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines)


def _unknown(name: str) -> str:
    """One line for a command that does not exist: the closest one, and all of them."""
    from difflib import get_close_matches

    close = get_close_matches(name, COMMANDS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown command {name!r}{hint}; commands: {', '.join(COMMANDS)} (see overdub --help)"


def main(argv: list[str] | None = None) -> int:
    """Run ``overdub``; returns the exit code (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage(), file=sys.stdout if argv else sys.stderr)  # asked for, or a missing command
        return 0 if argv else 2
    if argv[0] == "--version":
        from . import BENCH_VERSION, __version__

        print(f"pytest-overdub {__version__} ({BENCH_VERSION})")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"overdub: {_unknown(name)}", file=sys.stderr)
        return 2
    module, func = COMMANDS[name][0].split(":")
    from . import runtime
    from .errors import OverdubError

    try:
        runtime.enter("overdub")  # the scorer's process-wide settings (malloc, caches, GC at exit)
        code = int(getattr(import_module(module), func)(rest) or 0)
        sys.stdout.flush()  # a reader that went away (``| head -1``) shows up here, not at exit
        return code
    except OverdubError as exc:
        print(f"overdub {name}: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # ``--help``
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"overdub {name}: interrupted", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout is not a real file (a test's capture)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
