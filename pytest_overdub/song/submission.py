"""Reading an agent's answer: every submission form of docs/formats.md.

Accepted forms:

1. ``[op, …]``: one transaction.
2. ``{"ops": […]}``: one transaction.
3. ``[{"ops": […]}, …]``: several transactions, in order.
4. ``{"calls": [{"tool"|"name": …, "input"|"arguments": …}]}``: a logged tool-call session. ``apply_ops``
   calls (input ``{"ops": […]}``) and ``define_device`` calls are replayed, one transaction each; an
   ``undo`` call drops the last transaction still applied (an ``undo`` with none is refused, naming the
   call); every other tool is ignored. ``define_device`` with ``use_on: {track, index?}`` also installs the
   device: ``instrument.set`` for an instrument, ``insert.add`` for an effect (:func:`define_device_ops`).
   ``arguments`` may be a JSON string. The studio (:mod:`pytest_overdub.studio`) writes this form.
5. A whole song (``"format": "overdub/0"``), scored as it stands.

A submission is bounded (:mod:`.limits`): its file size, its number of transactions and of ops, and (a
whole song) the song's own limits; one over a bound is refused when it is loaded, naming the limit.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SubmissionError
from .limits import check_file_size, ops_refusal
from .model import Song, SongError, song_from_data

FORMS = ("[op, …]", "{\"ops\": […]}", "[{\"ops\": […]}, …]", "{\"calls\": [{\"tool\", \"input\"}]}",
         "a whole song (\"format\": \"overdub/0\")")


@dataclass(frozen=True)
class Submission:
    """Either ``transactions`` (lists of op dicts) or a whole ``song``; ``sha256`` of the file's bytes."""

    source: str
    sha256: str
    transactions: tuple[tuple[Any, ...], ...] = ()
    song: Song | None = None
    ignored_calls: tuple[str, ...] = field(default=())

    @property
    def is_song(self) -> bool:
        return self.song is not None


def _forms() -> str:
    return "; ".join(FORMS)


def _is_op(x: Any) -> bool:
    return isinstance(x, dict) and "type" in x


def define_device_ops(args: dict, where: str) -> list[dict]:
    """The ops one ``define_device`` call stands for: ``device.define``, then with ``use_on`` the op that
    installs it (``instrument.set`` for an instrument, ``insert.add`` at ``use_on.index`` for an effect).
    ``args`` is the call's input (``{device, use_on?}``; a bare device object is read as ``device``, a
    ``code`` field as ``kernel``); ``where`` prefixes a :class:`SubmissionError` for a malformed input."""
    args = dict(args)
    use_on = args.pop("use_on", None)
    device = args.pop("device", None) or args
    if not isinstance(device, dict):
        raise SubmissionError(f"{where}: define_device input must be an object with the device fields")
    if "code" in device and "kernel" not in device:
        device = {**device, "kernel": device["code"]}
        device.pop("code")
    ops: list[dict] = [{"type": "device.define", "device": device}]
    if use_on is not None:
        if not isinstance(use_on, dict) or "track" not in use_on:
            raise SubmissionError(f"{where}.use_on: expected {{track, index?}}, got {json.dumps(use_on)}")
        if device.get("kind") == "instrument":
            ops.append({"type": "instrument.set", "track": use_on["track"], "device": device.get("id")})
        else:
            ins = {"type": "insert.add", "track": use_on["track"], "insert": {"device": device.get("id")}}
            if use_on.get("index") is not None:
                ins["index"] = use_on["index"]
            ops.append(ins)
    return ops


def _from_calls(calls: Any, source: str) -> tuple[list[list[Any]], list[str]]:
    if not isinstance(calls, list):
        raise SubmissionError(f"{source}: calls must be a list of {{tool, input}}")
    txs, ignored = [], []
    for i, call in enumerate(calls):
        where = f"{source}: calls[{i}]"
        if not isinstance(call, dict):
            raise SubmissionError(f"{where}: expected an object {{tool, input}}")
        tool = call.get("tool", call.get("name"))
        args = call.get("input", call.get("arguments", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError as exc:
                raise SubmissionError(f"{where}.arguments: not valid JSON ({exc.msg})") from None
        if tool == "apply_ops":
            ops = args.get("ops") if isinstance(args, dict) else None
            if not isinstance(ops, list):
                raise SubmissionError(f"{where}.input.ops: expected a list of ops")
            txs.append(ops)
        elif tool == "define_device":
            if not isinstance(args, dict):
                raise SubmissionError(f"{where}.input: expected an object")
            txs.append(define_device_ops(args, f"{where}.input"))
        elif tool == "undo":
            if not txs:
                raise SubmissionError(f"{where}: undo with nothing to undo (no apply_ops or define_device "
                                      f"call before it is still applied)")
            txs.pop()
        else:
            ignored.append(str(tool))
    return txs, ignored


def submission_from_data(data: Any, *, source: str = "<submission>", sha256: str = "") -> Submission:
    """Classify parsed JSON into a :class:`Submission`, or raise SubmissionError listing the forms or
    naming the limit a submission exceeds."""
    sub = _classify(data, source=source, sha256=sha256)
    _check_counts(sub)
    return sub


def _check_counts(sub: Submission) -> None:
    too_many = ops_refusal(sub.transactions)
    if too_many is not None:
        raise SubmissionError(f"{sub.source}: {too_many}")


def _classify(data: Any, *, source: str, sha256: str) -> Submission:
    if isinstance(data, dict) and "format" in data:
        try:
            return Submission(source=source, sha256=sha256, song=song_from_data(data, source=source))
        except SongError as exc:
            raise SubmissionError(str(exc)) from None
    if isinstance(data, dict) and "calls" in data:
        txs, ignored = _from_calls(data["calls"], source)
        return Submission(source=source, sha256=sha256, transactions=tuple(tuple(t) for t in txs),
                          ignored_calls=tuple(ignored))
    if isinstance(data, dict) and isinstance(data.get("ops"), list):
        return Submission(source=source, sha256=sha256, transactions=(tuple(data["ops"]),))
    if isinstance(data, list) and data and all(isinstance(t, dict) and "ops" in t and "type" not in t
                                               for t in data):
        txs = []
        for i, t in enumerate(data):
            if not isinstance(t["ops"], list):
                raise SubmissionError(f"{source}: [{i}].ops: expected a list of ops")
            txs.append(tuple(t["ops"]))
        return Submission(source=source, sha256=sha256, transactions=tuple(txs))
    if isinstance(data, list) and all(_is_op(x) for x in data):
        return Submission(source=source, sha256=sha256, transactions=(tuple(data),))
    shape = type(data).__name__
    if isinstance(data, list):
        bad = next((i for i, x in enumerate(data) if not _is_op(x)), 0)
        shape = f"a list whose item [{bad}] is {json.dumps(data[bad])[:60]}"
    elif isinstance(data, dict):
        shape = f"an object with keys {', '.join(list(data)[:8])}"
    raise SubmissionError(f"{source}: not a submission ({shape}); accepted forms: {_forms()}")


def load_submission(path: str | Path) -> Submission:
    p = Path(path)
    try:
        check_file_size(p.stat().st_size, source=str(p), error=SubmissionError)
        raw = p.read_bytes()
    except FileNotFoundError:
        raise SubmissionError(f"{p}: no such file") from None
    except OSError as exc:
        raise SubmissionError(f"{p}: cannot read: {exc.strerror}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SubmissionError(f"{p}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"{p}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    return submission_from_data(data, source=str(p), sha256=hashlib.sha256(raw).hexdigest())
