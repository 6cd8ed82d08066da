"""What a kernel may import: the allow-list of ``docs/devices.md``, enforced when the kernel imports.

A kernel's module namespace gets its own ``__builtins__`` (:func:`kernel_builtins`) whose ``__import__``
refuses any module not listed here with an ``ImportError`` that names it and the list, so ``import os``
fails while the kernel loads, with a clear fault. The same namespace is used in-process and in the
sandbox, so a kernel behaves the same either way. numpy's and scipy's own imports (lazy ones included)
go through their modules' builtins and are unaffected.

This is the kernel contract, **not** a boundary: Python offers ways around it (every module object
carries the real builtins). What confines a kernel is the sandbox's layers (:mod:`.sandbox`): it cannot
read, write, connect, start, signal or reach what they forbid, whatever it imports.
"""

from __future__ import annotations

import builtins
import sys
from typing import Any

#: Standard modules a kernel may import (any submodule of them too).
STDLIB = ("math", "cmath", "itertools", "functools", "collections", "dataclasses", "bisect", "heapq",
          "fractions", "statistics", "operator", "copy", "numbers", "enum", "typing", "__future__")
#: scipy's subpackages a kernel may import (any submodule of them too); all of numpy is allowed.
SCIPY = ("signal", "fft", "special", "interpolate", "ndimage")
ALLOWED_TEXT = ", ".join(["numpy", "scipy (" + ", ".join(f"scipy.{m}" for m in SCIPY) + ")", *STDLIB])


def import_allowed(name: str) -> bool:
    """True when a kernel may import the module ``name`` (dotted)."""
    parts = name.split(".")
    if parts[0] in ("numpy", *STDLIB):
        return True
    return parts[0] == "scipy" and (len(parts) == 1 or parts[1] in SCIPY)


def _refuse(name: str) -> ImportError:
    return ImportError(f"import of {name!r} is not allowed in a kernel; allowed: {ALLOWED_TEXT}", name=name)


def _guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0):
    if level:
        raise ImportError(f"relative import (of {name!r}) is not allowed in a kernel; allowed: {ALLOWED_TEXT}")
    if not isinstance(name, str) or not import_allowed(name):
        raise _refuse(str(name))
    if fromlist:
        # ``from scipy import io`` imports a submodule: check it first (an attribute such as np.sin is fine).
        builtins.__import__(name, globals, locals, (), 0)
        module = sys.modules[name]
        for item in fromlist:
            full = f"{name}.{item}"
            if not isinstance(item, str) or ((full in sys.modules or item not in vars(module))
                                             and not import_allowed(full)):
                raise _refuse(full)
    return builtins.__import__(name, globals, locals, fromlist, level)


def kernel_builtins() -> dict:
    """A fresh copy of the builtins for one kernel's namespace, with the allow-list's ``__import__``
    (fresh, so what one kernel does to its builtins reaches no other)."""
    ns = dict(vars(builtins))
    ns["__import__"] = _guarded_import
    return ns
