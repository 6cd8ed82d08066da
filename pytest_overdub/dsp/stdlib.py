"""The ``dsp`` namespace handed to song-defined kernels (``ctx.dsp``, also the global ``dsp``).

It holds no code of its own: every name is a re-export of the one copy of a primitive in
``pytest_overdub/dsp/*.py`` (the same code the house devices use), so a kernel built from the stdlib
sounds exactly like the house building block it names. Names come from each module's ``__all__`` (or,
without one, its public functions and classes), plus the short aliases docs/devices.md lists
(``db``/``to_db``, ``rng``) where their targets exist.

A module that is missing or fails to import is left out, and :func:`missing_modules` says which, so a
kernel sees only what really exists. The namespace is read-only and built once per process.

Example::

    >>> from pytest_overdub.dsp.stdlib import stdlib
    >>> float(stdlib().mtof(69))
    440.0
"""

from __future__ import annotations

import inspect
from importlib import import_module
from types import ModuleType
from typing import Any

#: The modules re-exported, in order (a later module does not override an earlier name).
MODULES = ("levels", "signals", "filters", "delay", "dynamics", "envelopes")

#: docs/devices.md names -> the name in the modules above.
ALIASES = {
    "db": "db_to_gain",
    "to_db": "gain_to_db",
    "rng": "rng_for",
}

_STDLIB: "DspStdlib | None" = None
_MISSING: dict[str, str] = {}


class DspStdlib:
    """A read-only namespace of stdlib functions; ``dir(dsp)`` lists them, ``dsp.names()`` too."""

    __slots__ = ("_names", "_origin")

    def __init__(self, names: dict[str, Any], origin: dict[str, str]):
        object.__setattr__(self, "_names", dict(names))
        object.__setattr__(self, "_origin", dict(origin))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._names[name]
        except KeyError:
            raise AttributeError(f"dsp has no {name!r}; it has: {', '.join(sorted(self._names))}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the dsp stdlib is read-only")

    def __dir__(self) -> list[str]:
        return sorted(self._names)

    def names(self) -> list[str]:
        """Every name a kernel can use, sorted."""
        return sorted(self._names)

    def origin(self, name: str) -> str:
        """Where a name comes from: ``"pytest_overdub.dsp.signals.mtof"``."""
        return self._origin[name]

    def __repr__(self) -> str:
        return f"<dsp stdlib: {len(self._names)} names>"


def _public(mod: ModuleType) -> list[str]:
    declared = getattr(mod, "__all__", None)
    if declared is not None:
        return list(declared)
    return [n for n, v in vars(mod).items()
            if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
            and getattr(v, "__module__", None) == mod.__name__]


def build_stdlib() -> DspStdlib:
    """Import the dsp modules and collect their public names (missing modules are recorded)."""
    names: dict[str, Any] = {}
    origin: dict[str, str] = {}
    _MISSING.clear()
    for short in MODULES:
        modname = f"{__package__}.{short}"
        try:
            mod = import_module(modname)
        except ImportError as e:
            _MISSING[short] = f"{type(e).__name__}: {e}"
            continue
        for name in _public(mod):
            if name in names or not hasattr(mod, name):
                continue
            names[name] = getattr(mod, name)
            origin[name] = f"{modname}.{name}"
    for alias, target in ALIASES.items():
        if target in names and alias not in names:
            names[alias] = names[target]
            origin[alias] = origin[target]
    return DspStdlib(names, origin)


def stdlib() -> DspStdlib:
    """The process's stdlib namespace (built on first use)."""
    global _STDLIB
    if _STDLIB is None:
        _STDLIB = build_stdlib()
    return _STDLIB


def missing_modules() -> dict[str, str]:
    """dsp modules that could not be imported when the stdlib was built: name -> reason."""
    stdlib()
    return dict(_MISSING)


__all__ = ["DspStdlib", "build_stdlib", "stdlib", "missing_modules", "MODULES", "ALIASES"]
