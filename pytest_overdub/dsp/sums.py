"""Sums of products in one fixed order.

``np.dot`` of two long vectors calls BLAS, and OpenBLAS splits a long dot product across threads (and
picks its kernel by CPU): the rounding of the sum then depends on how many cores the machine has, and a
measured value changes in its last bits from one machine to another (a stereo correlation read with one
thread and with two differed by 1e-15 here). :func:`dot` sums with ``np.einsum``'s own loop, in one
thread, as fast as single-threaded BLAS, so a value is the same wherever it is measured."""

from __future__ import annotations

import numpy as np


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """``sum(a * b)`` of two equal-length 1-D arrays, in one thread's fixed order (see the module)."""
    return float(np.einsum("i,i->", a, b))
