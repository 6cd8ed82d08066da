"""The sandbox's messages on a Unix socket: a 4-byte little-endian length, then a JSON body.

File descriptors ride on the first bytes of a message (``SCM_RIGHTS``). Used by all three parties (the
scorer, the fork server, the child); a peer that sends more than :data:`MAX_MSG_BYTES` or closes early
reads as ``EOFError``, a missed deadline as ``TimeoutError``.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from typing import Any

_HDR = struct.Struct("<I")
#: The largest message body accepted (a larger length header is treated as a broken peer).
MAX_MSG_BYTES = 64 * 1024 * 1024


def send(sock: socket.socket, obj: Any, fds: tuple[int, ...] = ()) -> None:
    """Send ``obj`` as one framed JSON message, passing ``fds`` along with its first bytes."""
    body = json.dumps(obj, allow_nan=True).encode("utf-8")
    buf = _HDR.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [buf], list(fds))
        buf = buf[sent:]
    if buf:
        sock.sendall(buf)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None, fds: list[int]) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        data, new_fds, _flags, _addr = socket.recv_fds(sock, n - got, 4)
        fds.extend(new_fds)
        if not data:
            raise EOFError
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def recv(sock: socket.socket, deadline: float | None = None) -> tuple[Any, list[int]]:
    """Receive one message by ``deadline`` (a ``time.monotonic()`` value; None waits for ever).
    Returns ``(message, fds received with it)``."""
    fds: list[int] = []
    (n,) = _HDR.unpack(_recv_exact(sock, 4, deadline, fds))
    if n > MAX_MSG_BYTES:
        raise EOFError
    return json.loads(_recv_exact(sock, n, deadline, fds)), fds
