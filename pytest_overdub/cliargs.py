"""The arguments of every ``overdub`` subcommand: one-line errors, checked paths and numbers.

Convention: a mistake on the command line (an unknown option, a number out of range, a file that is
missing, a directory where a file belongs, a place that cannot be written, a wrong extension) raises
:class:`~pytest_overdub.errors.UsageError` before any work starts; :func:`pytest_overdub.cli.main` prints
it as one line, ``overdub COMMAND: message``, and exits 2 (the exit code of every bad-input error).

The path checks are plain functions (the pytest plugin uses them for ``--overdub-report``) and become
argparse types through :func:`arg`, so argparse names the option in the message. Stdlib only.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
from pathlib import Path
from typing import Any, Callable

from .errors import UsageError


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one :class:`UsageError` line instead of usage text and exit."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        raise UsageError(f"{message} (see {self.prog} --help)")


def arg(check: Callable[..., Any], **kw: Any) -> Callable[[str], Any]:
    """``check(text, **kw)`` as an argparse ``type=``: its UsageError becomes argparse's own error."""

    def convert(text: str) -> Any:
        try:
            return check(text, **kw)
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = check.__name__
    return convert


# --- numbers -----------------------------------------------------------------------------------------


def int_in(text: str, *, lo: int, hi: int | None = None, what: str = "a whole number", unit: str = "") -> int:
    """``text`` as an int in ``lo..hi`` (``hi`` None: no upper bound)."""
    span = (f" in {lo}..{hi}" if hi is not None else f", {lo} or more") + (f" {unit}" if unit else "")
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{text!r}: want {what}{span}") from None
    if value < lo or (hi is not None and value > hi):
        raise UsageError(f"{value}: want {what}{span}")
    return value


def float_in(text: str, *, lo: float, hi: float, what: str = "a number") -> float:
    """``text`` as a finite float in ``lo..hi``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not lo <= value <= hi:
        raise UsageError(f"{text!r}: want {what} between {lo:g} and {hi:g}")
    return value


# --- paths -------------------------------------------------------------------------------------------


def input_file(text: str, *, what: str = "file") -> Path:
    """An existing, readable regular file (or a device or pipe such as /dev/stdin)."""
    path = Path(text)
    if not text:
        raise UsageError(f"want a {what}, got an empty path")
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        where = "" if path.parent.exists() else f" (no folder {path.parent})"
        raise UsageError(f"{text}: no such file{where}; want a {what}") from None
    except OSError as exc:
        raise UsageError(f"{text}: cannot read: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise UsageError(f"{text} is a folder; want a {what}")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{text}: cannot read: permission denied")
    return path


def output_file(text: str, *, what: str = "file", suffixes: tuple[str, ...] = ()) -> Path:
    """A file that can be written: not a folder, its folder exists, writable, and ending in one of
    ``suffixes`` (when given; an existing device or pipe such as /dev/stdout is taken as it is).

    Writability is probed by opening the file for appending (a file this creates is removed again), so a
    read-only file system or a folder of someone else's is refused here, not after the work is done.
    """
    path = Path(text)
    if not text:
        raise UsageError(f"want a {what}, got an empty path")
    allowed = f"; want a {what} ending in {' or '.join(suffixes)}" if suffixes else f"; want a {what}"
    if text.endswith(("/", os.sep)) or path.is_dir():
        raise UsageError(f"{text} is a folder{allowed}")
    special = path.exists() and not path.is_file()
    if suffixes and not special and path.suffix.lower() not in suffixes:
        got = f"extension {path.suffix!r}" if path.suffix else "no extension"
        raise UsageError(f"{text} has {got}{allowed}")
    if not path.parent.exists():
        raise UsageError(f"{text}: the folder {path.parent} does not exist")
    if not path.parent.is_dir():
        raise UsageError(f"{text}: {path.parent} is not a folder")
    if special:
        if not os.access(path, os.W_OK):
            raise UsageError(f"{text}: cannot write: permission denied")
        return path
    _probe_write(path, text)
    return path


def output_dir(text: str, *, what: str = "folder") -> Path:
    """A folder that exists and can be written, or that can be made (its nearest existing parent is a
    writable folder); not an existing file."""
    path = Path(text)
    if not text:
        raise UsageError(f"want a {what}, got an empty path")
    if path.exists() and not path.is_dir():
        raise UsageError(f"{text} is a file; want a {what} (it is made if missing)")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{text}: {existing} is a file, not a folder")
    if not _can_create_in(existing):
        raise UsageError(f"{text}: cannot write into {existing}: permission denied or read-only")
    return path


def _probe_write(path: Path, text: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
        except OSError as exc:
            raise UsageError(f"{text}: cannot write: {exc.strerror}") from None
        return
    except OSError as exc:
        raise UsageError(f"{text}: cannot write into {path.parent}: {exc.strerror}") from None
    os.close(fd)
    path.unlink()


def _can_create_in(folder: Path) -> bool:
    probe = folder / f".overdub-probe-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except OSError:
        return False
    probe.unlink()
    return True


def add_sandbox_options(parser: argparse.ArgumentParser, *, weak_note: str = "") -> None:
    """``--trust-kernels`` and ``--weak-sandbox``, as every command that renders song-defined devices takes
    them (``weak_note``: what the command adds to the second's help)."""
    parser.add_argument("--trust-kernels", action="store_true",
                        help="run song-defined devices in-process instead of the sandbox")
    parser.add_argument("--weak-sandbox", action="store_true",
                        help="run untrusted kernels even where a required sandbox layer cannot be applied "
                             "(also OVERDUB_WEAK_SANDBOX=1)" + weak_note)
