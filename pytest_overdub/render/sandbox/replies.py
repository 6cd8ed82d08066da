"""What the scorer accepts from a sandbox child: every message checked field by field, with bounds,
before any of it is used or anything is allocated from it.

A child runs the kernel's code in its own interpreter, so whatever it sends may be forged (a kernel
can replace the child's ``send``, or write to the socket itself). :func:`check_reply` accepts exactly
the messages :mod:`.child` and :mod:`.audit` send, and nothing else:

==========  ==================================================================================
``ready``   ``ready`` True, ``pid`` (1..2**22), ``layers`` and ``missing`` (at most
            :data:`MAX_LAYERS` strings of at most :data:`MAX_LAYER_CHARS`), ``probe`` (an address)
``built``   ``ok`` True, ``tail_s`` (0..:data:`~pytest_overdub.render.kernels.MAX_TAIL_S`),
            ``latency_frames`` (an int, 0..10 s of frames, the bound the child's
            :class:`~pytest_overdub.render.kernels.KernelRuntime` applies), ``cpu_ms``
``called``  ``ok`` True, ``cpu_ms``, ``timing_ms`` (3 durations), and ``addr`` (an address) exactly when
            the scorer reads the output from the child's memory
fault       ``ok`` False, ``error`` and ``reason`` (strings of at most :data:`MAX_TEXT_CHARS`)
note        ``note`` (a string of at most :data:`MAX_NOTE_CHARS`); at most :data:`MAX_NOTES` a device
==========  ==================================================================================

Durations (``cpu_ms``, ``timing_ms``) are finite, in 0..:data:`MAX_MS`; addresses are ints in
1..2**56 (the top of a 5-level-paging user space); ``true``/``false`` never pass for numbers; a key not
listed is refused. A message that breaks any of this raises :class:`BadReply`, whose text names the
field, the value and what was allowed ("latency_frames 60000000 is outside 0..480000"); the scorer
then ends the child and reports the device's fault (:mod:`.client`). Strings that pass are made safe to
print (:func:`printable`). The child clips what it sends to these sizes (:func:`clip`), so an honest
child never trips them.
"""

from __future__ import annotations

import math
import reprlib
from typing import Any, Callable

#: The largest message the scorer reads from a child; a longer length prefix is refused unread.
MAX_REPLY_BYTES = 1024 * 1024
#: The longest ``error`` or ``reason`` (a kernel's message and traceback), in characters.
MAX_TEXT_CHARS = 16_000
#: The longest audit note, in characters.
MAX_NOTE_CHARS = 1_000
#: The most notes one device may send (the audit hook sends at most 16 per device; a reused child's
#: previous kernel may add its own from its clean-up).
MAX_NOTES = 64
MAX_LAYERS = 32
MAX_LAYER_CHARS = 500
#: The largest duration a child may report, in ms (11.6 days).
MAX_MS = 1e9
MAX_ADDR = 2 ** 56
MAX_PID = 2 ** 22
MAX_LATENCY_S = 10


class BadReply(ValueError):
    """A message from a child that is not one the child's code sends; its text says what was wrong."""


def _repr() -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxlong, short.maxother = 2, 4, 4, 40, 40, 40
    return short


_SHORT = _repr()


def _show(value: Any) -> str:
    """A short repr of a value a child sent (depth, length and digits capped)."""
    return _SHORT.repr(value)


def _number(key: str, value: Any, lo: float, hi: float, *, integer: bool = False) -> None:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        want = "an int" if integer else "a number"
        raise BadReply(f"{key} {_show(value)} is not {want}")
    if (isinstance(value, float) and not math.isfinite(value)) or not lo <= value <= hi:
        raise BadReply(f"{key} {_show(value)} is outside {_bound(lo)}..{_bound(hi)}")


