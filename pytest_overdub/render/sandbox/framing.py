"""The sandbox's messages on a Unix socket: a 4-byte little-endian length, then a JSON body.

File descriptors ride on the first bytes of a message (``SCM_RIGHTS``). Used by all three parties (the
scorer, the fork server, the child). The receiving side bounds what it takes: a length prefix above
``max_bytes`` is refused before a byte of the body is read or allocated, more than ``max_fds`` passed
descriptors (the kernel drops those that do not fit; the ones received are closed) and a body that is not
JSON are refused too, each as :class:`BadMessage` saying which. The scorer reads a child's replies with
small caps (:data:`.replies.MAX_REPLY_BYTES`, no descriptors at all); the child reads the scorer's
requests with :data:`MAX_MSG_BYTES`. A peer that closes early reads as ``EOFError`` (``BadMessage`` is
one, so a party that treats a broken peer as gone still does), a missed deadline as ``TimeoutError``.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import time
from typing import Any

_HDR = struct.Struct("<I")
#: The largest message body accepted by default.
MAX_MSG_BYTES = 64 * 1024 * 1024
#: The most file descriptors accepted with one message by default (a call passes one).
MAX_FDS = 4


class BadMessage(EOFError):
    """A message the receiver refuses: too long, too many descriptors, or not JSON."""


def send(sock: socket.socket, obj: Any, fds: tuple[int, ...] = ()) -> None:
    """Send ``obj`` as one framed JSON message, passing ``fds`` along with its first bytes."""
    body = json.dumps(obj, allow_nan=True).encode("utf-8")
    buf = _HDR.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [buf], list(fds))
        buf = buf[sent:]
    if buf:
        sock.sendall(buf)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None, fds: list[int], max_fds: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        data, new_fds, flags, _addr = socket.recv_fds(sock, n - got, max_fds + 1)
        fds.extend(new_fds)
        if len(fds) > max_fds or flags & socket.MSG_CTRUNC:
            raise BadMessage(f"passed file descriptors (at most {max_fds} allowed)")
        if not data:
            raise EOFError
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def recv(sock: socket.socket, deadline: float | None = None, *, max_bytes: int = MAX_MSG_BYTES,
         max_fds: int = MAX_FDS) -> tuple[Any, list[int]]:
    """Receive one message by ``deadline`` (a ``time.monotonic()`` value; None waits for ever), at most
    ``max_bytes`` long with at most ``max_fds`` descriptors. Returns ``(message, fds received with it)``;
    on any error the descriptors received so far are closed."""
    fds: list[int] = []
    try:
        (n,) = _HDR.unpack(_recv_exact(sock, 4, deadline, fds, max_fds))
        if n > max_bytes:
            raise BadMessage(f"a message of {n} bytes (at most {max_bytes} allowed)")
        body = _recv_exact(sock, n, deadline, fds, max_fds)
        try:
            return json.loads(body), fds
        except (ValueError, RecursionError) as e:
            raise BadMessage(f"a message that is not JSON ({type(e).__name__})") from None
    except BaseException:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        raise
