"""Figures of read-only arrays kept by identity in a scorer process: every rule of an audio task reads the
same inputs (the scorer's :data:`~pytest_overdub.bench.audio.inputs.INPUT_MEMO` hands out one read-only
array per input), and its checks measure them again for each answer: the hits of a source, the spectrum of
a mix to compare with, a song-length FFT of a source to find an answer's latency.

Conventions:

* Kept only while the scorer runtime is active (:mod:`pytest_overdub.runtime`); a library call computes.
* Only for an array that is read-only along its whole chain of bases (none of it can change while kept),
  keyed by the array object itself (``id`` checked through a weak reference, so a freed array's id never
  finds another's figure) and a name for the figure that says everything else it depends on (the rate,
  the band). The same object gives the same samples, so a kept figure is the one the computation gives,
  bit for bit.
* At most :data:`MAX_BYTES` of kept arrays (plus small values), the least recently used dropped first.
  :func:`clear` empties it (:func:`~pytest_overdub.bench.context.clear_process_caches`, and the repeat rule
  of an audio task, so a repeat measures afresh). Kept arrays are made read-only.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

#: The kept figures' bytes at most (a song-length FFT is 64 MB).
MAX_BYTES = 256 << 20
_KEPT: dict[tuple[int, str], tuple[Any, Any]] = {}


def kept(x: Any, what: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, a figure of ``x`` named ``what``: kept for ``x`` while it lives (see the module)."""
    if not _frozen(x):
        return compute()
    from .. import runtime

    if not runtime.active():
        return compute()
    key = (id(x), what)
    hit = _KEPT.pop(key, None)
    if hit is not None and hit[0]() is x:
        _KEPT[key] = hit  # the most recent last
        return hit[1]
    value = compute()
    if hasattr(value, "setflags"):
        value.setflags(write=False)
    _KEPT[key] = (weakref.ref(x), value)
    while _bytes() > MAX_BYTES and len(_KEPT) > 1:
        del _KEPT[next(iter(_KEPT))]
    return value


def clear() -> None:
    _KEPT.clear()


def _frozen(x: Any) -> bool:
    """Whether ``x`` is an array none of whose memory can be written (it and every base read-only)."""
    import numpy as np

    if not isinstance(x, np.ndarray):
        return False
    a = x
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    return a is None


def _bytes() -> int:
    return sum(getattr(v, "nbytes", 0) for _, v in _KEPT.values())