def _bound(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _text(key: str, value: Any, limit: int) -> None:
    if not isinstance(value, str):
        raise BadReply(f"{key} {_show(value)} is not a string")
    if len(value) > limit:
        raise BadReply(f"{key} is {len(value)} characters long; at most {limit} allowed")


def _texts(key: str, value: Any) -> None:
    if not isinstance(value, list) or len(value) > MAX_LAYERS:
        raise BadReply(f"{key} {_show(value)} is not a list of at most {MAX_LAYERS} strings")
    for i, item in enumerate(value):
        _text(f"{key}[{i}]", item, MAX_LAYER_CHARS)


def _is(expected: Any) -> Callable[[str, Any], None]:
    def check(key: str, value: Any) -> None:
        if value is not expected:
            raise BadReply(f"{key} {_show(value)} is not {_show(expected)}")

    return check


def _ms(key: str, value: Any) -> None:
    _number(key, value, 0.0, MAX_MS)


def _addr(key: str, value: Any) -> None:
    _number(key, value, 1, MAX_ADDR, integer=True)


def _timings(key: str, value: Any) -> None:
    if not isinstance(value, list) or len(value) != 3:
        raise BadReply(f"{key} {_show(value)} is not a list of 3 durations")
    for i, item in enumerate(value):
        _ms(f"{key}[{i}]", item)


def _fields(kind: str, *, sr: int, vm: bool) -> dict[str, Callable[[str, Any], None]]:
    """The fields of one kind of reply, each with its check (all required)."""
    from ..kernels import MAX_TAIL_S

    if kind == "ready":
        return {"ready": _is(True), "pid": lambda k, v: _number(k, v, 1, MAX_PID, integer=True),
                "layers": _texts, "missing": _texts, "probe": _addr}
    if kind == "built":
        return {"ok": _is(True), "tail_s": lambda k, v: _number(k, v, 0.0, MAX_TAIL_S),
                "latency_frames": lambda k, v: _number(k, v, 0, MAX_LATENCY_S * sr, integer=True),
                "cpu_ms": _ms}
    if kind == "called":
        fields = {"ok": _is(True), "cpu_ms": _ms, "timing_ms": _timings}
        return {**fields, "addr": _addr} if vm else fields
    if kind == "fault":
        return {"ok": _is(False), "error": lambda k, v: _text(k, v, MAX_TEXT_CHARS),
                "reason": lambda k, v: _text(k, v, MAX_TEXT_CHARS)}
    if kind == "note":
        return {"note": lambda k, v: _text(k, v, MAX_NOTE_CHARS)}
    raise ValueError(f"unknown reply kind {kind!r}")


def reply_kind(msg: Any, expected: str) -> str:
    """Which kind of message ``msg`` claims to be: a note, a fault, or the reply ``expected`` now."""
    if not isinstance(msg, dict):
        raise BadReply(f"a {type(msg).__name__} instead of an object")
    if "note" in msg:
        return "note"
    if msg.get("ok") is False:
        return "fault"
    return expected


def check_reply(msg: Any, kind: str, *, sr: int = 48000, vm: bool = False) -> dict:
    """``msg`` when it is a well-formed message of ``kind`` (``ready``, ``built``, ``called``,
    ``fault`` or ``note``); else :class:`BadReply`. ``sr``: the device's sample rate (bounds
    ``latency_frames``); ``vm``: whether a call's reply must carry the output's ``addr``."""
    if not isinstance(msg, dict):
        raise BadReply(f"a {type(msg).__name__} instead of an object")
    fields = _fields(kind, sr=sr, vm=vm)
    extra = sorted(set(msg) - set(fields))
    if extra:
        raise BadReply(f"{kind} reply with unexpected field {_show(extra[0])}")
    for key, check in fields.items():
        if key not in msg:
            raise BadReply(f"{kind} reply without {key}")
        try:
            check(key, msg[key])
        except BadReply:
            raise
        except (ArithmeticError, RecursionError, TypeError, ValueError) as e:  # a value built to break a check
            raise BadReply(f"{key} could not be checked ({type(e).__name__})") from None
    return msg


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, keeping its start and its end (where a traceback
    says what was raised) and saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = limit - 64  # room for the line saying what was cut
    head = keep * 2 // 3
    return text[:head] + f"\n... ({len(text) - keep} characters cut) ...\n" + text[len(text) - (keep - head):]


def printable(text: str) -> str:
    """``text`` safe to print on a terminal or write as UTF-8: control characters other than newline
    and tab (an escape sequence could redraw the user's terminal) and lone surrogates are escaped."""
    out = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if out.isprintable():
        return out
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in out)
